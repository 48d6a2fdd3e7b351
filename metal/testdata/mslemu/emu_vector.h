// Metal's vector types of 2, 3 and 4 lanes for every scalar type (float4,
// half4, int2, uint3, ushort3, uchar4, ulong2, bool4, bfloat4…), as kernels
// load and compute with them: the lanes .x .y .z .w and [i] (const and not),
// Metal's size and alignment (a 3-lane vector takes 4 lanes' room), one
// scalar filling every lane (`float4 acc = 0.0f;`), vectors built from
// smaller ones (float4(v.x, f2, 1.0f) style: float4(float2, float2)),
// element-wise arithmetic, bitwise and shift operators with a vector or a
// scalar, comparisons giving bool vectors, all/any, conversion between
// element types (float4(h) of a half4), and dot. Swizzles (.xy) are not
// emulated. Included by metal_stdlib after its scalar types.
#pragma once

template <typename T, int N>
struct emu_vec;
template <typename V>
struct emu_is_vec : std::false_type {};
template <typename T, int N>
struct emu_is_vec<emu_vec<T, N>> : std::true_type {};
// How many lanes an argument of a vector constructor fills.
template <typename Part>
inline constexpr int emu_lanes = 1;
template <typename T, int N>
inline constexpr int emu_lanes<emu_vec<T, N>> = N;

#define EMU_VEC_BODY(N)                                                                             \
  using value_type = T;                                                                             \
  emu_vec() = default;                                                                              \
  emu_vec(T s) {                                                                                    \
    for (int i = 0; i < N; i++) (*this)[i] = s;                                                     \
  }                                                                                                 \
  template <typename U>                                                                             \
  explicit emu_vec(const emu_vec<U, N>& o) {                                                        \
    for (int i = 0; i < N; i++) (*this)[i] = T(o[i]);                                               \
  }                                                                                                 \
  template <typename... Part>                                                                       \
    requires(sizeof...(Part) >= 2 && (emu_lanes<Part> + ...) == N && (emu_is_vec<Part>::value || ...))\
  explicit emu_vec(const Part&... parts) {                                                          \
    int at = 0;                                                                                     \
    (emu_put(at, parts), ...);                                                                      \
  }                                                                                                 \
  /* a packed vector (emu_types.h) of the same lanes, converted lane by lane */                    \
  template <typename P>                                                                             \
    requires(P::emu_packed_lanes == N)                                                              \
  explicit emu_vec(const P& p) {                                                                    \
    for (int i = 0; i < N; i++) (*this)[i] = T(p[i]);                                               \
  }                                                                                                 \
  /* a scalar of another type fills every lane (bfloat4 v; v = 0;) */                              \
  template <typename S>                                                                             \
    requires(std::is_arithmetic_v<S> && !std::is_same_v<S, T>)                                      \
  emu_vec& operator=(S s) {                                                                         \
    return *this = emu_vec(T(s));                                                                   \
  }                                                                                                 \
  T& operator[](int i) { return (&x)[i]; }                                                          \
  const T& operator[](int i) const { return (&x)[i]; }                                              \
                                                                                                    \
 private:                                                                                           \
  template <typename Part>                                                                          \
  void emu_put(int& at, const Part& a) {                                                            \
    if constexpr (emu_is_vec<Part>::value) {                                                        \
      for (int i = 0; i < emu_lanes<Part>; i++) (*this)[at++] = T(a[i]);                            \
    } else {                                                                                        \
      (*this)[at++] = T(a);                                                                         \
    }                                                                                               \
  }                                                                                                 \
                                                                                                    \
 public:
template <typename T>
struct alignas(2 * sizeof(T)) emu_vec<T, 2> {
  T x, y;
  emu_vec(T a, T b) : x(a), y(b) {}
  EMU_VEC_BODY(2)
};
// A brace list shorter than the vector zero-fills the other lanes, as
// Metal's does (MLX's threefry: `uint4 ks = {k.x, k.y, k.x ^ k.y ^ C};`).
template <typename T>
struct alignas(4 * sizeof(T)) emu_vec<T, 3> {
  T x, y, z;
  emu_vec(T a, T b, T c) : x(a), y(b), z(c) {}
  emu_vec(T a, T b) : x(a), y(b), z() {}
  EMU_VEC_BODY(3)
};
template <typename T>
struct alignas(4 * sizeof(T)) emu_vec<T, 4> {
  T x, y, z, w;
  emu_vec(T a, T b, T c, T d) : x(a), y(b), z(c), w(d) {}
  emu_vec(T a, T b, T c) : x(a), y(b), z(c), w() {}
  emu_vec(T a, T b) : x(a), y(b), z(), w() {}
  EMU_VEC_BODY(4)
};
#undef EMU_VEC_BODY

