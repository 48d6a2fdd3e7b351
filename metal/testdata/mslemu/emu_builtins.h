// Apple's compiler builtins that MLX's headers call directly
// (bf16_math.h: `__metal_fabs(x, __METAL_MAYBE_FAST_MATH__)`, the simd
// ones on uint16_t bits), emulated on float and on the emulated simd_*.
// Every math mode computes precisely, as the emulation's fast:: does.
// Included by metal_stdlib after the simd functions.
#pragma once

enum class emu_math_mode { maybe_fast, fast, precise };
#define __METAL_MAYBE_FAST_MATH__ emu_math_mode::maybe_fast
#define __METAL_FAST_MATH__ emu_math_mode::fast
#define __METAL_PRECISE_MATH__ emu_math_mode::precise

#define EMU_BUILTIN1(NAME, EXPR) \
  inline float __metal_##NAME(float x, emu_math_mode = emu_math_mode::precise) { return EXPR; }
#define EMU_BUILTIN2(NAME, EXPR) \
  inline float __metal_##NAME(float x, float y, emu_math_mode = emu_math_mode::precise) { return EXPR; }
#define EMU_BUILTIN3(NAME, EXPR) \
  inline float __metal_##NAME(float x, float y, float z, emu_math_mode = emu_math_mode::precise) { return EXPR; }
EMU_BUILTIN1(fabs, std::fabs(x))
EMU_BUILTIN1(acos, std::acos(x))
EMU_BUILTIN1(acosh, std::acosh(x))
EMU_BUILTIN1(asin, std::asin(x))
EMU_BUILTIN1(asinh, std::asinh(x))
EMU_BUILTIN1(atan, std::atan(x))
EMU_BUILTIN1(atanh, std::atanh(x))
EMU_BUILTIN1(ceil, std::ceil(x))
EMU_BUILTIN1(cos, std::cos(x))
EMU_BUILTIN1(cosh, std::cosh(x))
EMU_BUILTIN1(cospi, float(std::cos(double(x) * M_PI)))
EMU_BUILTIN1(exp, std::exp(x))
EMU_BUILTIN1(exp10, float(std::pow(10.0, double(x))))
EMU_BUILTIN1(exp2, std::exp2(x))
EMU_BUILTIN1(floor, std::floor(x))
EMU_BUILTIN1(fract, std::fmin(x - std::floor(x), 0x1.fffffep-1f))
EMU_BUILTIN1(log, std::log(x))
EMU_BUILTIN1(log10, std::log10(x))
EMU_BUILTIN1(log2, std::log2(x))
EMU_BUILTIN1(rint, std::nearbyint(x))
EMU_BUILTIN1(round, std::round(x))
EMU_BUILTIN1(rsqrt, 1.0f / std::sqrt(x))
EMU_BUILTIN1(sin, std::sin(x))
EMU_BUILTIN1(sinh, std::sinh(x))
EMU_BUILTIN1(sinpi, float(std::sin(double(x) * M_PI)))
EMU_BUILTIN1(sqrt, std::sqrt(x))
EMU_BUILTIN1(tan, std::tan(x))
EMU_BUILTIN1(tanh, std::tanh(x))
EMU_BUILTIN1(tanpi, float(std::tan(double(x) * M_PI)))
EMU_BUILTIN1(trunc, std::trunc(x))
EMU_BUILTIN2(atan2, std::atan2(x, y))
EMU_BUILTIN2(divide, x / y)
EMU_BUILTIN2(fmax, std::fmax(x, y))
EMU_BUILTIN2(fmin, std::fmin(x, y))
EMU_BUILTIN2(fmod, std::fmod(x, y))
EMU_BUILTIN2(pow, std::pow(x, y))
EMU_BUILTIN2(powr, std::pow(x, y))
EMU_BUILTIN3(fmax3, std::fmax(std::fmax(x, y), z))
EMU_BUILTIN3(fmin3, std::fmin(std::fmin(x, y), z))
EMU_BUILTIN3(fmedian3, std::fmax(std::fmin(x, y), std::fmin(std::fmax(x, y), z)))
#undef EMU_BUILTIN1
#undef EMU_BUILTIN2
#undef EMU_BUILTIN3
inline float __metal_fma(float x, float y, float z) { return std::fma(x, y, z); }
inline float __metal_nextafter(float x, float y) { return std::nextafter(x, y); }
inline float __metal_frexp(float x, int* e) { return std::frexp(x, e); }
inline float __metal_ldexp(float x, int k, emu_math_mode = emu_math_mode::precise) { return std::ldexp(x, k); }

