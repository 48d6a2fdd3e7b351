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

// lastGroupSumMetal is y[0] += sum(x) as llm.c's layernorm_backward_kernel10
// finishes its reduction: each threadgroup sums its slice of x into
// partials[group], takes a ticket from a device counter, and the last
// group to arrive adds the partials to y. The counter must hold `first`
// when the launch starts (0 in the usual kernel). (On a GPU a device
// memory fence belongs between the partial's store and the ticket; the
// emulation runs the groups one after the other.)
const lastGroupSumMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void last_group_sum(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    device atomic_uint* counter [[buffer(2)]],
    device float* partials [[buffer(3)]],
    constant int& n [[buffer(4)]],
    constant uint& first [[buffer(5)]],
    uint group [[threadgroup_position_in_grid]],
    uint groups [[threadgroups_per_grid]],
    uint tid [[thread_index_in_threadgroup]],
    uint nt [[threads_per_threadgroup]]) {
  threadgroup float sums[256];
  float s = 0.0f;
  for (int i = int(group * nt + tid); i < n; i += int(groups * nt)) {
    s += x[i];
  }
  sums[tid] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid == 0) {
    float mine = 0.0f;
    for (uint k = 0; k < nt; k++) {
      mine += sums[k];
    }
    partials[group] = mine;
    uint ticket = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
    if (ticket == first + groups - 1) {
      float total = 0.0f;
      for (uint g = 0; g < groups; g++) {
        total += partials[g];
      }
      y[0] += total;
    }
  }
}
`

const lastGroupSumYAML = `name: t_last_group_sum
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  WG: {values: [32, 64], default: 32}
dims:
  N: {default: 1000}
  groups: {default: 5}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [1], inout: true, init: "normal(0, 1)", tol: {atol: 1e-3, rtol: 1e-4}}
  - {name: counter, dtype: i32, shape: [1], scratch: true}
  - {name: partials, dtype: f32, shape: [groups], scratch: true, init: poison}
dispatches:
  - entry: last_group_sum
    grid: [groups]
    threads: WG
    args: [x, y, counter, partials, N, 0]
check: {kernel: naive/kernel.yaml}
`

// The check kernel: one thread adds x to y.
const naiveSumMetal = `#include <metal_stdlib>
using namespace metal;

[[kernel]] void naive_sum(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& n [[buffer(2)]],
    uint gid [[thread_position_in_grid]]) {
  if (gid != 0) {
    return;
  }
  float total = 0.0f;
  for (int i = 0; i < n; i++) {
    total += x[i];
  }
  y[0] += total;
}
`

const naiveSumYAML = `name: t_naive_sum
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 1000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [1], inout: true, init: "normal(0, 1)"}
dispatches:
  - {entry: naive_sum, grid: [1], threads: [1], args: [x, y, N]}
check: none
`

// A block counter in a scratch buffer, on the MSL emulation with the real
// Runner and a check kernel: right with `scratch: true` (the counter is 0,
// or its init, at every launch: the verified one and, through the check
// after timing, the last timed one). The same counter kept across
// launches, a counter whose init the kernel does not expect, and a kernel
// that reads its own partial before writing it (right on every launch
// after the first if the partials were kept, NaN while they are poison at
// every launch) are caught.
func TestScratchCounterOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	opt.Stop.MinSamples = 3
	const counter = "  - {name: counter, dtype: i32, shape: [1], scratch: true}"
	for _, c := range []struct {
		name      string
		edits     [][2]string // replacements in the manifest
		srcEdits  [][2]string // and in the source
		want      profiler.Status
		wantError string
	}{
		{"scratch", nil, nil, profiler.StatusOK, ""},
		{"restored to its init", [][2]string{{counter, "  - {name: counter, dtype: i32, shape: [1], scratch: true, init: ones}"}, {"N, 0]", "N, 1]"}}, nil, profiler.StatusOK, ""},
		{"counter kept across launches", [][2]string{{counter, "  - {name: counter, dtype: i32, shape: [1], init: zeros}"}}, nil, profiler.StatusMismatch, "wrong after the timed launches"},
		{"kernel expects a counter at 1", [][2]string{{"N, 0]", "N, 1]"}}, nil, profiler.StatusMismatch, "1 of 1 checked elements"},
		{"own partial read before written", nil, [][2]string{
			{"    partials[group] = mine;\n", ""},
			{"      y[0] += total;\n", "      y[0] += total;\n    }\n    {\n      partials[group] = mine;\n"}}, profiler.StatusMismatch, "y[0]=NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			y, src := lastGroupSumYAML, lastGroupSumMetal
			y = strings.Replace(y, "t_last_group_sum", "t_last_group_sum_"+strings.ReplaceAll(c.name, " ", "_"), 1)
			for _, e := range c.edits {
				if !strings.Contains(y, e[0]) {
					t.Fatalf("test setup: %q not in the manifest", e[0])
				}
				y = strings.Replace(y, e[0], e[1], 1)
			}
			for _, e := range c.srcEdits {
				if !strings.Contains(src, e[0]) {
					t.Fatalf("test setup: %q not in the source", e[0])
				}
				src = strings.Replace(src, e[0], e[1], 1)
			}
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": src,
				"naive/kernel.yaml": naiveSumYAML, "naive/s.metal": naiveSumMetal}))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			res := run.NewRunner(eb).Run(context.Background(), s, opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
			if !strings.Contains(res.Error, c.wantError) {
				t.Errorf("error %q, want it to say %q", res.Error, c.wantError)
			}
		})
	}
}
