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

// rowSumsMetal sums each of the rows rows of x, of n elements each, into
// y; the manifest's row length n is the knob COLS.
const rowSumsMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void row_sums(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& rows [[buffer(2)]],
    constant int& n [[buffer(3)]],
    uint gid [[thread_position_in_grid]]) {
  if (gid >= uint(rows)) {
    return;
  }
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    s += x[gid * n + i];
  }
  y[gid] = s;
}
`

// rowSumsYAML's COLS is in x's shape (through a value) and y's (directly)
// without `shape: true`; y's length does not depend on it.
const rowSumsYAML = `name: t_row_sums
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  COLS: {values: [2, 5], default: 2}
dims:
  N: {default: 7}
values:
  C: COLS
buffers:
  - {name: x, dtype: f32, shape: [N, C]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: row_sums, grid: [N], threads: [1], args: [x, y, N, COLS]}
check: {kernel: naive/kernel.yaml}
`

// The check kernel: one thread sums every row.
const naiveRowSumsMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void naive_row_sums(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& rows [[buffer(2)]],
    constant int& n [[buffer(3)]],
    uint gid [[thread_position_in_grid]]) {
  if (gid != 0) {
    return;
  }
  for (int r = 0; r < rows; r++) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) {
      s += x[r * n + i];
    }
    y[r] = s;
  }
}
`

const naiveRowSumsYAML = `name: t_naive_row_sums
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  COLS: {values: [2, 5], default: 2, shape: true}
dims:
  N: {default: 7}
buffers:
  - {name: x, dtype: f32, shape: [N, COLS]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: naive_row_sums, grid: [1], threads: [1], args: [x, y, N, COLS]}
check: none
`

func rowSumsFiles(yaml string) map[string]string {
	return map[string]string{"kernel.yaml": yaml, "s.metal": rowSumsMetal, "naive/kernel.yaml": naiveRowSumsYAML, "naive/s.metal": naiveRowSumsMetal}
}

// A knob in a buffer's shape is a shape knob though the manifest does not
// say `shape: true`: its schema says so, each of its values gets its own
// inputs and shape key, and ImpliedShapeKnobs names it once, with the
// first buffer whose shape uses it.
func TestKnobInShapeIsShapeKnob(t *testing.T) {
	f, err := Load(usertest.Write(t, rowSumsFiles(rowSumsYAML)))
	if err != nil {
		t.Fatal(err)
	}
	if k := f.Schema().Knobs[0]; k.Name != "COLS" || !k.Shape {
		t.Errorf("knob %+v, want COLS a shape knob", k)
	}
	got := f.ImpliedShapeKnobs()
	if len(got) != 1 || got[0].Knob != "COLS" || got[0].Buffer != "x" || got[0].Line != 11 {
		t.Errorf("implied shape knobs %+v, want COLS by x at line 11", got)
	}
	marked, err := Load(usertest.Write(t, rowSumsFiles(strings.Replace(rowSumsYAML, "default: 2}", "default: 2, shape: true}", 1))))
	if err != nil {
		t.Fatal(err)
	}
	if got := marked.ImpliedShapeKnobs(); len(got) != 0 {
		t.Errorf("a knob marked shape: true is reported as implied: %+v", got)
	}
}

// On the MSL emulation with one Runner, COLS=2 then COLS=5 (and back):
// each value's inputs and reference are its own (one kept for COLS=2
// would sum other elements than COLS=5's rows have), so each run's rows
// check against the check kernel.
func TestKnobInShapeRunsPerValue(t *testing.T) {
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	f, err := Load(usertest.Write(t, rowSumsFiles(rowSumsYAML)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(f); err != nil {
		t.Fatal(err)
	}
	r := run.NewRunner(eb)
	for _, cols := range []int{2, 5, 2} {
		s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Knobs: map[string]int{"COLS": cols}}.WithDefaults(f.Schema())
		res := r.Run(context.Background(), s, mslemu.Options(), nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("COLS=%d: status %s (error %q) %+v", cols, res.Status, res.Error, res.Verdict)
		}
	}
}
