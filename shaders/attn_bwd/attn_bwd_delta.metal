// attn_bwd_delta: delta = rowsum(dO∘O) in f32 (first dispatch of attn_bwd
// and attn_bwd_unfused). Macros D, DTYPE. Grid (ceil(Lq/8), H, B), 256
// threads: one simdgroup per query row; scalars at buffer(3).
#include "mltop_common.h"

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(256)]] void attn_bwd_delta(
    const device mltop_t* O [[buffer(0)]],
    const device mltop_t* dO [[buffer(1)]],
    device float* delta [[buffer(2)]],
    constant BwdParams& p [[buffer(3)]],
    uint3 tg [[threadgroup_position_in_grid]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  const int row = int(tg.x) * 8 + int(sgid);
  if (row >= p.Lq) {
    return;
  }
  const size_t r = (size_t(tg.z) * size_t(p.H) + size_t(tg.y)) * size_t(p.Lq) + size_t(row);
  float acc = 0.0f;
  for (int d = int(lane); d < D; d += 32) {
    acc += mltop_to_f32(O[r * D + d]) * mltop_to_f32(dO[r * D + d]);
  }
  acc = simd_sum(acc);
  if (lane == 0) {
    delta[r] = acc;
  }
}
