package user

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// csvNameSource names its length n, as most kernels do; n is also the CSV's
// sample-count column.
const csvNameSource = `#include <metal_stdlib>
using namespace metal;
kernel void twice(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) y[i] = 2.0f * x[i];
}
`

const csvNameManifest = `name: t_dim_n
sources: {metal: k.metal}
dtypes: [f32]
knobs: {WG: {values: [32, 64], default: 64}}
dims: {n: {default: 100}}
flags: {status: false}
buffers:
  - {name: x, dtype: f32, shape: [n], init: "normal(0, 1)"}
  - {name: y, dtype: f32, shape: [n], out: true}
dispatches:
  - entry: twice
    grid: ["cdiv(n, WG)", 1, 1]
    threads: [WG, 1, 1]
    args: [x, y, n]
check: {python: ref.py}
`

const csvNameRef = `def reference(inputs, dims):
    assert dims["n"] == len(inputs["x"]) and dims["status"] is False, dims
    return {"y": 2.0 * inputs["x"]}
`

// A dim named n (and a flag named status), names of CSV columns, load as
// the source spells them and run on the MSL emulation against a reference
// that reads dims["n"] (the CSV writes them as dim.n and flag.status:
// profiler/sink's tests, and the CLI's with a sweep, --resume and merge).
// A broken twin (the last element left out) is a mismatch.
func TestDimNamedLikeACSVColumn(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	opt.MaxRows = 64
	for _, c := range []struct {
		name, src string
		want      profiler.Status
	}{
		{"t_dim_n", csvNameSource, profiler.StatusOK},
		{"t_dim_n_broken", strings.Replace(csvNameSource, "i < n", "i + 1 < n", 1), profiler.StatusMismatch},
	} {
		y := strings.Replace(csvNameManifest, "name: t_dim_n", "name: "+c.name, 1)
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.metal": c.src, "ref.py": csvNameRef}))
		if err != nil {
			t.Fatal(err)
		}
		if err := Install(f); err != nil {
			t.Fatal(err)
		}
		s := profiler.Spec{Kernel: f.Name(), Dims: map[string]int{"n": 77}}.WithDefaults(f.Schema())
		res := run.NewRunner(eb).Run(context.Background(), s, opt, nil)
		if res.Status != c.want {
			t.Fatalf("%s: status %s, want %s: %s %+v", c.name, res.Status, c.want, res.Error, res.Verdict)
		}
		if c.want != profiler.StatusOK {
			continue
		}
		if res.Spec.Dims["n"] != 77 || res.Stats.N == 0 {
			t.Errorf("%s: dims %v, %d samples", c.name, res.Spec.Dims, res.Stats.N)
		}
	}
}
