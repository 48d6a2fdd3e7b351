// cuda_fp8.h of the CUDA emulation: the toolkit's 8-bit float types
// __nv_fp8_e4m3 (E4M3: no infinity, NaN S.1111.111, largest 448) and
// __nv_fp8_e5m2 (E5M2: IEEE-like, largest finite 57344), one byte each,
// converting from float by rounding to nearest even and saturating to the
// largest finite value (__NV_SATFINITE, as the types' constructors do).
#pragma once
#include <cuda_emu.h>
#include <cmath>

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };

// emu_fp8_encode rounds f to the format with E exponent and M mantissa
// bits (fn: E4M3's "finite" layout, whose all-ones exponent still holds
// numbers); sat: values beyond the largest finite one become it, else
// NaN (E4M3) or infinity (E5M2).
inline __nv_fp8_storage_t emu_fp8_encode(float f, int E, int M, bool fn, bool sat) {
  const int bias = (1 << (E - 1)) - 1;
  const unsigned char sign = std::signbit(f) ? 0x80 : 0;
  const unsigned char nan = 0x7f;
  const int maxExp = fn ? (1 << E) - 1 : (1 << E) - 2;      // the largest exponent field of a finite value
  const int maxMan = fn ? (1 << M) - 2 : (1 << M) - 1;      // its largest mantissa
  const unsigned char maxCode = (unsigned char)((maxExp << M) | maxMan);
  if (std::isnan(f)) return sign | nan;
  float a = std::fabs(f);
  const float maxVal = std::ldexp(1.0f + float(maxMan) / float(1 << M), maxExp - bias);
  int code;
  if (a == 0) {
    code = 0;
  } else {
    int ex;
    std::frexp(a, &ex);
    int e = ex - 1;  // a = 1.m · 2^e
    if (e < 1 - bias) {  // subnormal: multiples of 2^(1-bias-M)
      code = int(std::nearbyint(std::ldexp(a, -(1 - bias - M))));
    } else {
      int q = int(std::nearbyint(std::ldexp(a, -(e - M))));  // in [2^M, 2^(M+1)]
      if (q == (2 << M)) { e++; q = 1 << M; }
      code = ((e + bias) << M) | (q - (1 << M));
    }
  }
  if (std::isinf(a) || code > maxCode || a > maxVal) {
    if (sat) return sign | maxCode;
    return fn ? (sign | nan) : (sign | (unsigned char)(((1 << E) - 1) << M));  // E5M2: infinity
  }
  return sign | (unsigned char)code;
}

inline float emu_fp8_decode(__nv_fp8_storage_t c, int E, int M, bool fn) {
  const int bias = (1 << (E - 1)) - 1;
  const bool neg = c & 0x80;
  const int ef = (c >> M) & ((1 << E) - 1), man = c & ((1 << M) - 1);
  float v;
  if (fn && ef == (1 << E) - 1 && man == (1 << M) - 1) return std::nanf("");
  if (!fn && ef == (1 << E) - 1) {
    if (man) return std::nanf("");
    v = INFINITY;
  } else if (ef == 0) {
    v = std::ldexp(float(man), 1 - bias - M);
  } else {
    v = std::ldexp(1.0f + float(man) / float(1 << M), ef - bias);
  }
  return neg ? -v : v;
}

inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return k == __NV_E4M3 ? emu_fp8_encode(x, 4, 3, true, s == __NV_SATFINITE) : emu_fp8_encode(x, 5, 2, false, s == __NV_SATFINITE);
}
inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return __nv_cvt_float_to_fp8(float(x), s, k);
}

#define EMU_FP8_TYPE(T, E, M, FN)                                                        \
  struct alignas(1) T {                                                                  \
    __nv_fp8_storage_t __x;                                                              \
    T() = default;                                                                       \
    explicit T(float f) : __x(emu_fp8_encode(f, E, M, FN, true)) {}                      \
    explicit T(double d) : __x(emu_fp8_encode(float(d), E, M, FN, true)) {}              \
    explicit T(__half h) : T(float(h)) {}                                                \
    explicit T(__nv_bfloat16 h) : T(float(h)) {}                                         \
    explicit T(int v) : T(float(v)) {}                                                   \
    explicit T(unsigned v) : T(float(v)) {}                                              \
    explicit T(long long v) : T(float(v)) {}                                             \
    explicit T(unsigned long long v) : T(float(v)) {}                                    \
    explicit operator float() const { return emu_fp8_decode(__x, E, M, FN); }           \
    explicit operator double() const { return emu_fp8_decode(__x, E, M, FN); }          \
    explicit operator __half() const { return __half(emu_fp8_decode(__x, E, M, FN)); }   \
    explicit operator __nv_bfloat16() const { return __nv_bfloat16(emu_fp8_decode(__x, E, M, FN)); } \
    explicit operator bool() const { return (__x & 0x7f) != 0; }                         \
  };
EMU_FP8_TYPE(__nv_fp8_e4m3, 4, 3, true)
EMU_FP8_TYPE(__nv_fp8_e5m2, 5, 2, false)
#undef EMU_FP8_TYPE
