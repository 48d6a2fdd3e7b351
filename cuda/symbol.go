package cuda

import (
	"fmt"
	"strings"
)

// globalSymbolNames are the names under which a module may hold the global
// a C++ name designates, in the order they are tried: the plain name
// (a file-scope variable, or extern "C"), the Itanium mangling of a
// namespace member (ns::tab → _ZN2ns3tabE), then the same for a variable of
// internal linkage (static: _ZL3tab, _ZN2nsL3tabE), which NVRTC may keep
// under that name. A variable template or an anonymous namespace is not
// covered: its manifest names the mangled symbol itself.
func globalSymbolNames(cxx string) []string {
	cxx = strings.TrimPrefix(strings.TrimSpace(cxx), "::")
	parts := strings.Split(cxx, "::")
	if strings.HasPrefix(cxx, "_Z") || len(parts) == 1 {
		if strings.HasPrefix(cxx, "_Z") {
			return []string{cxx}
		}
		return []string{cxx, fmt.Sprintf("_ZL%d%s", len(cxx), cxx)}
	}
	var scope strings.Builder
	for _, p := range parts[:len(parts)-1] {
		fmt.Fprintf(&scope, "%d%s", len(p), p)
	}
	last := parts[len(parts)-1]
	return []string{
		fmt.Sprintf("_ZN%s%d%sE", scope.String(), len(last), last),
		fmt.Sprintf("_ZN%sL%d%sE", scope.String(), len(last), last),
	}
}
