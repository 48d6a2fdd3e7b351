package all_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// templateParam finds the names of template parameters ("int K", "typename T")
// inside "template <...>" lists.
var (
	templateList  = regexp.MustCompile(`template\s*<([^>]*)>`)
	templateParam = regexp.MustCompile(`(?:int|unsigned|typename|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)
)

// A family's macros (-DK=128, -DD=64, …) are defined before the shared
// headers are read, so a helper template parameter named like one of them is
// rewritten by the preprocessor and that family no longer compiles (a
// parameter named K once broke gated_delta_chunk on CUDA). No header
// template parameter may share a name with any family's macro.
func TestHeaderTemplateParamsAvoidFamilyMacros(t *testing.T) {
	macros := map[string]string{} // name → a family that passes it
	for _, dev := range []profiler.DeviceInfo{kittest.H100Full, kittest.M3Max} {
		for _, f := range profiler.Families(false) {
			for _, dt := range f.Schema().DTypes {
				_, s, err := profiler.Resolve(profiler.Spec{Kernel: f.Name(), DType: dt}, dev)
				if err != nil {
					continue
				}
				p, err := f.Plan(s, dev)
				if err != nil {
					continue
				}
				for _, d := range append(append([]profiler.Dispatch{}, p.Setup...), p.Dispatches...) {
					for _, m := range d.Program.Macros {
						macros[m.Name] = f.Name()
					}
				}
			}
		}
	}
	for _, must := range []string{"K", "D", "BQ", "WG", "DTYPE"} {
		if macros[must] == "" {
			t.Fatalf("no family passes macro %s: the macro collection is broken (%v)", must, macros)
		}
	}
	for _, dir := range []string{"cuda", "metal"} {
		headers, err := shaders.Headers(dir)
		if err != nil || len(headers) == 0 {
			t.Fatalf("%s headers: %v (%d)", dir, err, len(headers))
		}
		names := make([]string, 0, len(headers))
		for n := range headers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, list := range templateList.FindAllStringSubmatch(headers[n], -1) {
				for _, p := range templateParam.FindAllStringSubmatch(list[1], -1) {
					if fam, clash := macros[p[1]]; clash {
						t.Errorf("shaders/%s/%s: template parameter %s is also a macro of %s; rename the parameter (%s)", dir, n, p[1], fam, strings.TrimSpace(list[0]))
					}
				}
			}
		}
	}
}
