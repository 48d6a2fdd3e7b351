package mslemu_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// stdlibTypeKernels use what Metal's stdlib declares about its types, as
// large libraries (ggml's whole ggml-metal.metal) do beside the kernel
// launched: FLT_MAX and HALF_MAX, metal::is_same, enable_if over
// is_floating_point<half>, a `constant` table passed to a `constant
// float*` parameter, packed_char4 and packed_float3 read from buffers, a
// GNU range initializer, the simdgroup prefix sums, and a [[host_name]]
// instance in a branch the preprocessor drops (its function is missing).
const stdlibTypeKernels = `#include <metal_stdlib>
using namespace metal;

constexpr constant static float table[4] = {0.5f, -1.0f, 2.0f, 4.0f};
constant float half_one = HALF_EPSILON * 1024.0f;

static float pick(constant float* t, int k) { return t[k & 3]; }

template <typename T>
float first_or_zero(device const T* p) {
  if (is_same<T, float>::value) {
    return p[0];
  }
  return 0.0f;
}

template <typename T, typename enable_if<is_floating_point<T>::value, int>::type = 0>
T twice(T x) { return x + x; }

kernel void rowstats(device const float* x [[buffer(0)]], device float* ymax [[buffer(1)]],
                     device float* yt [[buffer(2)]], device float* yf [[buffer(3)]],
                     constant int& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  float m = -FLT_MAX;
  for (int j = 0; j < n; j++) m = max(m, x[i * n + j]);
  ymax[i] = m;
  yt[i] = pick(table, int(i)) * x[i * n];
  const float hm = float(HALF_MAX) / 65504.0f * half_one;
  yf[i] = first_or_zero(x + i * n) * hm + float(twice(half(0.25f)));
}

kernel void unpack(device const char* q [[buffer(0)]], device const float* p3 [[buffer(1)]],
                   device float4* u [[buffer(2)]], device float* s3 [[buffer(3)]],
                   uint i [[thread_position_in_grid]]) {
  device const packed_char4* qs = (device const packed_char4*) q;
  u[i] = float4(qs[i]) * 0.5f;
  device const packed_float3* v = (device const packed_float3*) p3;
  const float3 w = v[i];
  s3[i] = w.x + 2.0f * w.y + 4.0f * v[i][2];
}

kernel void prefix(device const float* x [[buffer(0)]], device float* inc [[buffer(1)]],
                   device float* exc [[buffer(2)]], ushort lane [[thread_index_in_simdgroup]],
                   uint g [[threadgroup_position_in_grid]]) {
  float ones[4] = { [0 ... 3] = 1.0f };
  const float v = x[g * 32 + lane];
  inc[g * 32 + lane] = simd_prefix_inclusive_sum(v) * (ones[0] + ones[3]) / 2.0f;
  exc[g * 32 + lane] = simd_prefix_exclusive_sum(v);
}

template <typename T>
kernel void scale(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * T(3);
}
typedef decltype(scale<float>) scale_t;
template [[host_name("scale_f32")]] kernel scale_t scale<float>;
#if defined(NOT_DEFINED_HERE)
template [[host_name("scale_missing")]] kernel scale_t scale<missing_type>;
#endif
`

const stdlibTypesYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 64}, cols: {default: 32}}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: ymax, dtype: f32, shape: [rows], out: true}
  - {name: yt, dtype: f32, shape: [rows], out: true}
  - {name: yf, dtype: f32, shape: [rows], out: true}
  - {name: q, dtype: i8, shape: [rows, 4], init: "randint(-100, 100)"}
  - {name: p3, dtype: f32, shape: [rows, 3]}
  - {name: u, dtype: f32, shape: [rows, 4], out: true}
  - {name: s3, dtype: f32, shape: [rows], out: true}
  - {name: inc, dtype: f32, shape: [rows, cols], out: true}
  - {name: exc, dtype: f32, shape: [rows, cols], out: true}
  - {name: sc, dtype: f32, shape: [rows, cols], out: true}
dispatches:
  - {entry: rowstats, grid: [rows], threads: [1], args: [x, ymax, yt, yf, cols]}
  - {entry: unpack, grid: [rows], threads: [1], args: [q, p3, u, s3]}
  - {entry: prefix, grid: [rows], threads: [32], args: [x, inc, exc]}
  - {entry: scale_f32, grid: [rows], threads: [cols], args: [x, sc]}
rules: ["cols == 32"]
check: {python: ref.py}
`

const stdlibTypesRef = `import numpy as np

def reference(inputs, dims):
    x = inputs["x"].astype(np.float64)
    rows = x.shape[0]
    table = np.array([0.5, -1.0, 2.0, 4.0])
    p3 = inputs["p3"].astype(np.float64)
    return {
        "ymax": x.max(axis=1),
        "yt": table[np.arange(rows) % 4] * x[:, 0],
        "yf": x[:, 0] + 0.5,
        "u": inputs["q"].astype(np.float64) * 0.5,
        "s3": p3[:, 0] + 2 * p3[:, 1] + 4 * p3[:, 2],
        "inc": np.cumsum(x, axis=1),
        "exc": np.cumsum(x, axis=1) - x,
        "sc": 3 * x,
    }
`

// The kernels run on the emulation against NumPy as written, and each
// broken twin is a mismatch: the max started from FLT_MAX, the table read
// one entry off, is_same asking for half, a packed_float3 read as a float3
// (16 bytes, not 12), a lane of packed_char4 dropped, the inclusive prefix
// for the exclusive one, and a range initializer of zeros.
func TestStdlibTypesOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	runVariants(t, eb, "t_emu_stdlib_types_", stdlibTypesYAML, stdlibTypeKernels, stdlibTypesRef, []variant{
		{"ok", "", "", profiler.StatusOK},
		{"max_from_flt_max", "float m = -FLT_MAX;", "float m = FLT_MAX;", profiler.StatusMismatch},
		{"table_off_by_one", "t[k & 3]", "t[(k + 1) & 3]", profiler.StatusMismatch},
		{"is_same_half", "is_same<T, float>", "is_same<T, half>", profiler.StatusMismatch},
		{"packed_as_aligned", "device const packed_float3* v = (device const packed_float3*) p3;", "device const float3* v = (device const float3*) p3;", profiler.StatusMismatch},
		{"packed_lane_dropped", "float4(qs[i])", "float4(qs[i][0], qs[i][1], qs[i][2], 0)", profiler.StatusMismatch},
		{"prefix_swapped", "exc[g * 32 + lane] = simd_prefix_exclusive_sum(v)", "exc[g * 32 + lane] = simd_prefix_inclusive_sum(v)", profiler.StatusMismatch},
		{"range_of_zeros", "[0 ... 3] = 1.0f", "[0 ... 3] = 0.0f", profiler.StatusMismatch},
	})
}
