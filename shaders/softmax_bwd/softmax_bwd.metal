// softmax_bwd: dX_i = Y_i·(dY_i − Σ_j dY_j·Y_j) for each row, in f32.
//
// Macros: WG (threads per group, one group per row), DTYPE (0 f32, 1 f16,
// 2 bf16). Buffers: Y [rows, cols] T, dY [rows, cols] T, dX [rows, cols] T;
// scalars (rows, cols) at buffer(3). Grid (rows, 1, 1), group (WG, 1, 1).
//
// The row dot product is a two-level tree: simd_sum within each 32-thread
// simdgroup, the WG/32 partials through red_smem, and simd_sum of those in
// the first simdgroup. Threadgroup memory: red_smem (WG/32)·4 bytes, the
// Plan's only item.
#include "mltop_common.h"

#define NWARPS (WG / 32)

static_assert(WG % 32 == 0 && WG >= 32 && WG <= 1024, "WG must be a multiple of 32 in [32, 1024]");

struct SoftmaxBwdParams {
  int rows;
  int cols;
};

[[kernel, max_total_threads_per_threadgroup(WG)]] void softmax_bwd(
    const device mltop_t* Y [[buffer(0)]],
    const device mltop_t* dY [[buffer(1)]],
    device mltop_t* dX [[buffer(2)]],
    constant SoftmaxBwdParams& p [[buffer(3)]],
    uint row [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float red_smem[NWARPS];
  // The whole group leaves together, so no thread misses a barrier.
  if (int(row) >= p.rows) {
    return;
  }
  const size_t base = size_t(row) * size_t(p.cols);
  const device mltop_t* y = Y + base;
  const device mltop_t* dy = dY + base;

  float acc = 0.0f;
  for (int c = int(tid); c < p.cols; c += WG) {
    acc += mltop_to_f32(y[c]) * mltop_to_f32(dy[c]);
  }
  acc = simd_sum(acc);
  if (lane == 0) {
    red_smem[sgid] = acc;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sgid == 0) {
    float v = lane < NWARPS ? red_smem[lane] : 0.0f;
    v = simd_sum(v);
    // Every lane of simdgroup 0 has read its partial before simd_sum
    // returns, so lane 0 may overwrite slot 0.
    if (lane == 0) {
      red_smem[0] = v;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float dot = red_smem[0];

  device mltop_t* dx = dX + base;
  for (int c = int(tid); c < p.cols; c += WG) {
    const float yv = mltop_to_f32(y[c]);
    dx[c] = mltop_from_f32(yv * (mltop_to_f32(dy[c]) - dot));
  }
}
