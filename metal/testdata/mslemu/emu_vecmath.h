// Metal's math functions, element-wise on vectors (exp(float4),
// precise::tanh(float4), fast::exp(half4)…) with the scalar forms they
// need; Metal's matrices (float4x4, half2x4…); half literals (16.h).
// Included at the end of metal_stdlib, after the scalar math it builds on.
#pragma once

namespace metal {
// The scalar forms Metal has and the rest of the stdlib does not.
using std::fmax;
using std::fmin;
using std::pow;
#define EMU_HALF_MATH2(F) \
  inline half F(half a, half b) { return half(std::F(float(a), float(b))); }
EMU_HALF_MATH2(fmin)
EMU_HALF_MATH2(fmax)
EMU_HALF_MATH2(pow)
#undef EMU_HALF_MATH2
template <typename T>
  requires std::is_integral_v<T>
inline T abs(T x) { return x < 0 ? T(-x) : x; }
template <typename T>
inline T clamp(T x, T lo, T hi) { return metal::min(metal::max(x, lo), hi); }
// A floating value (float, half, bfloat) with an integer, a literal most
// often: max(x, 0), min(1, x), clamp(x, 0, 1), select(0, x, c) are x's
// type, as on Metal (the integer converts to it).
template <typename F, typename I>
concept emu_float_int = metal::is_floating_point_v<F> && std::is_integral_v<I>;
template <typename A, typename B>
  requires emu_float_int<A, B>
inline A max(A a, B b) { return metal::max(a, A(b)); }
template <typename A, typename B>
  requires emu_float_int<B, A>
inline B max(A a, B b) { return metal::max(B(a), b); }
template <typename A, typename B>
  requires emu_float_int<A, B>
inline A min(A a, B b) { return metal::min(a, A(b)); }
template <typename A, typename B>
  requires emu_float_int<B, A>
inline B min(A a, B b) { return metal::min(B(a), b); }
template <typename T, typename L, typename H>
  requires(metal::is_floating_point_v<T> && (std::is_same_v<L, T> || std::is_integral_v<L>) &&
           (std::is_same_v<H, T> || std::is_integral_v<H>) && !(std::is_same_v<L, T> && std::is_same_v<H, T>))
inline T clamp(T x, L lo, H hi) { return metal::clamp(x, T(lo), T(hi)); }
template <typename A, typename B, typename C>
  requires emu_float_int<A, B>
inline A select(A a, B b, C c) { return c ? A(b) : a; }
template <typename A, typename B, typename C>
  requires emu_float_int<B, A>
inline B select(A a, B b, C c) { return c ? b : B(a); }
template <typename T>
inline T mix(T x, T y, T a) { return x + (y - x) * a; }
template <typename T>
inline T step(T edge, T x) { return x < edge ? T(0) : T(1); }
template <typename T>
inline T saturate(T x) { return metal::clamp(x, T(0), T(1)); }
template <typename T>
inline T fract(T x) { return x - metal::floor(x); }

// F(v) applies the scalar F to each lane.
#define EMU_VEC_UNARY(F)                                     \
  template <typename T, int N>                               \
  inline emu_vec<T, N> F(const emu_vec<T, N>& v) {           \
    emu_vec<T, N> r;                                         \
    for (int i = 0; i < N; i++) r[i] = T(metal::F(v[i]));    \
    return r;                                                \
  }
EMU_VEC_UNARY(exp)
EMU_VEC_UNARY(exp2)
EMU_VEC_UNARY(log)
EMU_VEC_UNARY(log2)
EMU_VEC_UNARY(sqrt)
EMU_VEC_UNARY(rsqrt)
EMU_VEC_UNARY(sin)
EMU_VEC_UNARY(cos)
EMU_VEC_UNARY(tan)
EMU_VEC_UNARY(tanh)
EMU_VEC_UNARY(abs)
EMU_VEC_UNARY(fabs)
EMU_VEC_UNARY(floor)
EMU_VEC_UNARY(ceil)
EMU_VEC_UNARY(round)
EMU_VEC_UNARY(trunc)
EMU_VEC_UNARY(sign)
EMU_VEC_UNARY(saturate)
EMU_VEC_UNARY(fract)
#undef EMU_VEC_UNARY

// F(a, b) lane by lane; either side may be a scalar, which fills every lane.
#define EMU_VEC_BINARY(F)                                                         \
  template <typename T, int N>                                                    \
  inline emu_vec<T, N> F(const emu_vec<T, N>& a, const emu_vec<T, N>& b) {        \
    emu_vec<T, N> r;                                                              \
    for (int i = 0; i < N; i++) r[i] = T(metal::F(a[i], b[i]));                   \
    return r;                                                                     \
  }                                                                               \
  template <typename T, int N>                                                    \
  inline emu_vec<T, N> F(const emu_vec<T, N>& a, std::type_identity_t<T> b) {     \
    return metal::F(a, emu_vec<T, N>(b));                                         \
  }                                                                               \
  template <typename T, int N>                                                    \
  inline emu_vec<T, N> F(std::type_identity_t<T> a, const emu_vec<T, N>& b) {     \
    return metal::F(emu_vec<T, N>(a), b);                                         \
  }
EMU_VEC_BINARY(min)
EMU_VEC_BINARY(max)
EMU_VEC_BINARY(fmin)
EMU_VEC_BINARY(fmax)
EMU_VEC_BINARY(pow)
EMU_VEC_BINARY(step)
#undef EMU_VEC_BINARY

// F(a, b, c) lane by lane; b and c may be scalars (clamp(v, 0.0f, 1.0f),
// mix(x, y, 0.5f)).
#define EMU_VEC_TERNARY(F)                                                                         \
  template <typename T, int N>                                                                     \
  inline emu_vec<T, N> F(const emu_vec<T, N>& a, const emu_vec<T, N>& b, const emu_vec<T, N>& c) { \
    emu_vec<T, N> r;                                                                               \
    for (int i = 0; i < N; i++) r[i] = T(metal::F(a[i], b[i], c[i]));                              \
    return r;                                                                                      \
  }                                                                                                \
  template <typename T, int N>                                                                     \
  inline emu_vec<T, N> F(const emu_vec<T, N>& a, std::type_identity_t<T> b, std::type_identity_t<T> c) { \
    return metal::F(a, emu_vec<T, N>(b), emu_vec<T, N>(c));                                        \
  }                                                                                                \
  template <typename T, int N>                                                                     \
  inline emu_vec<T, N> F(const emu_vec<T, N>& a, const emu_vec<T, N>& b, std::type_identity_t<T> c) { \
    return metal::F(a, b, emu_vec<T, N>(c));                                                       \
  }
EMU_VEC_TERNARY(clamp)
EMU_VEC_TERNARY(mix)
EMU_VEC_TERNARY(fma)
#undef EMU_VEC_TERNARY

// select(a, b, c): b in the lanes where c holds, else a; c a bool vector
// or one bool for every lane.
template <typename T, int N>
inline emu_vec<T, N> select(const emu_vec<T, N>& a, const emu_vec<T, N>& b, const emu_vec<bool, N>& c) {
  emu_vec<T, N> r;
  for (int i = 0; i < N; i++) r[i] = c[i] ? b[i] : a[i];
  return r;
}
template <typename T, int N>
inline emu_vec<T, N> select(const emu_vec<T, N>& a, const emu_vec<T, N>& b, bool c) { return c ? b : a; }
using ::all;
using ::any;

// precise:: and fast:: spell the same functions (the emulation computes
// each precisely).
#define EMU_MATH_NAMES                                                                             \
  using metal::exp, metal::exp2, metal::log, metal::log2, metal::sqrt, metal::rsqrt, metal::sin,   \
      metal::cos, metal::tan, metal::tanh, metal::abs, metal::fabs, metal::floor, metal::ceil,     \
      metal::round, metal::trunc, metal::sign, metal::saturate, metal::fract, metal::min,          \
      metal::max, metal::fmin, metal::fmax, metal::pow, metal::step, metal::clamp, metal::mix,     \
      metal::fma, metal::select;
namespace precise {
EMU_MATH_NAMES
}  // namespace precise
namespace fast {
EMU_MATH_NAMES
}  // namespace fast
#undef EMU_MATH_NAMES
}  // namespace metal

