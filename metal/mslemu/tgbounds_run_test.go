package mslemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// tgBounds uses a threadgroup array every way that must keep compiling
// (a cast to float4, pointer arithmetic, a template taking its pointer,
// sizeof, a 2-D array) and a [[threadgroup(0)]] parameter; off and doff
// move one read of each past its end.
const tgBounds = `#include <metal_stdlib>
using namespace metal;

template <typename T>
METAL_FUNC T second(threadgroup const T* p) { return p[1]; }

kernel void tgb(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                constant int& off [[buffer(2)]], constant int& doff [[buffer(3)]],
                threadgroup float* dyn [[threadgroup(0)]],
                uint tid [[thread_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  threadgroup float s[64];
  threadgroup float tile[4][16];
  s[tid] = x[g * 64 + tid];
  tile[tid / 16][tid % 16] = float(tid);
  dyn[tid] = 2.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  threadgroup float4* s4 = (threadgroup float4*)s;
  threadgroup float* upper = s + 32;
  float v = s[min(tid + uint(off), 64u + uint(off) - 1u)] + dyn[tid + uint(doff)] - 2.0f;
  v += (s4[tid / 4][tid % 4] - s[tid]) + (upper[0] - second(s + 31)) + (tile[tid / 16][tid % 16] - float(tid));
  y[g * 64 + tid] = v * float(sizeof(s[0]) / 4);
}
`

const tgBoundsYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 2}, off: {default: 0, min: 0}, doff: {default: 0, min: 0}}
buffers:
  - {name: x, dtype: f32, shape: [rows, 64]}
  - {name: y, dtype: f32, shape: [rows, 64], out: true}
dispatches:
  - {entry: tgb, grid: [rows], threads: [64], args: [x, y, off, doff], dynamic_tgm: 256}
check: {python: ref.py}
`

const tgBoundsRef = `def reference(inputs, dims):
    return {"y": inputs["x"]}
`

// The kernel runs right; a read one past the end of the threadgroup array
// or of the dynamic threadgroup memory stops the run, a crash whose
// message names the array, the index and the size (an error, as a GPU
// fault is; the statics read a
// neighbour before, and the check could pass). One compile: the offsets
// are scalars.
func TestThreadgroupIndexOutOfRangeOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	f, err := user.Load(usertest.Write(t, map[string]string{
		"kernel.yaml": strings.Replace(tgBoundsYAML, "NAME", "t_emu_tgbounds", 1), "k.metal": tgBounds, "ref.py": tgBoundsRef}))
	if err != nil {
		t.Fatal(err)
	}
	if err := user.Install(f); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		off, doff int
		want      profiler.Status
		msg       string
	}{
		{"in range", 0, 0, profiler.StatusOK, ""},
		{"past the array", 1, 0, profiler.StatusError, "threadgroup array s: index 64 is out of range [0, 64)"},
		{"past the dynamic memory", 0, 1, profiler.StatusError, "threadgroup array dyn: index 64 is out of range [0, 64) of 256 bytes of dynamic threadgroup memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Dims: map[string]int{"off": c.off, "doff": c.doff}}.WithDefaults(f.Schema())
			res := run.NewRunner(eb).Run(context.Background(), s, mslemu.Options(), nil)
			if res.Status != c.want || !strings.Contains(res.Error, c.msg) {
				t.Fatalf("status %s, want %s with %q: %s", res.Status, c.want, c.msg, res.Error)
			}
		})
	}
}
