package metal

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// AssembleUserSource makes the one string newLibraryWithSource: compiles
// for a user kernel's own source. Metal's runtime compiler has no include
// path, so each `#include "name"` of one of the program's Includes is pasted
// in place (once), and #line directives keep the compiler's log pointing at
// the user's own files and lines.
func AssembleUserSource(p profiler.Program) (string, error) {
	var b strings.Builder
	done := map[string]bool{}
	if err := inline(&b, p.File, p.Code, p.Includes, done, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func inline(b *strings.Builder, file, code string, incs map[string]string, done map[string]bool, depth int) error {
	if depth > 16 {
		return fmt.Errorf("%s: includes nest more than 16 deep (an include cycle?)", file)
	}
	fmt.Fprintf(b, "#line 1 %q\n", file)
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	for i, l := range lines {
		name, ok := quotedInclude(l)
		if body, known := incs[name]; ok && known {
			if !done[name] {
				done[name] = true
				if err := inline(b, name, body, incs, done, depth+1); err != nil {
					return err
				}
			}
			fmt.Fprintf(b, "#line %d %q\n", i+2, file)
			b.WriteString("\n")
			continue
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	return nil
}

// quotedInclude returns name for a line `#include "name"`.
func quotedInclude(l string) (string, bool) {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "#") {
		return "", false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "include") {
		return "", false
	}
	t = strings.TrimSpace(t[len("include"):])
	if len(t) < 2 || t[0] != '"' {
		return "", false
	}
	end := strings.IndexByte(t[1:], '"')
	if end < 0 {
		return "", false
	}
	return t[1 : 1+end], true
}
