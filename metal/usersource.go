package metal

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// AssembleUserSource makes the one string newLibraryWithSource: compiles
// for a user kernel's own source. Metal's runtime compiler has no include
// path, so each `#include "name"` or `#include <name>` of one of the
// program's Includes is pasted
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
	cur := 1 // the line number the next line has
	for _, l := range lines {
		if n, f, ok := lineDirective(l); ok {
			cur = n
			if f != "" {
				file = f
			}
			b.WriteString(l)
			b.WriteString("\n")
			continue
		}
		name, ok := includedName(l)
		if body, known := incs[name]; ok && known {
			if !done[name] {
				done[name] = true
				if err := inline(b, name, body, incs, done, depth+1); err != nil {
					return err
				}
			}
			fmt.Fprintf(b, "#line %d %q\n", cur+1, file)
			cur++
			continue
		}
		b.WriteString(l)
		b.WriteString("\n")
		cur++
	}
	return nil
}

// lineDirective reads `#line N` or `#line N "file"`.
func lineDirective(l string) (int, string, bool) {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "#") {
		return 0, "", false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "line") {
		return 0, "", false
	}
	var n int
	var f string
	fields := strings.Fields(t[len("line"):])
	if len(fields) == 0 {
		return 0, "", false
	}
	if _, err := fmt.Sscan(fields[0], &n); err != nil {
		return 0, "", false
	}
	if len(fields) > 1 {
		f = strings.Trim(strings.Join(fields[1:], " "), "\"")
	}
	return n, f, true
}

// includedName returns name for a line `#include "name"` or
// `#include <name>`. The caller inlines only the names the program's
// Includes hold (files mltop found beside the source or in include_dirs),
// so `<metal_stdlib>` stays for the compiler while a toolkit header such as
// PyTorch's `<c10/metal/common.h>` reaches newLibraryWithSource inlined.
func includedName(l string) (string, bool) {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "#") {
		return "", false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "include") {
		return "", false
	}
	t = strings.TrimSpace(t[len("include"):])
	if len(t) < 2 {
		return "", false
	}
	closing := map[byte]byte{'"': '"', '<': '>'}[t[0]]
	if closing == 0 {
		return "", false
	}
	end := strings.IndexByte(t[1:], closing)
	if end < 0 {
		return "", false
	}
	return t[1 : 1+end], true
}