// The simd builtins, on any type the emulated simd_* take.
template <typename V>
inline V simd_broadcast(V v, ushort lane) {
  return emu_simd_op(v, [&](const V* l, int w) { return emu_lane(l, w, lane, v); });
}
// Rotations wrap around the simdgroup's width; the fills take the lanes
// past the end (down) or before the start (up) from fill, within modulo.
template <typename V>
inline V simd_shuffle_rotate_down(V v, ushort delta) {
  const int lane = emu.lane;
  return emu_simd_op(v, [&](const V* l, int w) { return l[(lane + delta) % w]; });
}
template <typename V>
inline V simd_shuffle_rotate_up(V v, ushort delta) {
  const int lane = emu.lane;
  return emu_simd_op(v, [&](const V* l, int w) { return l[((lane - delta) % w + w) % w]; });
}
template <typename V>
inline V simd_shuffle_and_fill_down(V v, V fill, ushort delta, ushort modulo) {
  const int lane = emu.lane;
  const int base = lane - lane % modulo, i = lane % modulo + delta;
  const V d = emu_simd_op(v, [&](const V* l, int w) { return base + i < w ? l[base + i] : v; });
  const V f = emu_simd_op(fill, [&](const V* l, int w) { return base + i - modulo < w ? l[base + i - modulo] : fill; });
  return i < modulo ? d : f;
}
template <typename V>
inline V simd_shuffle_and_fill_up(V v, V fill, ushort delta, ushort modulo) {
  const int lane = emu.lane;
  const int base = lane - lane % modulo, i = lane % modulo - delta;
  const V d = emu_simd_op(v, [&](const V* l, int) { return i >= 0 ? l[base + i] : v; });
  const V f = emu_simd_op(fill, [&](const V* l, int) { return i < 0 ? l[base + i + modulo] : fill; });
  return i >= 0 ? d : f;
}
template <typename V>
inline V simd_shuffle_and_fill_down(V v, V fill, ushort delta) { return simd_shuffle_and_fill_down(v, fill, delta, ushort(emu.simd->width)); }
template <typename V>
inline V simd_shuffle_and_fill_up(V v, V fill, ushort delta) { return simd_shuffle_and_fill_up(v, fill, delta, ushort(emu.simd->width)); }
template <typename V>
inline V simd_prefix_inclusive_product(V v) {
  const int lane = emu.lane;
  return emu_simd_op(v, [&](const V* l, int) {
    V r = l[0];
    for (int i = 1; i <= lane; i++) r *= l[i];
    return r;
  });
}
template <typename V>
inline V simd_prefix_exclusive_product(V v) {
  const int lane = emu.lane;
  return emu_simd_op(v, [&](const V* l, int) {
    V r = V(1);
    for (int i = 0; i < lane; i++) r *= l[i];
    return r;
  });
}
inline ushort __metal_get_simdgroup_size(ushort) { return ushort(emu.simd->width); }
#define EMU_SIMD_BUILTIN(NAME)                                                   \
  template <typename V, typename... A>                                           \
  inline V __metal_##NAME(V v, A... a) { return NAME(v, a...); }
EMU_SIMD_BUILTIN(simd_broadcast)
EMU_SIMD_BUILTIN(simd_shuffle)
EMU_SIMD_BUILTIN(simd_shuffle_down)
EMU_SIMD_BUILTIN(simd_shuffle_up)
EMU_SIMD_BUILTIN(simd_shuffle_xor)
EMU_SIMD_BUILTIN(simd_shuffle_rotate_down)
EMU_SIMD_BUILTIN(simd_shuffle_rotate_up)
EMU_SIMD_BUILTIN(simd_shuffle_and_fill_down)
EMU_SIMD_BUILTIN(simd_shuffle_and_fill_up)
EMU_SIMD_BUILTIN(simd_max)
EMU_SIMD_BUILTIN(simd_min)
EMU_SIMD_BUILTIN(simd_sum)
EMU_SIMD_BUILTIN(simd_product)
EMU_SIMD_BUILTIN(simd_xor)
EMU_SIMD_BUILTIN(simd_prefix_inclusive_sum)
EMU_SIMD_BUILTIN(simd_prefix_exclusive_sum)
EMU_SIMD_BUILTIN(simd_prefix_inclusive_product)
EMU_SIMD_BUILTIN(simd_prefix_exclusive_product)
#undef EMU_SIMD_BUILTIN

