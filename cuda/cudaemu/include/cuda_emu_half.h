// __half and __nv_bfloat16 (cuda_fp16.h, cuda_bf16.h) on the CPU: 16 bits,
// float conversions rounding to nearest even as the hardware does (half
// through the compiler's _Float16, bfloat16 by hand), arithmetic in float
// rounded once to the type, and the intrinsics kernels use.
#pragma once
#define __CUDA_FP16_H__
#define __CUDA_FP16_HPP__
#define __CUDA_FP16_TYPES_EXIST__
#define __CUDA_BF16_H__
#define __CUDA_BF16_HPP__
#define __CUDA_BF16_TYPES_EXIST__

inline unsigned short emu_f2h(float f) { return std::bit_cast<unsigned short>(static_cast<_Float16>(f)); }
inline unsigned short emu_d2h(double f) { return std::bit_cast<unsigned short>(static_cast<_Float16>(f)); }
inline float emu_h2f(unsigned short h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
inline unsigned short emu_f2bf(float f) {
  unsigned u = std::bit_cast<unsigned>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);  // NaN stays quiet
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
inline unsigned short emu_d2bf(double d) {
  // one rounding from double: round the float's lost bits in by sticky
  float f = float(d);
  if (std::isfinite(f) && double(f) != d) {
    unsigned u = std::bit_cast<unsigned>(f);
    if ((u & 0xffffu) == 0x8000u) u += (double(f) < d) == (f > 0) ? 1 : -1;  // tie that is no tie
    f = std::bit_cast<float>(u);
  }
  return emu_f2bf(f);
}
inline float emu_bf2f(unsigned short h) { return std::bit_cast<float>((unsigned)h << 16); }

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };

// EMU_HALF_TYPE defines a 16-bit float type T (raw R) with conversions TO
// and FROM its bits.
#define EMU_HALF_TYPE(T, R, FROMF, FROMD, TOF)                                                   \
  struct alignas(2) T {                                                                          \
    unsigned short __x;                                                                          \
    T() = default;                                                                               \
    constexpr T(const R& r) : __x(r.x) {}                                                        \
    T& operator=(const R& r) { __x = r.x; return *this; }                                        \
    operator R() const { return R{__x}; }                                                        \
    T(float f) : __x(FROMF(f)) {}                                                                \
    T(double d) : __x(FROMD(d)) {}                                                               \
    T(short v) : __x(FROMF(float(v))) {}                                                         \
    T(unsigned short v) : __x(FROMF(float(v))) {}                                                \
    T(int v) : __x(FROMD(double(v))) {}                                                          \
    T(unsigned v) : __x(FROMD(double(v))) {}                                                     \
    T(long v) : __x(FROMD(double(v))) {}                                                         \
    T(unsigned long v) : __x(FROMD(double(v))) {}                                                \
    T(long long v) : __x(FROMD(double(v))) {}                                                    \
    T(unsigned long long v) : __x(FROMD(double(v))) {}                                           \
    operator float() const { return TOF(__x); }                                                  \
    explicit operator double() const { return TOF(__x); }                                        \
    operator short() const { return (short)TOF(__x); }                                           \
    operator unsigned short() const { return (unsigned short)TOF(__x); }                         \
    operator int() const { return (int)TOF(__x); }                                               \
    operator unsigned() const { return (unsigned)TOF(__x); }                                     \
    operator long long() const { return (long long)TOF(__x); }                                   \
    operator unsigned long long() const { return (unsigned long long)TOF(__x); }                 \
    operator bool() const { return (__x & 0x7fff) != 0; }                                        \
  };                                                                                             \
  inline T operator+(const T& a, const T& b) { return T(float(a) + float(b)); }                  \
  inline T operator-(const T& a, const T& b) { return T(float(a) - float(b)); }                  \
  inline T operator*(const T& a, const T& b) { return T(float(a) * float(b)); }                  \
  inline T operator/(const T& a, const T& b) { return T(float(a) / float(b)); }                  \
  inline T& operator+=(T& a, const T& b) { return a = a + b; }                                   \
  inline T& operator-=(T& a, const T& b) { return a = a - b; }                                   \
  inline T& operator*=(T& a, const T& b) { return a = a * b; }                                   \
  inline T& operator/=(T& a, const T& b) { return a = a / b; }                                   \
  inline T& operator++(T& a) { return a = a + T(1.0f); }                                         \
  inline T& operator--(T& a) { return a = a - T(1.0f); }                                         \
  inline T operator++(T& a, int) { T r = a; ++a; return r; }                                     \
  inline T operator--(T& a, int) { T r = a; --a; return r; }                                     \
  inline T operator+(const T& a) { return a; }                                                   \
  inline T operator-(const T& a) { T r = a; r.__x ^= 0x8000; return r; }                         \
  inline bool operator==(const T& a, const T& b) { return float(a) == float(b); }                \
  inline bool operator!=(const T& a, const T& b) { return float(a) != float(b); }                \
  inline bool operator<(const T& a, const T& b) { return float(a) < float(b); }                  \
  inline bool operator>(const T& a, const T& b) { return float(a) > float(b); }                  \
  inline bool operator<=(const T& a, const T& b) { return float(a) <= float(b); }                \
  inline bool operator>=(const T& a, const T& b) { return float(a) >= float(b); }

