package profiler

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ErrorSite finds where an error message points: the first file:line of a
// line that says "error" (else the first file:line at all). It reads the
// forms compilers and the manifest loader write: NVRTC's file.cu(30),
// clang's and Metal's file.metal:30:5, a manifest's kernel.yaml:12:3.
func ErrorSite(msg string) (file string, line int, text string, ok bool) {
	var first struct {
		file string
		line int
		text string
	}
	for _, l := range strings.Split(msg, "\n") {
		for _, m := range siteRE.FindAllStringSubmatch(l, -1) {
			f, n := m[1], m[2]
			if f == "" {
				f, n = m[3], m[4]
			}
			num, err := strconv.Atoi(n)
			if err != nil || num < 1 {
				continue
			}
			if strings.Contains(strings.ToLower(l), "error") {
				return f, num, strings.TrimSpace(l), true
			}
			if first.file == "" {
				first.file, first.line, first.text = f, num, strings.TrimSpace(l)
			}
			break
		}
	}
	if first.file != "" {
		return first.file, first.line, first.text, true
	}
	return "", 0, "", false
}

// siteRE matches "path/file.ext(LINE)" or "path/file.ext:LINE".
var siteRE = regexp.MustCompile(`([^\s():"'<>]+\.[A-Za-z][A-Za-z0-9]*)\((\d+)\)|([^\s():"'<>]+\.[A-Za-z][A-Za-z0-9]*):(\d+)`)

// SiteLabel is "softmax.cu:30" for an error that names a file and line
// (the file's base name), "" for one that names none.
func SiteLabel(msg string) string {
	f, n, _, ok := ErrorSite(msg)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d", filepath.Base(f), n)
}
