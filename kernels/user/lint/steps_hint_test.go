package lint

import (
	"strings"
	"testing"
)

// A name NVRTC calls undefined that the source uses as a value and never
// #defines is a macro the build passes (RWKV's -D_N_=64): the hint names
// it and the manifest's two ways to give it; a function the source calls,
// a name the source #defines and a clean log get no hint.
func TestBuildMacroHint(t *testing.T) {
	src := "#define TILE 16\n__global__ void k(float* y) {\n  __shared__ float r[_N_], w[_N_];\n  float s[Tmax];\n  y[0] = helper(r[0]) + TILE;\n}\n"
	for _, c := range []struct{ log, want string }{
		{`k.cu:3: error: identifier "_N_" is undefined` + "\n" + `k.cu:4: error: identifier "Tmax" is undefined` + "\n" + `k.cu:3: error: identifier "_N_" is undefined`,
			"_N_, Tmax: no file the source includes defines them: a macro its build passes (nvcc -D_N_=…)? give them in kernel.yaml as a knob (`knobs: {_N_: {values: [64], shape: true}}`"},
		{`k.cu:4: error: identifier "Tmax" is undefined`, "Tmax: no file the source includes defines it: a macro its build passes (nvcc -DTmax=…)? give it in kernel.yaml as a knob (`knobs: {Tmax:"},
		{`k.cu:5: error: identifier "helper" is undefined`, ""},
		{`k.cu:5: error: identifier "TILE" is undefined`, ""},
		{`k.cu:5: error: expected a ";"`, ""},
	} {
		got := buildMacroHint(c.log, src)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("log %q:\ngot  %q\nwant %q", c.log, got, c.want)
		}
	}
}
