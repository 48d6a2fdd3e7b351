// What Metal's stdlib declares about its types beyond the vectors: the
// limits of float, half and the integers (FLT_MAX, HALF_MAX, MAXHALF,
// INT_MAX…), <metal_type_traits> (metal::is_same, enable_if, conditional,
// is_floating_point that counts half…), and the packed vectors
// (packed_float3, packed_char4…: a vector without its alignment, of its
// lanes' size, for storage; indexing, .x .y .z .w, conversion to and from
// the vector, arithmetic giving a vector). Included by metal_stdlib after
// emu_vector.h.
#pragma once
#include <cfloat>
#include <climits>

// half's limits, as half values (Metal spells them as half literals).
#define HALF_DIG 2
#define HALF_MANT_DIG 11
#define HALF_MAX_10_EXP 4
#define HALF_MAX_EXP 16
#define HALF_MIN_10_EXP -4
#define HALF_MIN_EXP -13
#define HALF_RADIX 2
#define HALF_MAX ((half)65504.0f)
#define HALF_MIN ((half)6.103515625e-05f)
#define HALF_EPSILON ((half)9.765625e-04f)
#define MAXHALF HALF_MAX
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif

namespace metal {
// The standard traits Metal has, under its names.
using std::add_const;
using std::add_const_t;
using std::bool_constant;
using std::conditional;
using std::conditional_t;
using std::decay;
using std::decay_t;
using std::enable_if;
using std::enable_if_t;
using std::false_type;
using std::integral_constant;
using std::is_base_of;
using std::is_base_of_v;
using std::is_const;
using std::is_const_v;
using std::is_convertible;
using std::is_convertible_v;
using std::is_integral;
using std::is_integral_v;
using std::is_pointer;
using std::is_pointer_v;
using std::is_same;
using std::is_same_v;
using std::is_unsigned;
using std::is_unsigned_v;
using std::make_signed;
using std::make_signed_t;
using std::make_unsigned;
using std::make_unsigned_t;
using std::remove_const;
using std::remove_const_t;
using std::remove_cv;
using std::remove_cv_t;
using std::remove_pointer;
using std::remove_pointer_t;
using std::remove_reference;
using std::remove_reference_t;
using std::true_type;

// half (and bfloat) are floating-point types in Metal; g++ 12's std
// traits do not count _Float16.
template <typename T>
struct is_floating_point
    : bool_constant<std::is_floating_point_v<std::remove_cv_t<T>> || std::is_same_v<std::remove_cv_t<T>, half>
#if defined(__HAVE_BFLOAT__)
                    || std::is_same_v<std::remove_cv_t<T>, bfloat>
#endif
                    > {
};
template <typename T>
inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <typename T>
struct is_arithmetic : bool_constant<std::is_integral_v<T> || is_floating_point_v<T>> {};
template <typename T>
inline constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <typename T>
struct is_signed : bool_constant<std::is_signed_v<T> || is_floating_point_v<T>> {};
template <typename T>
inline constexpr bool is_signed_v = is_signed<T>::value;
template <typename T>
struct is_scalar : bool_constant<is_arithmetic_v<T> || std::is_scalar_v<T>> {};
template <typename T>
inline constexpr bool is_scalar_v = is_scalar<T>::value;

// Metal's own: metal::vec<T, N> is the vector type, is_vector tells one.
template <typename T, int N>
using vec = emu_vec<T, N>;
template <typename T>
struct is_vector : bool_constant<emu_is_vec<std::remove_cv_t<T>>::value> {};
template <typename T>
inline constexpr bool is_vector_v = is_vector<T>::value;
}  // namespace metal

