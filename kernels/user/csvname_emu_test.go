package user

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
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
// the source spells them, run on the MSL emulation against a reference
// that reads dims["n"], and go to the CSV as dim.n (flag.status) beside
// the sample count n, from which the row reads back. A broken twin (the
// last element left out) is a mismatch.
func TestDimNamedLikeACSVColumn(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	opt.MaxRows = 64
	var csvPath string
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
		cols := sink.ColumnsFor([]profiler.Spec{s})
		csvPath = filepath.Join(t.TempDir(), "rows.csv")
		w, err := sink.OpenCSV(csvPath, cols, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(res); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if h := strings.Join(cols.Header(), ","); !strings.Contains(h, ",WG,dim.n,flag.status,n,") {
			t.Errorf("header %s", h)
		}
		rows, err := sink.ReadCSV(csvPath)
		if err != nil || len(rows) != 1 {
			t.Fatalf("read back: %v", err)
		}
		if got := rows[0]; got.Spec.Key() != s.Key() || got.Spec.Dims["n"] != 77 || got.Stats.N != res.Stats.N || got.Stats.N == 0 {
			t.Errorf("read back %s with %d samples, want %s with %d", got.Spec.Key(), got.Stats.N, s.Key(), res.Stats.N)
		}
	}
}