// Metal's float math (not log1p, expm1: Metal has none, MLX defines
// them) that MLX's bfloat overloads in metal:: would hide
// (metal::atan2(y, x) on floats), and Metal's own functions on float.
namespace metal {
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atan2;
using std::atanh;
using std::cosh;
using std::fdim;
using std::fmod;
using std::frexp;
using std::ldexp;
using std::log10;
using std::nextafter;
using std::rint;
using std::sinh;
// The same on half, giving half (std's would be ambiguous between its
// float and double overloads).
#define EMU_HALF1(F) \
  inline half F(half x) { return half(std::F(float(x))); }
#define EMU_HALF2(F) \
  inline half F(half x, half y) { return half(std::F(float(x), float(y))); }
EMU_HALF1(acos)
EMU_HALF1(acosh)
EMU_HALF1(asin)
EMU_HALF1(asinh)
EMU_HALF1(atan)
EMU_HALF1(atanh)
EMU_HALF1(cosh)
EMU_HALF1(sinh)
EMU_HALF1(log10)
EMU_HALF1(rint)
EMU_HALF2(atan2)
EMU_HALF2(fmod)
#undef EMU_HALF1
#undef EMU_HALF2
inline float cospi(float x) { return __metal_cospi(x); }
inline float sinpi(float x) { return __metal_sinpi(x); }
inline float tanpi(float x) { return __metal_tanpi(x); }
inline float exp10(float x) { return __metal_exp10(x); }
inline float powr(float x, float y) { return std::pow(x, y); }
inline float fmax3(float x, float y, float z) { return __metal_fmax3(x, y, z); }
inline float fmin3(float x, float y, float z) { return __metal_fmin3(x, y, z); }
inline float fmedian3(float x, float y, float z) { return __metal_fmedian3(x, y, z); }
// The same in precise:: and fast:: (MLX's bfloat overloads there hide
// what metal:: has).
#define EMU_MODE_NAMES \
  using metal::acos;   \
  using metal::acosh;  \
  using metal::asin;   \
  using metal::asinh;  \
  using metal::atan;   \
  using metal::atan2;  \
  using metal::atanh;  \
  using metal::cosh;   \
  using metal::sinh;   \
  using metal::fmod;   \
  using metal::log10;  \
  using metal::rint;   \
  using metal::cospi;  \
  using metal::sinpi;  \
  using metal::tanpi;  \
  using metal::exp10;  \
  using metal::powr;
namespace precise {
EMU_MODE_NAMES
}  // namespace precise
namespace fast {
EMU_MODE_NAMES
}  // namespace fast
#undef EMU_MODE_NAMES
// The simd functions, which the emulation defines globally, as metal::
// names too (MLX calls metal::simd_shuffle_down(as_type<uint2>(v), d)).
using ::simd_broadcast;
using ::simd_broadcast_first;
using ::simd_max;
using ::simd_min;
using ::simd_prefix_exclusive_product;
using ::simd_prefix_exclusive_sum;
using ::simd_prefix_inclusive_product;
using ::simd_prefix_inclusive_sum;
using ::simd_product;
using ::simd_shuffle;
using ::simd_shuffle_and_fill_down;
using ::simd_shuffle_and_fill_up;
using ::simd_shuffle_down;
using ::simd_shuffle_rotate_down;
using ::simd_shuffle_rotate_up;
using ::simd_shuffle_up;
using ::simd_shuffle_xor;
using ::simd_sum;
using ::simd_and;
using ::simd_or;
using ::simd_xor;
}  // namespace metal

// uniform<T>: a value Metal knows to be the same in every thread of the
// grid (MLX's gemv loop bounds); on the CPU just the value.
namespace metal {
template <typename T>
using uniform = T;
template <typename T>
constexpr T make_uniform(T v) { return v; }
}  // namespace metal

// isnan, isinf, isfinite, signbit on float, half and bfloat (MLX's
// binary_ops.h calls metal::isnan).
namespace metal {
#define EMU_CLASSIFY(F)                                             \
  inline bool F(float x) { return std::F(x); }                      \
  inline bool F(half x) { return std::F(float(x)); }
EMU_CLASSIFY(isnan)
EMU_CLASSIFY(isinf)
EMU_CLASSIFY(isfinite)
EMU_CLASSIFY(signbit)
#if defined(__HAVE_BFLOAT__)
inline bool isnan(bfloat x) { return std::isnan(float(x)); }
inline bool isinf(bfloat x) { return std::isinf(float(x)); }
inline bool isfinite(bfloat x) { return std::isfinite(float(x)); }
inline bool signbit(bfloat x) { return std::signbit(float(x)); }
#endif
#undef EMU_CLASSIFY
}  // namespace metal

// log1p on half: Metal has no log1p, MLX defines log1p(float); on the CPU
// C's global log1p(double) would make log1p(h) ambiguous, which Metal
// (no double) is not: the half goes to float, as MLX's call means.
inline float log1p(half x) { return std::log1p(float(x)); }
