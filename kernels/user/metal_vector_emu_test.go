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

// vec4SumMetal adds sum(x) to total[0] and counts the simdgroups in
// groups[0], in the style of public reduction kernels: float4 loads, a
// float4 simd_sum in a simdgroup of 16 lanes (a 16-thread group), the lanes
// of the result added with dot, one atomic<float> add per simdgroup
// (memory_order::memory_order_relaxed), a `volatile device atomic_int*`
// counter, a program-scope `constant int` sizing a threadgroup array, and
// simd_shuffle_down / simd_broadcast_first / simdgroup_barrier.
const vec4SumMetal = `#include <metal_stdlib>
using namespace metal;

constant int LANES = 16;

kernel void vec4_sum(device const float4* x [[buffer(0)]],
                     device atomic<float>* total [[buffer(1)]],
                     volatile device atomic_int* groups [[buffer(2)]],
                     uint g [[threadgroup_position_in_grid]],
                     uint lane [[thread_index_in_threadgroup]]) {
  threadgroup float part[LANES];
  float4 v = 0.0f;
  v += x[g * LANES + lane] * 1.0f;
  float4 s = simd_sum(v);
  part[lane] = dot(s, float4(1.0f));
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float first = simd_broadcast_first(part[lane]);
  float next = simd_shuffle_down(first, 1);
  if (simd_is_first()) {
    atomic_fetch_add_explicit(total, next, memory_order::memory_order_relaxed);
    atomic_fetch_add_explicit(groups, 1, memory_order_relaxed);
  }
}
`

const vec4SumYAML = `name: t_vec4_sum
sources: {metal: s.metal}
dtypes: [f32]
dims:
  N: {default: 4096}
rules: ["N % 64 == 0"]
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: total, dtype: f32, shape: [1], inout: true, init: zeros, terms: N}
  - {name: groups, dtype: i32, shape: [1], inout: true, init: zeros}
dispatches:
  - {entry: vec4_sum, grid: ["N / 64"], threads: 16, args: [x, total, groups]}
check: {python: ref.py}
`

const vec4SumRef = `import numpy as np

def reference(inputs, dims):
    return {"total": inputs["total"] + inputs["x"].sum(), "groups": inputs["groups"] + dims["N"] // 64}
`

// The vector, atomic and simdgroup pieces of the MSL emulation, run by the
// real Runner against NumPy: right as written; a float4 simd_sum that
// dropped a lane, an atomic add that lost one, or a partial simdgroup that
// counted 32 lanes would be a mismatch, as the broken twins show.
func TestMetalVectorsAtomicsOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	cases := []struct {
		name string
		edit func(string) string
		want profiler.Status
	}{
		{"ok", func(s string) string { return s }, profiler.StatusOK},
		{"lane_dropped", func(s string) string { return strings.Replace(s, "float4(1.0f)", "float4(1.0f, 1.0f, 1.0f, 0.0f)", 1) }, profiler.StatusMismatch},
		{"shuffle_wrong", func(s string) string {
			return strings.Replace(s, "simd_shuffle_down(first, 1)", "simd_shuffle_down(first, 0) * 0.5f", 1)
		}, profiler.StatusMismatch},
		{"count_per_lane", func(s string) string {
			return strings.Replace(s, "atomic_fetch_add_explicit(groups, 1, memory_order_relaxed);", "", 1) + "\n"
		}, profiler.StatusMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(vec4SumYAML, "t_vec4_sum", "t_vec4_sum_"+c.name, 1), "s.metal": c.edit(vec4SumMetal), "ref.py": vec4SumRef}))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Dims: map[string]int{"N": 256}}
			// inout buffers: the timed reps must run for the check after timing
			res := run.NewRunner(eb).Run(context.Background(), s.WithDefaults(f.Schema()), mslemu.Options(), nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
