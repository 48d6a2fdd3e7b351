// rmsnorm_bwd: dX and dW of y = x·r·w, r = 1/sqrt(mean(x²)+eps) (see the
// plan contract in kernels/rmsnorm_bwd.go).
//
// Macros: WG (threads per group), VEC (elements per access), RPG (rows per
// group), RB (rows per batch), ST (0 here: the row ring is CUDA-only), D
// (row width), DTYPE. Buffers: X, W, dY, dX (T), dW (f32,
// atomically accumulated; zeroed by the plan's zero_dW dispatch); scalars
// (rows, eps) at buffer(5). Grid (ceil(rows/RPG), 1, 1), group (WG, 1, 1).
//
// Thread t owns the VEC-wide column vectors t, t+WG, … (NIT of them) and
// keeps W and its dW partials in registers across the group's rows. Rows
// come RB at a time: the batch's X and dY are loaded together, and Σx² and
// Σ dY·w·x of each of its rows are reduced by simd_sum and through
// red_smem (2·RB·WG/32 floats, the Plan's only item) with one pair of
// barriers; after the rows each thread adds its partials to dW with one
// relaxed atomic per column.
#include "mltop_common.h"

#define NW (WG / 32)
#define NIT ((D + WG * VEC - 1) / (WG * VEC))

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(D % VEC == 0, "D must be a multiple of VEC");
static_assert(RPG % RB == 0, "RPG must be a multiple of RB");
static_assert(ST == 0, "ST > 0 (the cp.async row ring) is CUDA-only: the plan rejects it on Metal");

struct RMSNormBwdParams {
  int rows;
  float eps;
};

[[kernel, max_total_threads_per_threadgroup(WG)]] void rmsnorm_bwd(
    const device mltop_t* X [[buffer(0)]],
    const device mltop_t* W [[buffer(1)]],
    const device mltop_t* dY [[buffer(2)]],
    device mltop_t* dX [[buffer(3)]],
    device atomic_float* dW [[buffer(4)]],
    constant RMSNormBwdParams& p [[buffer(5)]],
    uint grp [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float red_smem[2 * RB * NW];
  float w[NIT * VEC];
  float acc[NIT * VEC];
  for (int it = 0; it < NIT; ++it) {
    const int c = (it * WG + int(tid)) * VEC;
    for (int v = 0; v < VEC; ++v) {
      w[it * VEC + v] = c < D ? mltop_to_f32(W[c + v]) : 0.0f;
      acc[it * VEC + v] = 0.0f;
    }
  }
  const int r0 = int(grp) * RPG;
  const int r1 = min(r0 + RPG, p.rows);
  for (int rb = r0; rb < r1; rb += RB) {
    float xv[RB * NIT * VEC];
    float gv[RB * NIT * VEC];
    float ss[RB];
    float dot[RB];
    for (int b = 0; b < RB; ++b) {
      // A ragged last batch re-reads the group's last row and writes nothing for it.
      const int r = min(rb + b, r1 - 1);
      const device mltop_t* x = X + size_t(r) * D;
      const device mltop_t* dy = dY + size_t(r) * D;
      ss[b] = 0.0f;
      dot[b] = 0.0f;
      for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + int(tid)) * VEC;
        for (int v = 0; v < VEC; ++v) {
          const int i = (b * NIT + it) * VEC + v;
          xv[i] = c < D ? mltop_to_f32(x[c + v]) : 0.0f;
          gv[i] = c < D ? mltop_to_f32(dy[c + v]) : 0.0f;
          ss[b] = fma(xv[i], xv[i], ss[b]);
          dot[b] = fma(gv[i] * w[it * VEC + v], xv[i], dot[b]);
        }
      }
      ss[b] = simd_sum(ss[b]);
      dot[b] = simd_sum(dot[b]);
    }
    if (lane == 0) {
      for (int b = 0; b < RB; ++b) {
        red_smem[(2 * b) * NW + sgid] = ss[b];
        red_smem[(2 * b + 1) * NW + sgid] = dot[b];
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int b = 0; b < RB; ++b) {
      ss[b] = 0.0f;
      dot[b] = 0.0f;
      for (int i = 0; i < NW; ++i) {
        ss[b] += red_smem[(2 * b) * NW + i];
        dot[b] += red_smem[(2 * b + 1) * NW + i];
      }
    }
    // Everyone has read the partials before the next batch overwrites them.
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int b = 0; b < RB && rb + b < r1; ++b) {
      const float rinv = rsqrt(ss[b] * (1.0f / D) + p.eps);
      const float k = rinv * rinv * rinv * (1.0f / D) * dot[b];
      device mltop_t* dx = dX + size_t(rb + b) * D;
      for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + int(tid)) * VEC;
        if (c < D) {
          for (int v = 0; v < VEC; ++v) {
            const int i = (b * NIT + it) * VEC + v;
            dx[c + v] = mltop_from_f32(rinv * w[it * VEC + v] * gv[i] - xv[i] * k);
            acc[it * VEC + v] = fma(gv[i] * xv[i], rinv, acc[it * VEC + v]);
          }
        }
      }
    }
  }
  if (r0 >= r1) {
    return;
  }
  for (int it = 0; it < NIT; ++it) {
    const int c = (it * WG + int(tid)) * VEC;
    if (c < D) {
      for (int v = 0; v < VEC; ++v) {
        atomic_fetch_add_explicit(&dW[c + v], acc[it * VEC + v], memory_order_relaxed);
      }
    }
  }
}
