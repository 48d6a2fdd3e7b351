// attn_bwd_prep: the untimed Setup of attn_bwd_atomic when an additive mask
// is set (attn_fwd has none): O and the natural-log logsumexp L of
// softmax(scale·Q·Kᵀ + mask)·V. Macros D, DTYPE, CAUSAL. Buffers Q, K, V
// (T), mask (f32 [Lq,Lk]), O (T), L (f32); scalars at buffer(6). Grid
// (ceil(Lq/4), H, B), 128 threads: one simdgroup per query row, two passes
// over the keys (statistics, then O). Simple on purpose: it is not timed.
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif

#define PER ((D + 31) / 32)

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

inline float row_score(const device mltop_t* q, const device mltop_t* k) {
  float s = 0.0f;
  for (int d = 0; d < D; d++) {
    s += mltop_to_f32(q[d]) * mltop_to_f32(k[d]);
  }
  return s;
}

[[kernel, max_total_threads_per_threadgroup(128)]] void attn_bwd_prep(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    const device float* mask [[buffer(3)]],
    device mltop_t* O [[buffer(4)]],
    device float* L [[buffer(5)]],
    constant BwdParams& p [[buffer(6)]],
    uint3 tg [[threadgroup_position_in_grid]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  const int i = int(tg.x) * 4 + int(sgid);
  if (i >= p.Lq) {
    return;
  }
  const int h = int(tg.y);
  const int b = int(tg.z);
  const int hk = h / (p.H / p.Hkv);
  const size_t row = (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq) + size_t(i);
  const device mltop_t* q = Q + row * D;
  const size_t kvrow = (size_t(b) * size_t(p.Hkv) + size_t(hk)) * size_t(p.Lk);
  const device float* mrow = mask + size_t(i) * size_t(p.Lk);
  int n = p.Lk;
#if CAUSAL
  n = min(max(i + p.Lk - p.Lq + 1, 0), p.Lk);
#endif

  float m = -INFINITY;
  float l = 0.0f;
  for (int j = int(lane); j < n; j += 32) {
    const float s = row_score(q, K + (kvrow + size_t(j)) * D) * p.scale + mrow[j];
    const float mn = max(m, s);
    l = l * exp(m - mn) + exp(s - mn);
    m = mn;
  }
  const float M = simd_max(m);
  const float part = M == -INFINITY ? 0.0f : l * exp(m - M);
  const float lsum = simd_sum(part);
  const float lse = lsum > 0.0f ? M + log(lsum) : -INFINITY;

  float o[PER];
  for (int c = 0; c < PER; c++) {
    o[c] = 0.0f;
  }
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int j = j0 + int(lane);
    float pj = 0.0f;
    if (j < n) {
      pj = exp(row_score(q, K + (kvrow + size_t(j)) * D) * p.scale + mrow[j] - lse);
    }
    const int cnt = min(32, n - j0);
    for (int jj = 0; jj < cnt; jj++) {
      const float pb = simd_shuffle(pj, ushort(jj));
      const device mltop_t* v = V + (kvrow + size_t(j0 + jj)) * D;
      for (int c = 0; c < PER; c++) {
        const int d = int(lane) + 32 * c;
        if (d < D) {
          o[c] += pb * mltop_to_f32(v[d]);
        }
      }
    }
  }
  for (int c = 0; c < PER; c++) {
    const int d = int(lane) + 32 * c;
    if (d < D) {
      O[row * D + d] = mltop_from_f32(o[c]);
    }
  }
  if (lane == 0) {
    L[row] = lse;
  }
}