EMU_HALF_TYPE(__half, __half_raw, emu_f2h, emu_d2h, emu_h2f)
EMU_HALF_TYPE(__nv_bfloat16, __nv_bfloat16_raw, emu_f2bf, emu_d2bf, emu_bf2f)
#undef EMU_HALF_TYPE
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

struct alignas(4) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(__half a, __half b) : x(a), y(b) {}
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;
struct __half2_raw { unsigned short x, y; };
struct __nv_bfloat162_raw { unsigned short x, y; };

namespace std {
template <> struct is_floating_point<__half> : true_type {};
template <> struct is_floating_point<__nv_bfloat16> : true_type {};
}  // namespace std

// EMU_HALF_FNS defines the intrinsics of a 16-bit type H, its pair H2,
// named with P (h or the bfloat16 spellings CUDA shares).
#define EMU_HALF_FNS(H, H2)                                                                       \
  inline H __hadd(H a, H b) { return a + b; }                                                     \
  inline H __hsub(H a, H b) { return a - b; }                                                     \
  inline H __hmul(H a, H b) { return a * b; }                                                     \
  inline H __hdiv(H a, H b) { return a / b; }                                                     \
  inline H __hadd_rn(H a, H b) { return a + b; }                                                  \
  inline H __hsub_rn(H a, H b) { return a - b; }                                                 \
  inline H __hmul_rn(H a, H b) { return a * b; }                                                  \
  inline H __hadd_sat(H a, H b) { return H(__saturatef(float(a) + float(b))); }                   \
  inline H __hmul_sat(H a, H b) { return H(__saturatef(float(a) * float(b))); }                   \
  inline H __hfma(H a, H b, H c) { return H(std::fma(float(a), float(b), float(c))); }            \
  inline H __hfma_sat(H a, H b, H c) { return H(__saturatef(std::fma(float(a), float(b), float(c)))); } \
  inline H __hfma_relu(H a, H b, H c) { float r = std::fma(float(a), float(b), float(c)); return H(r < 0 ? 0.0f : r); } \
  inline H __hneg(H a) { return -a; }                                                             \
  inline H __habs(H a) { H r = a; r.__x &= 0x7fff; return r; }                                    \
  inline H __hmax(H a, H b) { return H(std::fmax(float(a), float(b))); }                          \
  inline H __hmin(H a, H b) { return H(std::fmin(float(a), float(b))); }                          \
  inline H __hmax_nan(H a, H b) { return std::isnan(float(a)) || std::isnan(float(b)) ? H(NAN) : __hmax(a, b); } \
  inline H __hmin_nan(H a, H b) { return std::isnan(float(a)) || std::isnan(float(b)) ? H(NAN) : __hmin(a, b); } \
  inline bool __heq(H a, H b) { return float(a) == float(b); }                                    \
  inline bool __hne(H a, H b) { return float(a) < float(b) || float(a) > float(b); }              \
  inline bool __hneu(H a, H b) { return !(float(a) == float(b)); }                                \
  inline bool __hlt(H a, H b) { return float(a) < float(b); }                                     \
  inline bool __hle(H a, H b) { return float(a) <= float(b); }                                    \
  inline bool __hgt(H a, H b) { return float(a) > float(b); }                                     \
  inline bool __hge(H a, H b) { return float(a) >= float(b); }                                    \
  inline bool __hisnan(H a) { return std::isnan(float(a)); }                                      \
  inline int __hisinf(H a) { float f = float(a); return std::isinf(f) ? (f < 0 ? -1 : 1) : 0; }   \
  inline H hexp(H a) { return H(std::exp(float(a))); }                                            \
  inline H hexp2(H a) { return H(std::exp2(float(a))); }                                          \
  inline H hexp10(H a) { return H(std::pow(10.0f, float(a))); }                                   \
  inline H hlog(H a) { return H(std::log(float(a))); }                                            \
  inline H hlog2(H a) { return H(std::log2(float(a))); }                                          \
  inline H hlog10(H a) { return H(std::log10(float(a))); }                                        \
  inline H hsqrt(H a) { return H(std::sqrt(float(a))); }                                          \
  inline H hrsqrt(H a) { return H(1.0f / std::sqrt(float(a))); }                                  \
  inline H hrcp(H a) { return H(1.0f / float(a)); }                                               \
  inline H hsin(H a) { return H(std::sin(float(a))); }                                            \
  inline H hcos(H a) { return H(std::cos(float(a))); }                                            \
  inline H htanh(H a) { return H(std::tanh(float(a))); }                                          \
  inline H hfloor(H a) { return H(std::floor(float(a))); }                                        \
  inline H hceil(H a) { return H(std::ceil(float(a))); }                                          \
  inline H htrunc(H a) { return H(std::trunc(float(a))); }                                        \
  inline H hrint(H a) { return H(std::nearbyint(float(a))); }                                     \
  inline H2 __hadd2(H2 a, H2 b) { return H2(a.x + b.x, a.y + b.y); }                              \
  inline H2 __hsub2(H2 a, H2 b) { return H2(a.x - b.x, a.y - b.y); }                              \
  inline H2 __hmul2(H2 a, H2 b) { return H2(a.x * b.x, a.y * b.y); }                              \
  inline H2 __h2div(H2 a, H2 b) { return H2(a.x / b.x, a.y / b.y); }                              \
  inline H2 __hfma2(H2 a, H2 b, H2 c) { return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
  inline H2 __hneg2(H2 a) { return H2(-a.x, -a.y); }                                              \
  inline H2 __habs2(H2 a) { return H2(__habs(a.x), __habs(a.y)); }                                \
  inline H2 __hmax2(H2 a, H2 b) { return H2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }                \
  inline H2 __hmin2(H2 a, H2 b) { return H2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }                \
  inline H2 h2exp(H2 a) { return H2(hexp(a.x), hexp(a.y)); }                                      \
  inline H2 h2log(H2 a) { return H2(hlog(a.x), hlog(a.y)); }                                      \
  inline H2 h2sqrt(H2 a) { return H2(hsqrt(a.x), hsqrt(a.y)); }                                   \
  inline H2 h2rsqrt(H2 a) { return H2(hrsqrt(a.x), hrsqrt(a.y)); }                                \
  inline H2 operator+(const H2& a, const H2& b) { return __hadd2(a, b); }                         \
  inline H2 operator-(const H2& a, const H2& b) { return __hsub2(a, b); }                         \
  inline H2 operator*(const H2& a, const H2& b) { return __hmul2(a, b); }                         \
  inline H2 operator/(const H2& a, const H2& b) { return __h2div(a, b); }                         \
  inline H2& operator+=(H2& a, const H2& b) { return a = a + b; }                                 \
  inline H2& operator-=(H2& a, const H2& b) { return a = a - b; }                                 \
  inline H2& operator*=(H2& a, const H2& b) { return a = a * b; }                                 \
  inline H2 operator-(const H2& a) { return __hneg2(a); }                                         \
  inline bool operator==(const H2& a, const H2& b) { return a.x == b.x && a.y == b.y; }           \
  inline bool operator!=(const H2& a, const H2& b) { return !(a == b); }                          \
  inline float __low2float(H2 a) { return float(a.x); }                                           \
  inline float __high2float(H2 a) { return float(a.y); }                                          \
  inline H __low2half(H2 a) { return a.x; }                                                       \
  inline H __high2half(H2 a) { return a.y; }                                                      \
  inline H __low2bfloat16(H2 a) { return a.x; }                                                   \
  inline H __high2bfloat16(H2 a) { return a.y; }                                                  \
  inline H2 __lows2half2(H2 a, H2 b) { return H2(a.x, b.x); }                                     \
  inline H2 __highs2half2(H2 a, H2 b) { return H2(a.y, b.y); }                                    \
  inline H2 __lows2bfloat162(H2 a, H2 b) { return H2(a.x, b.x); }                                 \
  inline H2 __highs2bfloat162(H2 a, H2 b) { return H2(a.y, b.y); }                                \
  inline H2 __low2half2(H2 a) { return H2(a.x, a.x); }                                            \
  inline H2 __high2half2(H2 a) { return H2(a.y, a.y); }                                           \
  inline H2 __low2bfloat162(H2 a) { return H2(a.x, a.x); }                                        \
  inline H2 __high2bfloat162(H2 a) { return H2(a.y, a.y); }                                       \
  inline H2 __lowhigh2highlow(H2 a) { return H2(a.y, a.x); }                                      \
  inline H2 __halves2half2(H a, H b) { return H2(a, b); }                                         \
  inline H2 __halves2bfloat162(H a, H b) { return H2(a, b); }                                     \
  inline H2 __half2half2(H a) { return H2(a, a); }                                                \
  inline H2 __bfloat162bfloat162(H a) { return H2(a, a); }                                        \
  inline float2 emu_to_float2(H2 a) { return float2{float(a.x), float(a.y)}; }

EMU_HALF_FNS(__half, __half2)
EMU_HALF_FNS(__nv_bfloat16, __nv_bfloat162)
#undef EMU_HALF_FNS

// conversions, by CUDA's names
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return float(h); }
inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline float2 __half22float2(__half2 h) { return emu_to_float2(h); }
inline __half __int2half_rn(int v) { return __half(v); }
inline __half __uint2half_rn(unsigned v) { return __half(v); }
inline __half __short2half_rn(short v) { return __half(v); }
inline __half __ushort2half_rn(unsigned short v) { return __half(v); }
inline __half __ll2half_rn(long long v) { return __half(v); }
inline __half __ull2half_rn(unsigned long long v) { return __half(v); }
inline int __half2int_rn(__half h) { return int(std::nearbyint(float(h))); }
inline int __half2int_rz(__half h) { return int(float(h)); }
inline unsigned __half2uint_rn(__half h) { return unsigned(std::nearbyint(float(h))); }
inline unsigned __half2uint_rz(__half h) { return unsigned(float(h)); }
inline short __half2short_rn(__half h) { return short(std::nearbyint(float(h))); }
inline short __half2short_rz(__half h) { return short(float(h)); }
inline long long __half2ll_rn(__half h) { return (long long)std::nearbyint(float(h)); }
inline long long __half2ll_rz(__half h) { return (long long)float(h); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return (short)h.__x; }
inline __half __ushort_as_half(unsigned short v) { return __half(__half_raw{v}); }
inline __half __short_as_half(short v) { return __half(__half_raw{(unsigned short)v}); }

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  return __nv_bfloat16(__nv_bfloat16_raw{(unsigned short)(std::bit_cast<unsigned>(f) >> 16)});
}
inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y)); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return emu_to_float2(h); }
inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned v) { return __nv_bfloat16(v); }
inline int __bfloat162int_rn(__nv_bfloat16 h) { return int(std::nearbyint(float(h))); }
inline int __bfloat162int_rz(__nv_bfloat16 h) { return int(float(h)); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short v) { return __nv_bfloat16(__nv_bfloat16_raw{v}); }
inline __nv_bfloat16 __short_as_bfloat16(short v) { return __nv_bfloat16(__nv_bfloat16_raw{(unsigned short)v}); }
inline __half __bfloat162half(__nv_bfloat16 h) { return __half(float(h)); }
inline __nv_bfloat16 __half2bfloat16(__half h) { return __nv_bfloat16(float(h)); }
inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
