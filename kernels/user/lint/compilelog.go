package lint

import (
	"regexp"
	"strings"
)

// This file tidies what check prints of NVRTC's logs: a log the same at
// several dtypes is printed once, naming them; NVRTC's "function … was
// declared but never referenced" (#177-D) is dropped.

// unusedFunction is NVRTC's #177-D for a function. A program's unused
// static inline __device__ helpers are common (a header of helpers, a
// variant the manifest does not pick) and nvcc, compiling the whole
// program, does not warn of them. The same warning for a variable stays:
// mltop blanks the constants only host code reads, so an unused variable
// left is the source's own (a table no kernel reads).
var unusedFunction = regexp.MustCompile(`warning #177-D: function "[^"]*" was declared but never referenced`)

// withoutUnusedFunctions is an NVRTC log without its #177-D warnings for
// functions ("" when nothing else is left). Entries are separated by
// blank lines; NVRTC's closing remark on suppressing warnings goes with
// the last warning.
func withoutUnusedFunctions(log string) string {
	var kept []string
	for _, entry := range strings.Split(strings.ReplaceAll(strings.TrimSpace(log), "\r\n", "\n"), "\n\n") {
		if e := strings.TrimSpace(entry); e != "" && !unusedFunction.MatchString(e) {
			kept = append(kept, entry)
		}
	}
	if len(kept) == 1 && strings.HasPrefix(strings.TrimSpace(kept[0]), "Remark:") {
		return ""
	}
	return strings.Join(kept, "\n\n")
}

// dtypePrefix is the "CUDA f16: " or "Metal bf16: " a compile finding
// starts with.
var dtypePrefix = regexp.MustCompile(`^(CUDA|Metal) ([a-z0-9]+): `)

// mergeDTypes merges the compile errors and warnings (NVRTC's logs) that
// differ only in their dtype (same level, file and text after
// "CUDA <dtype>: ") into the first of them, which then names every
// dtype: "CUDA f32, f16, bf16: …". Notes (what compiled) stay per dtype.
func mergeDTypes(fs []Finding) []Finding {
	type key struct {
		level      Level
		file, lang string
		rest       string
	}
	var out []Finding
	first := map[key]int{}
	for _, f := range fs {
		m := dtypePrefix.FindStringSubmatch(f.Msg)
		if m == nil || f.Step != StepCompile || f.Level == Note {
			out = append(out, f)
			continue
		}
		k := key{f.Level, f.File, m[1], f.Msg[len(m[0]):]}
		if i, ok := first[k]; ok {
			out[i].Msg = strings.Replace(out[i].Msg, ": ", ", "+m[2]+": ", 1)
			continue
		}
		first[k] = len(out)
		out = append(out, f)
	}
	return out
}