// Metal's matrices: floatCxR has C columns of R lanes (float2x4: two
// float4 columns), stored column by column as C vectors (so float3x3
// takes 48 bytes, as on Metal); m[i] is column i. Built from one scalar
// (that value on the diagonal, 0 elsewhere), from C columns, from C*R
// scalars column by column, or from a matrix of another element type
// (explicit: (half4x4)m). Products: matrix * vector (a vector of R),
// vector * matrix (a vector of C: each lane the dot with a column),
// matrix * matrix, and a scalar; + and - element-wise; transpose.
template <typename T, int Cols, int Rows>
struct emu_mat {
  emu_vec<T, Rows> columns[Cols];
  emu_mat() = default;
  explicit emu_mat(T diagonal) {
    for (int c = 0; c < Cols; c++) {
      columns[c] = emu_vec<T, Rows>(T(0));
      if (c < Rows) columns[c][c] = diagonal;
    }
  }
  template <typename... Columns>
    requires(sizeof...(Columns) == Cols && (std::is_same_v<Columns, emu_vec<T, Rows>> && ...))
  emu_mat(const Columns&... cols) : columns{cols...} {}
  template <typename... Scalars>
    requires(sizeof...(Scalars) == Cols * Rows && ((!emu_is_vec<Scalars>::value && std::is_convertible_v<Scalars, T>) && ...))
  emu_mat(Scalars... s) {
    const T all[] = {T(s)...};
    for (int i = 0; i < Cols * Rows; i++) columns[i / Rows][i % Rows] = all[i];
  }
  template <typename U>
  explicit emu_mat(const emu_mat<U, Cols, Rows>& o) {
    for (int c = 0; c < Cols; c++) columns[c] = emu_vec<T, Rows>(o[c]);
  }
  emu_vec<T, Rows>& operator[](int c) { return columns[c]; }
  const emu_vec<T, Rows>& operator[](int c) const { return columns[c]; }
};
template <typename T, int Cols, int Rows>
inline emu_vec<T, Rows> operator*(const emu_mat<T, Cols, Rows>& m, const emu_vec<T, Cols>& v) {
  emu_vec<T, Rows> r = m[0] * v[0];
  for (int c = 1; c < Cols; c++) r += m[c] * v[c];
  return r;
}
template <typename T, int Cols, int Rows>
inline emu_vec<T, Cols> operator*(const emu_vec<T, Rows>& v, const emu_mat<T, Cols, Rows>& m) {
  emu_vec<T, Cols> r;
  for (int c = 0; c < Cols; c++) r[c] = dot(v, m[c]);
  return r;
}
template <typename T, int OutCols, int Cols, int Rows>
inline emu_mat<T, OutCols, Rows> operator*(const emu_mat<T, Cols, Rows>& a, const emu_mat<T, OutCols, Cols>& b) {
  emu_mat<T, OutCols, Rows> r;
  for (int k = 0; k < OutCols; k++) r[k] = a * b[k];
  return r;
}
#define EMU_MAT_OP(OP)                                                                               \
  template <typename T, int Cols, int Rows>                                                                \
  inline emu_mat<T, Cols, Rows> operator OP(emu_mat<T, Cols, Rows> a, const emu_mat<T, Cols, Rows>& b) {               \
    for (int c = 0; c < Cols; c++) a[c] = a[c] OP b[c];                                                 \
    return a;                                                                                        \
  }                                                                                                  \
  template <typename T, int Cols, int Rows>                                                                \
  inline emu_mat<T, Cols, Rows>& operator OP##=(emu_mat<T, Cols, Rows>& a, const emu_mat<T, Cols, Rows>& b) { return a = a OP b; }
