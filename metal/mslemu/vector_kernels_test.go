package mslemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

var emuDev = metal.DeviceInfo(metal.RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024, HasTimestampSet: true, StageBoundary: true})

// vectorKernels are public kernels' idioms the emulation used to reject:
// ggml's silu on float4 (exp of a vector) beside a vector from a brace
// list shorter than it (MLX's threefry: `uint4 ks = {a, b, c};`, w zero), a row copy indexing uint3 and
// ushort3 thread positions (tgpig[0], tpitg[0]), and a float4x4 times a
// float4 read from buffers with a half literal, and ggml's 8x8 simdgroup
// matrices: a half and a float matrix loaded from memory, multiplied into
// a float one (make_filled_simdgroup_matrix<float, 8>) and stored.
const vectorKernels = `#include <metal_stdlib>
using namespace metal;

kernel void silu4(device const float4* src0, device float4* dst, uint tpig [[thread_position_in_grid]]) {
  device const float4& x = src0[tpig];
  uint4 ks = {1u, 2u, 3u};  // a short brace list zero-fills the rest (MLX's threefry)
  float3 f3 = {0.5f, 0.25f};
  dst[tpig] = x / (1.0f + exp(-x)) + float(ks.w) + f3.z;
}

kernel void rowcopy(device const float* src0, device float* dst, constant int64_t& ne00,
                    uint3 tgpig [[threadgroup_position_in_grid]], ushort3 tpitg [[thread_position_in_threadgroup]],
                    uint3 ntg [[threads_per_threadgroup]]) {
  const int64_t i01 = tgpig[0];
  for (int i00 = tpitg[0]; i00 < ne00; i00 += ntg[0]) {
    dst[i01 * ne00 + i00] = src0[i01 * ne00 + i00];
  }
}

kernel void matvec(device const float4x4* m, device const float4* v, device float4* out,
                   uint i [[thread_position_in_grid]]) {
  out[i] = m[i] * v[i] * float(1.h);
}

kernel void sgmm(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]], device float* c [[buffer(2)]],
                 ushort lane [[thread_index_in_simdgroup]]) {
  simdgroup_half8x8 ma;
  simdgroup_float8x8 mb;
  simdgroup_float8x8 mc = make_filled_simdgroup_matrix<float, 8>(0.f);
  simdgroup_load(ma, a, 8, ulong2(0, 0), false);
  simdgroup_load(mb, b);
  simdgroup_multiply_accumulate(mc, ma, mb, mc);
  simdgroup_store(mc, c, 8);
}
`

const vectorKernelsYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 8}, cols: {default: 100}}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: y, dtype: f32, shape: [rows, cols], out: true}
  - {name: m, dtype: f32, shape: [rows, 4, 4]}
  - {name: v, dtype: f32, shape: [rows, 4]}
  - {name: mv, dtype: f32, shape: [rows, 4], out: true}
  - {name: s, dtype: f32, shape: [rows, 4], out: true}
  - {name: a, dtype: f32, shape: [8, 8]}
  - {name: b, dtype: f32, shape: [8, 8]}
  - {name: c, dtype: f32, shape: [8, 8], out: true, terms: 8}
dispatches:
  - {entry: rowcopy, grid: [rows], threads: [32], args: [x, y, cols]}
  - {entry: matvec, grid: [rows], threads: [1], args: [m, v, mv]}
  - {entry: silu4, grid: [rows], threads: [1], args: [v, s]}
  - {entry: sgmm, grid: [1], threads: [32], args: [a, b, c]}
check: {python: ref.py}
`

// m[i] is column-major: m[b, c, :] is column c, so m·v sums v[c]·column c.
const vectorKernelsRef = `import numpy as np

def reference(inputs, dims):
    m, v = inputs["m"], inputs["v"]
    a = inputs["a"].astype(np.float16).astype(np.float64)  # loaded into a half matrix
    return {"y": inputs["x"], "mv": np.einsum("bcr,bc->br", m, v), "s": v / (1 + np.exp(-v)), "c": a @ inputs["b"]}
`

// The kernels run on the emulation against NumPy: right as written, and
// each of their broken twins (a vector × matrix for the matrix × vector,
// the wrong position lane, exp of the wrong sign, a transposed load) is a
// mismatch.
func TestVectorKernelsOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	cases := []struct {
		name, from, to string
		want           profiler.Status
	}{
		{"ok", "", "", profiler.StatusOK},
		{"vec_times_mat", "m[i] * v[i]", "v[i] * m[i]", profiler.StatusMismatch},
		{"wrong_lane", "tgpig[0]", "tgpig[1]", profiler.StatusMismatch},
		{"exp_sign", "exp(-x)", "exp(x)", profiler.StatusMismatch},
		{"load_transposed", "ulong2(0, 0), false", "ulong2(0, 0), true", profiler.StatusMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(vectorKernels, c.from, c.to, 1)
			res := runFiles(t, eb, map[string]string{
				"kernel.yaml": strings.Replace(vectorKernelsYAML, "NAME", "t_emu_vectors_"+c.name, 1),
				"k.metal":     src, "ref.py": vectorKernelsRef})
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
