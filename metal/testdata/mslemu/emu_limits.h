// Metal's numeric_limits (<metal_limits>), vec_elements, clz/ctz/popcount
// (<metal_integer>) and divide, as candle's reduce.metal and MLX's utils.h
// use them. numeric_limits<T> derives from _numeric_limits_impl<T>, a
// class template at global scope as in Apple's header, which a source may
// specialize for its own type (candle: _numeric_limits_impl<indexed<T>>).
// Included at the end of metal_stdlib.
#pragma once
#include <bit>
#include <limits>

template <typename T>
struct _numeric_limits_impl : std::numeric_limits<T> {};

// half: g++ 12 has no std::numeric_limits<_Float16>; Metal's values.
template <>
struct _numeric_limits_impl<half> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 11, radix = 2;
  static constexpr half min() { return half(6.103515625e-05f); }
  static constexpr half max() { return half(65504.0f); }
  static constexpr half lowest() { return half(-65504.0f); }
  static constexpr half epsilon() { return half(0.0009765625f); }
  static constexpr half denorm_min() { return half(5.9604644775390625e-08f); }
  static constexpr half infinity() { return half(__builtin_inff()); }
  static constexpr half quiet_NaN() { return half(__builtin_nanf("")); }
};

#if defined(__HAVE_BFLOAT__)
constexpr bfloat emu_bfloat_bits(ushort b) {
  bfloat r{};
  r.bits = b;
  return r;
}
template <>
struct _numeric_limits_impl<bfloat> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 8, radix = 2;
  static constexpr bfloat min() { return emu_bfloat_bits(0x0080); }
  static constexpr bfloat max() { return emu_bfloat_bits(0x7F7F); }
  static constexpr bfloat lowest() { return emu_bfloat_bits(0xFF7F); }
  static constexpr bfloat epsilon() { return emu_bfloat_bits(0x3C00); }
  static constexpr bfloat denorm_min() { return emu_bfloat_bits(0x0001); }
  static constexpr bfloat infinity() { return emu_bfloat_bits(0x7F80); }
  static constexpr bfloat quiet_NaN() { return emu_bfloat_bits(0x7FC0); }
};
#endif

namespace metal {
template <typename T>
struct numeric_limits : _numeric_limits_impl<T> {};

// vec_elements<T>::value: a vector's lanes, 0 for a scalar.
template <typename T>
struct vec_elements : std::integral_constant<uint, 0> {};
template <typename T, int N>
struct vec_elements<emu_vec<T, N>> : std::integral_constant<uint, N> {};

// Bit counts of an integer (clz(0) is its width, as on Metal).
template <typename T>
  requires std::is_integral_v<T>
inline T clz(T x) { return T(std::countl_zero(std::make_unsigned_t<T>(x))); }
template <typename T>
  requires std::is_integral_v<T>
inline T ctz(T x) { return T(std::countr_zero(std::make_unsigned_t<T>(x))); }
template <typename T>
  requires std::is_integral_v<T>
inline T popcount(T x) { return T(std::popcount(std::make_unsigned_t<T>(x))); }

// divide(x, y): x / y in metal::, fast:: and precise:: (computed precisely).
template <typename T>
inline T divide(T x, T y) { return x / y; }
namespace fast {
using metal::divide;
}  // namespace fast
namespace precise {
using metal::divide;
}  // namespace precise
}  // namespace metal
