// rmsnorm_bwd: dX and dW of y = x·r·w, r = 1/sqrt(mean(x²)+eps) (see the
// plan contract in kernels/rmsnorm_bwd.go).
//
// Macros: WG (threads per group), VEC (elements per access), RPG (rows per
// group), D (row width), DTYPE. Buffers: X, W, dY, dX (T), dW (f32,
// atomically accumulated; zeroed by the plan's zero_dW dispatch); scalars
// (rows, eps) at buffer(5). Grid (ceil(rows/RPG), 1, 1), group (WG, 1, 1).
//
// Thread t owns the VEC-wide column vectors t, t+WG, … (NIT of them) and
// keeps W and its dW partials in registers across the group's rows. Per
// row, Σx² and Σ dY·w·x are reduced by simd_sum and through red_smem
// (2·WG/32 floats, the Plan's only item); after the rows each thread adds
// its partials to dW with one relaxed atomic per column.
#include "mltop_common.h"

#define NW (WG / 32)
#define NIT ((D + WG * VEC - 1) / (WG * VEC))

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(D % VEC == 0, "D must be a multiple of VEC");

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
  threadgroup float red_smem[2 * NW];
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
  for (int r = r0; r < r1; ++r) {
    const device mltop_t* x = X + size_t(r) * D;
    const device mltop_t* dy = dY + size_t(r) * D;
    float xv[NIT * VEC];
    float gv[NIT * VEC];
    float ss = 0.0f;
    float dot = 0.0f;
    for (int it = 0; it < NIT; ++it) {
      const int c = (it * WG + int(tid)) * VEC;
      for (int v = 0; v < VEC; ++v) {
        const int i = it * VEC + v;
        xv[i] = c < D ? mltop_to_f32(x[c + v]) : 0.0f;
        gv[i] = c < D ? mltop_to_f32(dy[c + v]) : 0.0f;
        ss = fma(xv[i], xv[i], ss);
        dot = fma(gv[i] * w[i], xv[i], dot);
      }
    }
    ss = simd_sum(ss);
    dot = simd_sum(dot);
    if (lane == 0) {
      red_smem[sgid] = ss;
      red_smem[NW + sgid] = dot;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float tss = 0.0f;
    float tdot = 0.0f;
    for (int i = 0; i < NW; ++i) {
      tss += red_smem[i];
      tdot += red_smem[NW + i];
    }
    // Everyone has read the partials before the next row overwrites them.
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float rinv = rsqrt(tss * (1.0f / D) + p.eps);
    const float k = rinv * rinv * rinv * (1.0f / D) * tdot;
    device mltop_t* dx = dX + size_t(r) * D;
    for (int it = 0; it < NIT; ++it) {
      const int c = (it * WG + int(tid)) * VEC;
      if (c < D) {
        for (int v = 0; v < VEC; ++v) {
          const int i = it * VEC + v;
          dx[c + v] = mltop_from_f32(rinv * w[i] * gv[i] - xv[i] * k);
          acc[i] = fma(gv[i] * xv[i], rinv, acc[i]);
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