EMU_MAT_OP(+)
EMU_MAT_OP(-)
#undef EMU_MAT_OP
template <typename T, int Cols, int Rows>
inline emu_mat<T, Cols, Rows> operator*(emu_mat<T, Cols, Rows> m, std::type_identity_t<T> s) {
  for (int c = 0; c < Cols; c++) m[c] = m[c] * s;
  return m;
}
template <typename T, int Cols, int Rows>
inline emu_mat<T, Cols, Rows> operator*(std::type_identity_t<T> s, const emu_mat<T, Cols, Rows>& m) { return m * s; }
template <typename T, int Cols, int Rows>
inline emu_mat<T, Cols, Rows>& operator*=(emu_mat<T, Cols, Rows>& m, std::type_identity_t<T> s) { return m = m * s; }
template <typename T, int Cols, int Rows>
inline emu_mat<T, Rows, Cols> transpose(const emu_mat<T, Cols, Rows>& m) {
  emu_mat<T, Rows, Cols> t;
  for (int c = 0; c < Cols; c++)
    for (int r = 0; r < Rows; r++) t[r][c] = m[c][r];
  return t;
}
namespace metal {
using ::transpose;
}  // namespace metal
#define EMU_MAT_TYPES(T)                 \
  typedef emu_mat<T, 2, 2> T##2x2;       \
  typedef emu_mat<T, 2, 3> T##2x3;       \
  typedef emu_mat<T, 2, 4> T##2x4;       \
  typedef emu_mat<T, 3, 2> T##3x2;       \
  typedef emu_mat<T, 3, 3> T##3x3;       \
  typedef emu_mat<T, 3, 4> T##3x4;       \
  typedef emu_mat<T, 4, 2> T##4x2;       \
  typedef emu_mat<T, 4, 3> T##4x3;       \
  typedef emu_mat<T, 4, 4> T##4x4;
EMU_MAT_TYPES(float)
EMU_MAT_TYPES(half)
#if defined(__HAVE_BFLOAT__)
EMU_MAT_TYPES(bfloat)
#endif
#undef EMU_MAT_TYPES
// metal::matrix<T, C, R> is the matrix type (bfloat4x4 where a source
// declares it itself).
namespace metal {
template <typename T, int C, int R>
using matrix = emu_mat<T, C, R>;
}  // namespace metal

// Half literals: 16.h, 0.5h, -8.h are half, as in Metal (g++ reserves
// suffixes without an underscore for the standard and only warns).
constexpr half operator""h(long double v) { return half(v); }
constexpr half operator""h(unsigned long long v) { return half(v); }
