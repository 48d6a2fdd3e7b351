package mslemu_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// tgParams is the shape of candle's reduce.metal softmax: a struct with
// defaulted constructors for thread and threadgroup objects built by
// aggregate initialization, a helper taking a `threadgroup T shared[N]`
// array parameter, and a kernel declaring a threadgroup array and a single
// threadgroup value of that template type, the value written by thread 0
// and read by the last thread.
const tgParams = `#include <metal_stdlib>
using namespace metal;

template <typename T>
struct Acc {
  T m;
  float n;

  constexpr Acc<T>() = default;
  constexpr Acc<T>() threadgroup = default;
};

template <typename T>
METAL_FUNC Acc<T> join(Acc<T> a, Acc<T> b) { return Acc<T>{ max(a.m, b.m), a.n + b.n }; }

template <typename T, ushort N>
METAL_FUNC Acc<T> reduce_block(
    Acc<T> v,
    threadgroup Acc<T> shared[N],
    uint tid) {
  shared[tid] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (ushort s = N / 2; s > 0; s >>= 1) {
    if (tid < s) shared[tid] = join(shared[tid], shared[tid + s]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  return shared[0];
}

kernel void rowstat(device const float* x, device float* out, constant uint& cols,
                    uint tid [[thread_index_in_threadgroup]], uint row [[threadgroup_position_in_grid]]) {
  threadgroup Acc<float> shared[64];
  threadgroup Acc<float> total;
  Acc<float> a = Acc<float>{ -INFINITY, 0 };
  for (uint i = tid; i < cols; i += 64) a = join(a, Acc<float>{ x[row * cols + i], 1 });
  Acc<float> r = reduce_block<float, 64>(a, shared, tid);
  if (tid == 0) total = r;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid == 63) {
    out[row * 2] = total.m;
    out[row * 2 + 1] = total.n;
  }
}
`

const tgParamsYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 3}, cols: {default: 200}}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: out, dtype: f32, shape: [rows, 2], out: true}
dispatches:
  - {entry: rowstat, grid: [rows], threads: [64], args: [x, out, cols]}
check: {python: ref.py}
`

const tgParamsRef = `import numpy as np

def reference(inputs, dims):
    x = inputs["x"]
    return {"out": np.stack([x.max(axis=1), np.full(x.shape[0], float(x.shape[1]))], axis=1)}
`

// The kernel runs right on the emulation, and its broken twins (the
// threadgroup value read before the barrier that publishes it, a
// reduction that skips the last step) are mismatches.
func TestThreadgroupParamsAndValuesOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	runVariants(t, eb, "t_emu_tgparams_", tgParamsYAML, tgParams, tgParamsRef, []variant{
		{"ok", "", "", profiler.StatusOK},
		{"no_last_step", "s > 0; s >>= 1", "s > 1; s >>= 1", profiler.StatusMismatch},
		{"total_from_last", "if (tid == 0) total = r;", "if (tid == 1) total = shared[1];", profiler.StatusMismatch},
	})
}
