// Shared helpers for mltop's Metal kernels (bf16/f16 storage, f32 math).
//
// newLibraryWithSource: has no include path, so the Metal backend pastes
// this file in front of each kernel source and comments out the kernel's
// `#include "mltop_common.h"` line. Knobs arrive as preprocessor macros
// (MTLCompileOptions.preprocessorMacros).
#pragma once
// The knob macros arrive before any #include and have short names (D, BQ,
// WM, ...); hide them from Metal's own headers, which may use such names
// as identifiers, and bring them back for the kernel.
#pragma push_macro("D")
#pragma push_macro("BQ")
#pragma push_macro("BK")
#pragma push_macro("WM")
#pragma push_macro("WN")
#pragma push_macro("WG")
#pragma push_macro("CAUSAL")
#undef D
#undef BQ
#undef BK
#undef WM
#undef WN
#undef WG
#undef CAUSAL
#include <metal_stdlib>
#include <metal_simdgroup>
#include <metal_simdgroup_matrix>
#pragma pop_macro("D")
#pragma pop_macro("BQ")
#pragma pop_macro("BK")
#pragma pop_macro("WM")
#pragma pop_macro("WN")
#pragma pop_macro("WG")
#pragma pop_macro("CAUSAL")
using namespace metal;

#ifndef DTYPE
#define DTYPE 0
#endif

// ---- bf16 storage -----------------------------------------------------
// Metal 3.1 (macOS 14) has a native bfloat. Before that, bf16 is stored as
// its 16 bits (a ushort) and converted by hand; all math is f32 either way.
#if defined(__HAVE_BFLOAT__)
typedef bfloat mltop_bf16;
inline float mltop_to_f32(bfloat x) { return float(x); }
inline bfloat mltop_bf16_from_f32(float x) { return bfloat(x); }
#else
// The 16 bits as a plain ushort: a scalar copies between address spaces
// and works in ?: like the native types do.
typedef ushort mltop_bf16;
inline float mltop_to_f32(ushort x) { return as_type<float>(uint(x) << 16); }
// Round to nearest, ties to even; a NaN stays a quiet NaN with its sign.
inline ushort mltop_bf16_from_f32(float x) {
  uint u = as_type<uint>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return ushort((u >> 16) | 0x0040u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return ushort(u >> 16);
}
#endif

inline float mltop_to_f32(float x) { return x; }
inline float mltop_to_f32(half x) { return float(x); }

// ---- the storage type T of this compile (DTYPE: 0 f32, 1 f16, 2 bf16) --
#if DTYPE == 0
typedef float mltop_t;
inline mltop_t mltop_from_f32(float x) { return x; }
#elif DTYPE == 1
typedef half mltop_t;
inline mltop_t mltop_from_f32(float x) { return half(x); }
#elif DTYPE == 2
typedef mltop_bf16 mltop_t;
inline mltop_t mltop_from_f32(float x) { return mltop_bf16_from_f32(x); }
#else
#error "DTYPE must be 0 (f32), 1 (f16) or 2 (bf16)"
#endif

// ---- 8x8 simdgroup fragments --------------------------------------------
// A simdgroup_float8x8 spreads its 64 elements over the 32 lanes, two
// adjacent columns per lane. Lane l holds row
//   (l / 16) * 4 + (l / 2) % 4        (bit 4 -> +4, bits 1-2 -> 0..3)
// and columns c, c+1 with
//   c = ((l / 8) % 2) * 4 + (l % 2) * 2   (bit 3 -> +4, bit 0 -> +2).
// So the four lanes of one row differ in bits 0 and 3: a row reduction is a
// shuffle-xor by 1 and by 8. thread_elements() exposes the two values.
// Apple does not document this layout; it is the one Philip Turner's
// Metal FlashAttention describes (simdgroup_matrix_internals, after US
// patent 11256518 B2) and MLX's steel kernels rely on.
inline short2 mltop_frag_coord(ushort lane) {
  const short row = short((lane / 16) * 4 + (lane / 2) % 4);
  const short col = short(((lane / 8) % 2) * 4 + (lane % 2) * 2);
  return short2(col, row);
}

// Load an 8x8 float fragment from row-major threadgroup storage of T:
// element (r, c) is src[r * ld + c].
inline void mltop_frag_load(thread simdgroup_float8x8& m, const threadgroup mltop_t* src, int ld, short2 rc) {
  thread auto& e = m.thread_elements();
  e[0] = mltop_to_f32(src[rc.y * ld + rc.x]);
  e[1] = mltop_to_f32(src[rc.y * ld + rc.x + 1]);
}

// Load the transpose: element (r, c) is src[c * ld + r].
inline void mltop_frag_load_t(thread simdgroup_float8x8& m, const threadgroup mltop_t* src, int ld, short2 rc) {
  thread auto& e = m.thread_elements();
  e[0] = mltop_to_f32(src[rc.x * ld + rc.y]);
  e[1] = mltop_to_f32(src[(rc.x + 1) * ld + rc.y]);
}

// Row reductions over the four lanes that share a fragment row.
inline float mltop_row_max(float v) {
  v = max(v, simd_shuffle_xor(v, ushort(1)));
  v = max(v, simd_shuffle_xor(v, ushort(8)));
  return v;
}
inline float mltop_row_sum(float v) {
  v += simd_shuffle_xor(v, ushort(1));
  v += simd_shuffle_xor(v, ushort(8));
  return v;
}

// Load an 8x8 float fragment from row-major threadgroup f32 storage
// (element (r, c) is src[r * ld + c]), and its transpose (src[c * ld + r]).
inline void mltop_ffrag_load(thread simdgroup_float8x8& m, const threadgroup float* src, int ld, short2 rc) {
  thread auto& e = m.thread_elements();
  e[0] = src[rc.y * ld + rc.x];
  e[1] = src[rc.y * ld + rc.x + 1];
}
inline void mltop_ffrag_load_t(thread simdgroup_float8x8& m, const threadgroup float* src, int ld, short2 rc) {
  thread auto& e = m.thread_elements();
  e[0] = src[rc.x * ld + rc.y];
  e[1] = src[(rc.x + 1) * ld + rc.y];
}

// mltop_load_tile copies ROWS rows of a row-major [*, COLS] matrix of T into
// threadgroup memory with row stride LD (elements), NTH threads striding
// the elements; rows at or past valid are zero-filled.
template <int ROWS, int COLS, int LD, int NTH>
inline void mltop_load_tile(threadgroup mltop_t* dst, const device mltop_t* src, int valid, uint tid) {
  const mltop_t zero = mltop_from_f32(0.0f);
  for (uint i = tid; i < uint(ROWS * COLS); i += NTH) {
    const int r = int(i) / COLS;
    const int c = int(i) % COLS;
    if (r < valid) {
      dst[r * LD + c] = src[r * COLS + c];
    } else {
      dst[r * LD + c] = zero;
    }
  }
}
