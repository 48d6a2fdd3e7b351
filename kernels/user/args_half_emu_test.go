package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// haxpyMetal takes its scale as `constant half&`, as NVIDIA's haxpy takes
// `half a`.
const haxpyMetal = `#include <metal_stdlib>
using namespace metal;

kernel void haxpy(device const half* x [[buffer(0)]],
                  device const half* y [[buffer(1)]],
                  device half* z [[buffer(2)]],
                  constant half& a [[buffer(3)]],
                  constant int& n [[buffer(4)]],
                  uint i [[thread_position_in_grid]]) {
    if ((int)i < n) z[i] = a * x[i] + y[i];
}
`

const haxpyMetalYAML = `name: t_haxpy_metal
sources: {metal: k.metal}
dtypes: [f32]
dims: {N: {default: 1000}}
values: {a: 2.1}
buffers:
  - {name: x, dtype: f16, shape: [N], init: "normal(0, 1)"}
  - {name: y, dtype: f16, shape: [N], init: "normal(0, 1)"}
  - {name: z, dtype: f16, shape: [N], out: true}
dispatches:
  - {entry: haxpy, grid: ["cdiv(N, 64)"], threads: [64], args: [x, y, z, a, N]}
check: {python: ref.py}
`

const haxpyMetalRef = `def reference(inputs, dims):
    return {"z": dims["a"] * inputs["x"].astype("float64") + inputs["y"].astype("float64")}
`

// A Metal kernel taking `constant half& a` runs on the MSL emulation and
// matches its reference; the twin that scales by a + 1 is a mismatch.
func TestHalfScalarOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, from, to string
		want           profiler.Status
	}{
		{"ok", "", "", profiler.StatusOK},
		{"scale off by one", "a * x[i]", "(a + half(1)) * x[i]", profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(haxpyMetal, c.from, c.to, 1)
			if c.from != "" && src == haxpyMetal {
				t.Fatalf("%q is not in the kernel", c.from)
			}
			name := "t_haxpy_metal_" + strings.ReplaceAll(c.name, " ", "_")
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": strings.Replace(haxpyMetalYAML, "t_haxpy_metal", name, 1), "k.metal": src, "ref.py": haxpyMetalRef}, nil, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
