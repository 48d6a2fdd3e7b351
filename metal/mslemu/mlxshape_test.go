package mslemu_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// mlxShaped has the constructs of MLX's headers (utils.h, bf16_math.h,
// complex.h, gemv.h), written anew: bfloat math and simd functions in
// metal:: that call Apple's builtins (__metal_exp(x, mode),
// __metal_simd_shuffle_down on the bits), a struct and an operator
// overloaded on the address space, `static constant constexpr const`,
// constexpr numeric_limits and bfloat arithmetic, uniform<int>, and
// metal::atan2 on floats beside the bfloat overload.
const mlxShaped = `#include <metal_stdlib>
using namespace metal;
#define MY_CONST static constant constexpr const
typedef bfloat bfloat16_t;

#define math_funcs(itype, otype, ctype, mfast)                                   \
  METAL_FUNC otype exp(itype x) {                                                \
    return static_cast<otype>(__metal_exp(static_cast<ctype>(x), mfast));        \
  }                                                                              \
  METAL_FUNC otype atan2(itype y, itype x) {                                     \
    return static_cast<otype>(                                                   \
        __metal_atan2(static_cast<ctype>(y), static_cast<ctype>(x), mfast));     \
  }
namespace metal {
math_funcs(bfloat16_t, bfloat16_t, float, __METAL_MAYBE_FAST_MATH__);
METAL_FUNC bfloat16_t simd_shuffle_down(bfloat16_t v, ushort d) {
  return as_type<bfloat16_t>(__metal_simd_shuffle_down(as_type<uint16_t>(v), d));
}
} // namespace metal

template <typename T>
struct cplx {
  T re;
  T im;
  constexpr cplx() thread : re(0), im(0) {};
  constexpr cplx() threadgroup : re(0), im(0) {};
  constexpr cplx(T r, T i) thread : re(r), im(i) {};
  constexpr operator float() const thread { return re; }
  constexpr operator float() const device { return re; }
};
template <typename T>
constexpr thread cplx<T>& operator+=(thread cplx<T>& a, cplx<T> b) {
  a.re += b.re;
  return a;
}
template <typename T>
constexpr threadgroup cplx<T>& operator+=(threadgroup cplx<T>& a, cplx<T> b) {
  a.re += b.re;
  return a;
}

MY_CONST int kLanes = 32;
static_assert(metal::numeric_limits<half>::infinity() > half(0));
static_assert(bfloat16_t(2.0f) * bfloat16_t(3.0f) == bfloat16_t(6.0f));

kernel void k(device const float* x, device float* y,
              uint lane [[thread_index_in_simdgroup]], uint row [[threadgroup_position_in_grid]]) {
  const uniform<int> n = make_uniform(kLanes);
  float v = x[row * n + lane];
  cplx<float> c(v, 0.0f);
  c += cplx<float>(metal::atan2(v, 2.0f), 0.0f);
  float s = simd_sum(float(c));
  bfloat16_t b = simd_shuffle_down(bfloat16_t(v), 1);
  y[row * n + lane] = s + float(b) + float(metal::exp(bfloat16_t(0.0f)));
}
`

const mlxShapedYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 3}}
buffers:
  - {name: x, dtype: f32, shape: [rows, 32]}
  - {name: y, dtype: f32, shape: [rows, 32], out: true, terms: 32}
dispatches:
  - {entry: k, grid: [rows], threads: [32], args: [x, y]}
check: {python: ref.py}
`

const mlxShapedRef = `import numpy as np

def reference(inputs, dims):
    x = inputs["x"]
    s = (x + np.arctan2(x, 2.0)).sum(axis=1, keepdims=True)
    u = x.astype(np.float32).view(np.uint32)
    b = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).view(np.float32).astype(np.float64)
    down = np.concatenate([b[:, 1:], b[:, -1:]], axis=1)
    return {"y": s + down + 1.0}
`

// It runs right on the emulation; its broken twins (atan2's arguments
// swapped, a shuffle two lanes down) are mismatches.
func TestMLXShapedBuiltinsOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	eb.NativeBF16 = true // Metal 3.1's bfloat, as mltop check --run compiles it
	runVariants(t, eb, "t_emu_mlxshaped_", mlxShapedYAML, mlxShaped, mlxShapedRef, []variant{
		{"ok", "", "", profiler.StatusOK},
		{"atan2_swapped", "metal::atan2(v, 2.0f)", "metal::atan2(2.0f, v)", profiler.StatusMismatch},
		{"shuffle_two", "simd_shuffle_down(bfloat16_t(v), 1)", "simd_shuffle_down(bfloat16_t(v), 2)", profiler.StatusMismatch},
	})
}