// a OP= b, a OP b with a vector or a scalar on either side.
#define EMU_VEC_OP(OP)                                                                              \
  template <typename T, int N>                                                                      \
  inline emu_vec<T, N>& operator OP##=(emu_vec<T, N>& a, const emu_vec<T, N>& b) {                  \
    for (int i = 0; i < N; i++) a[i] = a[i] OP b[i];                                                \
    return a;                                                                                       \
  }                                                                                                 \
  template <typename T, int N>                                                                      \
  inline emu_vec<T, N>& operator OP##=(emu_vec<T, N>& a, std::type_identity_t<T> s) {               \
    return a OP## = emu_vec<T, N>(s);                                                               \
  }                                                                                                 \
  template <typename T, int N>                                                                      \
  inline emu_vec<T, N> operator OP(emu_vec<T, N> a, const emu_vec<T, N>& b) { return a OP## = b; }  \
  template <typename T, int N>                                                                      \
  inline emu_vec<T, N> operator OP(emu_vec<T, N> a, std::type_identity_t<T> s) {                    \
    return a OP## = emu_vec<T, N>(s);                                                               \
  }                                                                                                 \
  template <typename T, int N>                                                                      \
  inline emu_vec<T, N> operator OP(std::type_identity_t<T> s, const emu_vec<T, N>& b) {             \
    return emu_vec<T, N>(s) OP b;                                                                   \
  }
EMU_VEC_OP(+)
EMU_VEC_OP(-)
EMU_VEC_OP(*)
EMU_VEC_OP(/)
EMU_VEC_OP(%)
EMU_VEC_OP(&)
EMU_VEC_OP(|)
EMU_VEC_OP(^)
EMU_VEC_OP(<<)
EMU_VEC_OP(>>)
#undef EMU_VEC_OP
template <typename T, int N>
inline emu_vec<T, N> operator-(emu_vec<T, N> a) {
  for (int i = 0; i < N; i++) a[i] = -a[i];
  return a;
}
template <typename T, int N>
inline emu_vec<T, N> operator~(emu_vec<T, N> a) {
  for (int i = 0; i < N; i++) a[i] = ~a[i];
  return a;
}
template <int N>
inline emu_vec<bool, N> operator!(emu_vec<bool, N> a) {
  for (int i = 0; i < N; i++) a[i] = !a[i];
  return a;
}

// Comparisons are element-wise and give a bool vector (select, all, any).
#define EMU_VEC_CMP(OP)                                                                             \
  template <typename T, int N>                                                                      \
  inline emu_vec<bool, N> operator OP(const emu_vec<T, N>& a, const emu_vec<T, N>& b) {             \
    emu_vec<bool, N> r;                                                                             \
    for (int i = 0; i < N; i++) r[i] = a[i] OP b[i];                                                \
    return r;                                                                                       \
  }                                                                                                 \
  template <typename T, int N>                                                                      \
  inline emu_vec<bool, N> operator OP(const emu_vec<T, N>& a, std::type_identity_t<T> s) {          \
    return a OP emu_vec<T, N>(s);                                                                   \
  }                                                                                                 \
  template <typename T, int N>                                                                      \
  inline emu_vec<bool, N> operator OP(std::type_identity_t<T> s, const emu_vec<T, N>& b) {          \
    return emu_vec<T, N>(s) OP b;                                                                   \
  }
EMU_VEC_CMP(==)
EMU_VEC_CMP(!=)
EMU_VEC_CMP(<)
EMU_VEC_CMP(<=)
EMU_VEC_CMP(>)
EMU_VEC_CMP(>=)
#undef EMU_VEC_CMP

template <typename T, int N>
inline T dot(const emu_vec<T, N>& a, const emu_vec<T, N>& b) {
  T r = a[0] * b[0];
  for (int i = 1; i < N; i++) r += a[i] * b[i];
  return r;
}
template <int N>
inline bool all(const emu_vec<bool, N>& b) {
  for (int i = 0; i < N; i++)
    if (!b[i]) return false;
  return true;
}
template <int N>
inline bool any(const emu_vec<bool, N>& b) {
  for (int i = 0; i < N; i++)
    if (b[i]) return true;
  return false;
}

#define EMU_VEC_TYPES(T, NAME)   \
  typedef emu_vec<T, 2> NAME##2; \
  typedef emu_vec<T, 3> NAME##3; \
  typedef emu_vec<T, 4> NAME##4;
EMU_VEC_TYPES(float, float)
EMU_VEC_TYPES(half, half)
EMU_VEC_TYPES(int, int)
EMU_VEC_TYPES(uint, uint)
EMU_VEC_TYPES(short, short)
EMU_VEC_TYPES(ushort, ushort)
EMU_VEC_TYPES(char, char)
EMU_VEC_TYPES(uchar, uchar)
EMU_VEC_TYPES(long, long)
EMU_VEC_TYPES(ulong, ulong)
EMU_VEC_TYPES(bool, bool)
#if defined(__HAVE_BFLOAT__)
EMU_VEC_TYPES(bfloat, bfloat)
#endif
#undef EMU_VEC_TYPES

// emu_pos_as<V>(p) is a thread-position value p as a parameter of type V
// takes it: a uint2 or ushort3 [[thread_position_in_grid]] gets p's first
// lanes in its element type.
template <typename V>
inline V emu_pos_as(const uint3& p) {
  V v;
  for (int i = 0; i < emu_lanes<V>; i++) v[i] = typename V::value_type(p[i]);
  return v;
}
