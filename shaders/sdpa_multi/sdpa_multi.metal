// sdpa_multi: n_query query rows against a shared K/V cache, one group per
// (head, query) (see the plan contract in kernels/sdpa_multi.go).
//
// Macros: TPG (threads per group, a multiple of 32), D (head dim 64, 128 or
// 256), DTYPE, CAUSAL (0/1). Buffers: Q [n_query, H, D] T, K and V
// [Hkv, kv_stride, D] T, O [n_query, H, D] T; scalars (n_query, H, Hkv,
// base_kv, kv_stride, scale) at buffer(4). Grid (H, n_query, 1), group
// (TPG, 1, 1).
//
// The NW = TPG/32 simdgroups take the visible keys round-robin; lane l owns
// head-dim elements [l·EPL, l·EPL+EPL) and a score is the simd_sum of the
// lanes' partial dots. Each simdgroup keeps an online softmax in f32; at
// the end each rescales its O to the group's max and sum and parks it in
// o_smem, and the first D threads add the NW rows per column. A TPG below
// 32 would make NW zero and the key walk would never advance (the seed's
// GPU freeze): the static_assert and the family's rules refuse it.
// Threadgroup memory: m_smem NW, l_smem NW, o_smem NW·D floats.
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 1
#endif
#define NW (TPG / 32)
#define EPL (D / 32)

static_assert(TPG % 32 == 0 && TPG >= 32 && TPG <= 1024, "TPG must be a multiple of 32 in [32, 1024]");
static_assert(D % 32 == 0, "each lane owns D/32 head-dim elements");

struct SDPAMultiParams {
  int n_query;
  int H;
  int Hkv;
  int base_kv;
  int kv_stride;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(TPG)]] void sdpa_multi(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    device mltop_t* O [[buffer(3)]],
    constant SDPAMultiParams& p [[buffer(4)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float m_smem[NW];
  threadgroup float l_smem[NW];
  threadgroup float o_smem[NW * D];
  const int h = int(tg.x);
  const int r = int(tg.y);
  if (h >= p.H || r >= p.n_query) {
    return;
  }
  const int n = CAUSAL ? p.base_kv + r + 1 : p.base_kv + p.n_query;
  const int kvh = h / (p.H / p.Hkv);
  const device mltop_t* qp = Q + (size_t(r) * size_t(p.H) + size_t(h)) * D + lane * EPL;
  float q[EPL];
  for (int e = 0; e < EPL; ++e) {
    q[e] = mltop_to_f32(qp[e]) * p.scale;
  }
  const size_t kv0 = size_t(kvh) * size_t(p.kv_stride) * D + lane * EPL;
  float m = -INFINITY;
  float l = 0.0f;
  float o[EPL];
  for (int e = 0; e < EPL; ++e) {
    o[e] = 0.0f;
  }
  for (int j = int(sgid); j < n; j += NW) {
    const device mltop_t* kr = K + kv0 + size_t(j) * D;
    const device mltop_t* vr = V + kv0 + size_t(j) * D;
    float s = 0.0f;
    for (int e = 0; e < EPL; ++e) {
      s = fma(q[e], mltop_to_f32(kr[e]), s);
    }
    s = simd_sum(s);
    const float nm = max(m, s);
    const float f = exp(m - nm); // 0 on the first key (m = -inf)
    const float pr = exp(s - nm);
    l = fma(l, f, pr);
    m = nm;
    for (int e = 0; e < EPL; ++e) {
      o[e] = fma(o[e], f, pr * mltop_to_f32(vr[e]));
    }
  }
  if (lane == 0) {
    m_smem[sgid] = m;
    l_smem[sgid] = l;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float gm = -INFINITY;
  for (int w = 0; w < NW; ++w) {
    gm = max(gm, m_smem[w]);
  }
  float gl = 0.0f;
  for (int w = 0; w < NW; ++w) {
    gl += l_smem[w] > 0.0f ? l_smem[w] * exp(m_smem[w] - gm) : 0.0f;
  }
  const float c = l > 0.0f ? exp(m - gm) / gl : 0.0f; // a simdgroup that saw no key adds nothing
  for (int e = 0; e < EPL; ++e) {
    o_smem[int(sgid) * D + int(lane) * EPL + e] = o[e] * c;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  device mltop_t* out = O + (size_t(r) * size_t(p.H) + size_t(h)) * D;
  for (int d = int(tid); d < D; d += TPG) {
    float acc = 0.0f;
    for (int w = 0; w < NW; ++w) {
      acc += o_smem[w * D + d];
    }
    out[d] = mltop_from_f32(acc);
  }
}
