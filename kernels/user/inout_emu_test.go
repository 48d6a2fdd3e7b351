package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// axpyInPlaceMetal is y = a·y + x in place: a kernel whose every launch
// must start from y's initial values.
const axpyInPlaceMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void axpy(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant float& a [[buffer(2)]],
    constant int& n [[buffer(3)]],
    uint i [[thread_position_in_grid]]) {
  if (i < uint(n)) {
    y[i] = a * y[i] + x[i];
  }
}
`

const axpyInPlaceYAML = `name: t_axpy_in_place
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 300}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], inout: true, init: "normal(0, 1)"}
dispatches:
  - {entry: axpy, grid: [N], threads: [1], args: [x, y, 2.0, N]}
check: {kernel: naive/kernel.yaml}
`

// The check kernel: one thread, the same in-place update.
const naiveAxpyMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void naive_axpy(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& n [[buffer(2)]],
    uint gid [[thread_position_in_grid]]) {
  if (gid != 0) {
    return;
  }
  for (int i = 0; i < n; i++) {
    y[i] = 2.0f * y[i] + x[i];
  }
}
`

const naiveAxpyYAML = `name: t_naive_axpy
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 300}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], inout: true, init: "normal(0, 1)"}
dispatches:
  - {entry: naive_axpy, grid: [1], threads: [1], args: [x, y, N]}
check: none
`

// An inout buffer on the MSL emulation with the real Runner: every launch
// starts from its initial values, the verified one and the last timed one
// the check after timing sees (the emulation's Time runs each rep, as a
// GPU's does; it used to run none, and the check after timing saw the
// restored initial values).
// The same buffer as a plain output initialised once (`out: true` with
// init) keeps what each launch wrote, which the check after timing
// catches.
func TestInoutRestoredOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, yaml string
		want       profiler.Status
	}{
		{"inout", axpyInPlaceYAML, profiler.StatusOK},
		{"not restored", strings.Replace(axpyInPlaceYAML, "inout: true", "out: true", 1), profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(c.yaml, "t_axpy_in_place", "t_axpy_in_place_"+strings.ReplaceAll(c.name, " ", "_"), 1)
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": y, "s.metal": axpyInPlaceMetal,
				"naive/kernel.yaml": naiveAxpyYAML, "naive/s.metal": naiveAxpyMetal}, nil, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