// A packed vector: the lanes of emu_vec<T, N> with T's alignment and
// N * sizeof(T) bytes (packed_float3 is 12 bytes, a float3 16).
template <typename T, int N>
struct emu_packed;
#define EMU_PACKED_BODY(N)                                                    \
  using value_type = T;                                                       \
  static constexpr int emu_packed_lanes = N;                                  \
  emu_packed() = default;                                                     \
  emu_packed(const emu_vec<T, N>& v) {                                        \
    for (int i = 0; i < N; i++) (*this)[i] = v[i];                            \
  }                                                                           \
  operator emu_vec<T, N>() const {                                            \
    emu_vec<T, N> v;                                                          \
    for (int i = 0; i < N; i++) v[i] = (*this)[i];                            \
    return v;                                                                 \
  }                                                                           \
  T& operator[](int i) { return (&x)[i]; }                                    \
  const T& operator[](int i) const { return (&x)[i]; }
template <typename T>
struct emu_packed<T, 2> {
  T x, y;
  emu_packed(T a, T b) : x(a), y(b) {}
  EMU_PACKED_BODY(2)
};
template <typename T>
struct emu_packed<T, 3> {
  T x, y, z;
  emu_packed(T a, T b, T c) : x(a), y(b), z(c) {}
  EMU_PACKED_BODY(3)
};
template <typename T>
struct emu_packed<T, 4> {
  T x, y, z, w;
  emu_packed(T a, T b, T c, T d) : x(a), y(b), z(c), w(d) {}
  EMU_PACKED_BODY(4)
};
#undef EMU_PACKED_BODY

// Arithmetic with a packed vector on either side computes on the vector.
#define EMU_PACKED_OP(OP)                                                                         \
  template <typename T, int N>                                                                    \
  inline emu_vec<T, N> operator OP(const emu_packed<T, N>& a, const emu_packed<T, N>& b) {        \
    return emu_vec<T, N>(a) OP emu_vec<T, N>(b);                                                  \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  inline emu_vec<T, N> operator OP(const emu_packed<T, N>& a, const emu_vec<T, N>& b) {           \
    return emu_vec<T, N>(a) OP b;                                                                 \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  inline emu_vec<T, N> operator OP(const emu_vec<T, N>& a, const emu_packed<T, N>& b) {           \
    return a OP emu_vec<T, N>(b);                                                                 \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  inline emu_vec<T, N> operator OP(const emu_packed<T, N>& a, std::type_identity_t<T> s) {        \
    return emu_vec<T, N>(a) OP s;                                                                 \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  inline emu_vec<T, N> operator OP(std::type_identity_t<T> s, const emu_packed<T, N>& b) {        \
    return s OP emu_vec<T, N>(b);                                                                 \
  }
EMU_PACKED_OP(+)
EMU_PACKED_OP(-)
EMU_PACKED_OP(*)
EMU_PACKED_OP(/)
#undef EMU_PACKED_OP

#define EMU_PACKED_TYPES(T, NAME)             \
  typedef emu_packed<T, 2> packed_##NAME##2;  \
  typedef emu_packed<T, 3> packed_##NAME##3;  \
  typedef emu_packed<T, 4> packed_##NAME##4;
EMU_PACKED_TYPES(float, float)
EMU_PACKED_TYPES(half, half)
EMU_PACKED_TYPES(int, int)
EMU_PACKED_TYPES(uint, uint)
EMU_PACKED_TYPES(short, short)
EMU_PACKED_TYPES(ushort, ushort)
EMU_PACKED_TYPES(char, char)
EMU_PACKED_TYPES(uchar, uchar)
#if defined(__HAVE_BFLOAT__)
EMU_PACKED_TYPES(bfloat, bfloat)
#endif
#undef EMU_PACKED_TYPES

// emu_fill_through(a, last, v) sets lanes 0 through last of the array a
// to v: the emulation of a GNU range initializer `{ [0 ... last] = v }`
// (the text rewrite zeroes the array first, as the rest is zero there).
template <typename T, size_t N, typename V>
inline void emu_fill_through(T (&a)[N], long last, const V& v) {
  for (long i = 0; i <= last && i < long(N); i++) a[i] = T(v);
}
