// Calibration micro-kernels: what this Apple GPU achieves on a plain copy
// and on dense arithmetic, the ceilings mltop holds Results against next
// to the datasheet peaks. metal/calibrate*.go launches them and counts
// their work; the macros come from there, so both sides agree on counts.
//
//   cal_fill           fills a buffer with hashed nonzero words (no CPU upload)
//   cal_copy           16-byte grid-stride copy, four loads in flight per thread
//   cal_fma_f32        FMA_CHAINS independent float FMA chains per thread
//   cal_fma_f16        the same in half
//   cal_simdgroup_f32  SIMD_ACC independent simdgroup_float8x8 multiply-accumulates per simdgroup
//   cal_simdgroup_f16  the same with simdgroup_half8x8
//
// Every kernel writes what it computed, so nothing is dead code. Buffers:
// fill (dst), copy (src, dst), math (in: 1024 floats, out: one float per
// thread); the scalar struct follows at the next buffer index. Grid
// (groups, 1, 1), group (CAL_THREADS, 1, 1).
#include "mltop_common.h"

#ifndef CAL_THREADS
#error "CAL_THREADS (threads per group) comes from metal/calibrate.go"
#endif
#ifndef FMA_CHAINS
#error "FMA_CHAINS (independent FMA chains per thread) comes from metal/calibrate.go"
#endif
#ifndef SIMD_ACC
#error "SIMD_ACC (independent 8x8 accumulators per simdgroup) comes from metal/calibrate.go"
#endif

struct CalCopyParams {
  int n;    // 16-byte elements
  int seed; // cal_fill only
};

struct CalMathParams {
  int iters;
  float m; // FMA: x <- x*m + c
  float c;
};

[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_fill(
    device uint4* dst [[buffer(0)]],
    constant CalCopyParams& p [[buffer(1)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    uint groups [[threadgroups_per_grid]]) {
  const uint stride = groups * CAL_THREADS;
  for (uint i = tg * CAL_THREADS + tid; i < uint(p.n); i += stride) {
    uint h = (i ^ uint(p.seed)) * 2654435761u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    dst[i] = uint4(h | 1u, h * 3u + 1u, h ^ 0x9e3779b9u, ~h);
  }
}

// Each pass of the main loop issues four independent 16-byte loads before
// its stores, so enough requests are in flight at full occupancy.
[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_copy(
    const device uint4* src [[buffer(0)]],
    device uint4* dst [[buffer(1)]],
    constant CalCopyParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    uint groups [[threadgroups_per_grid]]) {
  const uint stride = groups * CAL_THREADS;
  const uint n = uint(p.n);
  uint i = tg * CAL_THREADS + tid;
  for (; i + 3u * stride < n; i += 4u * stride) {
    const uint4 v0 = src[i];
    const uint4 v1 = src[i + stride];
    const uint4 v2 = src[i + 2u * stride];
    const uint4 v3 = src[i + 3u * stride];
    dst[i] = v0;
    dst[i + stride] = v1;
    dst[i + 2u * stride] = v2;
    dst[i + 3u * stride] = v3;
  }
  for (; i < n; i += stride) {
    dst[i] = src[i];
  }
}

// FMA_CHAINS chains x <- fma(x, m, c) per thread; with |m| < 1 each
// converges to c/(1-m), so the result stays finite for any iteration
// count. m and c arrive in the scalar struct, so nothing folds.
template <typename T>
inline float cal_fma_chains(const device float* in, constant CalMathParams& p, uint gid) {
  const T m = T(p.m);
  const T c = T(p.c);
  T x[FMA_CHAINS];
  for (int k = 0; k < FMA_CHAINS; ++k) {
    x[k] = T(in[(gid + uint(k)) & 1023u]);
  }
  for (int it = 0; it < p.iters; ++it) {
    for (int k = 0; k < FMA_CHAINS; ++k) {
      x[k] = fma(x[k], m, c);
    }
  }
  float s = 0.0f;
  for (int k = 0; k < FMA_CHAINS; ++k) {
    s += float(x[k]);
  }
  return s;
}

[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_fma_f32(
    const device float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant CalMathParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  const uint gid = tg * CAL_THREADS + tid;
  out[gid] = cal_fma_chains<float>(in, p, gid);
}

[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_fma_f16(
    const device float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant CalMathParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  const uint gid = tg * CAL_THREADS + tid;
  out[gid] = cal_fma_chains<half>(in, p, gid);
}

// SIMD_ACC independent accumulators per simdgroup, each updated
// acc_k <- a_k * b + acc_k (an 8x8x8 product, 2*8*8*8 = 1024 FLOPs) every
// iteration. The operands are matrices filled with one value each: a_k
// with in[k], b with in[SIMD_ACC], acc_k starting at k/8, so every element
// of acc_k ends at k/8 + iters * 8 * in[k] * in[SIMD_ACC] (in T's
// rounding). Each thread writes the sum of its two elements of every
// accumulator.
template <typename T>
inline float cal_simdgroup_loop(const device float* in, constant CalMathParams& p) {
  simdgroup_matrix<T, 8, 8> a[SIMD_ACC];
  simdgroup_matrix<T, 8, 8> acc[SIMD_ACC];
  const simdgroup_matrix<T, 8, 8> b = make_filled_simdgroup_matrix<T, 8, 8>(T(in[SIMD_ACC]));
  for (int k = 0; k < SIMD_ACC; ++k) {
    a[k] = make_filled_simdgroup_matrix<T, 8, 8>(T(in[k]));
    acc[k] = make_filled_simdgroup_matrix<T, 8, 8>(T(0.125f * float(k)));
  }
  for (int it = 0; it < p.iters; ++it) {
    for (int k = 0; k < SIMD_ACC; ++k) {
      simdgroup_multiply_accumulate(acc[k], a[k], b, acc[k]);
    }
  }
  float s = 0.0f;
  for (int k = 0; k < SIMD_ACC; ++k) {
    s += float(acc[k].thread_elements()[0]) + float(acc[k].thread_elements()[1]);
  }
  return s;
}

[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_simdgroup_f32(
    const device float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant CalMathParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  out[tg * CAL_THREADS + tid] = cal_simdgroup_loop<float>(in, p);
}

[[kernel, max_total_threads_per_threadgroup(CAL_THREADS)]] void cal_simdgroup_f16(
    const device float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant CalMathParams& p [[buffer(2)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  out[tg * CAL_THREADS + tid] = cal_simdgroup_loop<half>(in, p);
}
