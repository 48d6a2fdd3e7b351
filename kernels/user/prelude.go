package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// withMacros makes the text a backend compiles for a user source: the
// spec's macros as #define lines in front (not compiler -D options, which
// would also reach the compiler's implicit headers, where T or N may well
// be template parameters), then `#line 1 "file"` so that the compiler's
// messages name the user's file and line. Each `#include <…>` of a system
// header is wrapped so the macros are hidden from it (push_macro, #undef,
// include, pop_macro) and followed by a #line that keeps the numbering.
func withMacros(code, file string, macros []profiler.Macro) string {
	var b strings.Builder
	for _, m := range macros {
		fmt.Fprintf(&b, "#define %s %s\n", m.Name, m.Value)
	}
	fmt.Fprintf(&b, "#line 1 %q\n", file)
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	for i, l := range lines {
		if !systemInclude(l) || len(macros) == 0 {
			b.WriteString(l)
			b.WriteString("\n")
			continue
		}
		for _, m := range macros {
			fmt.Fprintf(&b, "#pragma push_macro(%q)\n#undef %s\n", m.Name, m.Name)
		}
		b.WriteString(l)
		b.WriteString("\n")
		for _, m := range macros {
			fmt.Fprintf(&b, "#pragma pop_macro(%q)\n", m.Name)
		}
		fmt.Fprintf(&b, "#line %d %q\n", i+2, file)
	}
	return b.String()
}

func systemInclude(l string) bool {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, "#") {
		return false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "include") {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(t[len("include"):]), "<")
}
