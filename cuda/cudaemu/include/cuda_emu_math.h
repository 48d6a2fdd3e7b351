// CUDA's device math and bit intrinsics on the CPU (cuda_emu.h).
#pragma once

// ---- reinterpretations -------------------------------------------------
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline int __double2hiint(double x) { return int(std::bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return int(std::bit_cast<unsigned long long>(x)); }
inline double __hiloint2double(int hi, int lo) {
  return std::bit_cast<double>((unsigned long long)(unsigned)hi << 32 | (unsigned)lo);
}

// ---- integer intrinsics -------------------------------------------------
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero((unsigned)x); }
inline int __clzll(long long x) { return std::countl_zero((unsigned long long)x); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero((unsigned)x) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero((unsigned long long)x) + 1; }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (unsigned long long)__brev(unsigned(x)) << 32 | __brev(unsigned(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (unsigned long long)y << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  s &= 31;
  return s == 0 ? hi : (hi << s) | (lo >> (32 - s));
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  s &= 31;
  return s == 0 ? lo : (lo >> s) | (hi << (32 - s));
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) { return __funnelshift_l(lo, hi, s < 32 ? s : 32) ; }
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) { return __funnelshift_r(lo, hi, s < 32 ? s : 32); }
inline int __mul24(int a, int b) { return int((long long)(a << 8 >> 8) * (b << 8 >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
inline int __mulhi(int a, int b) { return int(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? a - b : b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
inline int __hadd(int a, int b) { return int(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return int(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b + 1) >> 1); }

// ---- min / max: CUDA's global overloads -------------------------------
#define EMU_MINMAX(T)                                   \
  inline T min(T a, T b) { return b < a ? b : a; }      \
  inline T max(T a, T b) { return a < b ? b : a; }
EMU_MINMAX(int)
EMU_MINMAX(unsigned)
EMU_MINMAX(long)
EMU_MINMAX(unsigned long)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
EMU_MINMAX(short)
EMU_MINMAX(unsigned short)
EMU_MINMAX(char)
EMU_MINMAX(signed char)
EMU_MINMAX(unsigned char)
#undef EMU_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
// mixed operands: the usual arithmetic conversions, as CUDA's overloads
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return min(C(a), C(b));
}
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return max(C(a), C(b));
}
inline int umin(int a, int b) { return min(a, b); }

// ---- float intrinsics ---------------------------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline void sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline void sincos(double x, double* s, double* c) { *s = std::sin(x), *c = std::cos(x); }
inline void sincospif(float x, float* s, float* c) { *s = std::sin(float(M_PI) * x), *c = std::cos(float(M_PI) * x); }
inline float sinpif(float x) { return std::sin(float(M_PI) * x); }
inline float cospif(float x) { return std::cos(float(M_PI) * x); }
inline double sinpi(double x) { return std::sin(M_PI * x); }
inline double cospi(double x) { return std::cos(M_PI * x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline double exp10(double x) { return std::pow(10.0, x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f); }
inline float saturate(float x) { return __saturatef(x); }
inline float normcdff(float x) { return 0.5f * std::erfc(-x / std::sqrt(2.0f)); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
inline float erfcinvf(float x);
inline float erfinvf(float y) {
  // Newton on erf from a rational first guess: accurate to a few ulps
  if (y <= -1.0f) return -INFINITY;
  if (y >= 1.0f) return INFINITY;
  double x = 0, w = -std::log((1.0 - y) * (1.0 + y));
  x = w < 5 ? (w - 2.5) : (std::sqrt(w) - 3);
  x = y * (1.5 + 0.1 * x);
  for (int i = 0; i < 60; i++) x -= (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return float(x);
}
inline float erfcinvf(float x) { return erfinvf(1.0f - x); }
// The rounding-mode intrinsics: the CPU rounds to nearest even, which is
// what the _rn ones ask (the _rz/_ru/_rd arithmetic ones are rounded to
// nearest too: an approximation).
#define EMU_ROUNDED(OP, EXPR)                                            \
  inline float __f##OP##_rn(float a, float b) { return EXPR; }           \
  inline float __f##OP##_rz(float a, float b) { return EXPR; }           \
  inline float __f##OP##_ru(float a, float b) { return EXPR; }           \
  inline float __f##OP##_rd(float a, float b) { return EXPR; }           \
  inline double __d##OP##_rn(double a, double b) { return EXPR; }        \
  inline double __d##OP##_rz(double a, double b) { return EXPR; }        \
  inline double __d##OP##_ru(double a, double b) { return EXPR; }        \
  inline double __d##OP##_rd(double a, double b) { return EXPR; }
EMU_ROUNDED(add, a + b)
EMU_ROUNDED(sub, a - b)
EMU_ROUNDED(mul, a * b)
EMU_ROUNDED(div, a / b)
#undef EMU_ROUNDED
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmaf_rz(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmaf_ru(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmaf_rd(float a, float b, float c) { return std::fma(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline double __dsqrt_rn(double x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }

// ---- conversions --------------------------------------------------------
inline int __float2int_rn(float x) { return int(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return int(x); }
inline int __float2int_rd(float x) { return int(std::floor(x)); }
inline int __float2int_ru(float x) { return int(std::ceil(x)); }
inline unsigned __float2uint_rn(float x) { return unsigned(std::nearbyint(x)); }
inline unsigned __float2uint_rz(float x) { return unsigned(x); }
inline unsigned __float2uint_rd(float x) { return unsigned(std::floor(x)); }
inline unsigned __float2uint_ru(float x) { return unsigned(std::ceil(x)); }
inline long long __float2ll_rn(float x) { return (long long)std::nearbyint(x); }
inline long long __float2ll_rz(float x) { return (long long)x; }
inline unsigned long long __float2ull_rn(float x) { return (unsigned long long)std::nearbyint(x); }
inline unsigned long long __float2ull_rz(float x) { return (unsigned long long)x; }
inline int __double2int_rn(double x) { return int(std::nearbyint(x)); }
inline int __double2int_rz(double x) { return int(x); }
inline float __double2float_rn(double x) { return float(x); }
inline float __double2float_rz(double x) { return float(x); }
inline long long __double2ll_rn(double x) { return (long long)std::nearbyint(x); }
inline float __int2float_rn(int x) { return float(x); }
inline float __int2float_rz(int x) { return float(x); }
inline float __uint2float_rn(unsigned x) { return float(x); }
inline float __ll2float_rn(long long x) { return float(x); }
inline float __ull2float_rn(unsigned long long x) { return float(x); }
inline double __int2double_rn(int x) { return double(x); }
inline double __ll2double_rn(long long x) { return double(x); }

// ---- loads and stores with a cache hint: plain ones here ---------------
template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline T __ldcg(const T* p) { return *p; }
template <typename T> inline T __ldca(const T* p) { return *p; }
template <typename T> inline T __ldcs(const T* p) { return *p; }
template <typename T> inline T __ldlu(const T* p) { return *p; }
template <typename T> inline T __ldcv(const T* p) { return *p; }
template <typename T> inline void __stcg(T* p, T v) { *p = v; }
template <typename T> inline void __stcs(T* p, T v) { *p = v; }
template <typename T> inline void __stwb(T* p, T v) { *p = v; }
template <typename T> inline void __stwt(T* p, T v) { *p = v; }

// math_constants.h
#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#define CUDART_MIN_DENORM_F __int_as_float(0x00000001)
#define CUDART_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#define CUDART_NEG_ZERO_F __int_as_float(0x80000000)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_2_F 1.414213562f
#define CUDART_PI_F 3.141592654f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_L2E_F 1.442695041f
#define CUDART_LN2_F 0.693147181f
#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)
#define CUDART_NAN __longlong_as_double(0xfff8000000000000ULL)
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_LN2 6.9314718055994529e-1
#define CUDART_L2E 1.4426950408889634e+0
#define CUDART_SQRT_2 1.4142135623730951e+0
