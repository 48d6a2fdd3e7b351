package cuda

import (
	"regexp"
)

// NVRTC (EDG's front end) writes diagnostics as `file.cu(30): error: …`,
// which editors and terminals do not recognise as a location. These
// patterns find that shape at the start of a line, and the "at line 30 of
// file.cu" of template-instantiation notes.
var (
	nvrtcDiag = regexp.MustCompile(`(?m)^([^\s():][^():\n]*)\((\d+)\): ((?:catastrophic )?error|warning|remark|note|internal error)`)
	nvrtcAt   = regexp.MustCompile(`\bat line (\d+) of ("?)([^\s"]+)("?)`)
)

// RewriteLog turns NVRTC's `file.cu(30): error …` into the
// `file.cu:30: error …` that editors, terminals and compilers' other logs
// use (Metal's are already file:line:col), and "at line 30 of file.cu" into
// "at file.cu:30". Everything else is left as it is.
func RewriteLog(log string) string {
	log = nvrtcDiag.ReplaceAllString(log, "$1:$2: $3")
	return nvrtcAt.ReplaceAllString(log, "at $3:$1")
}
