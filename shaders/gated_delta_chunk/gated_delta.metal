// gated_delta_chunk: the inter-chunk state recurrence of the gated delta
// rule (see the plan contract and the math in kernels/gated_delta.go).
//
// Macros: BT (chunk length), BV (state rows per group), K (key dim), WG
// (threads per group), DTYPE (2: bf16 storage). Buffers: k [B,T,Hg,K],
// w [B,T,H,K], u [B,T,H,V] bf16, g [B,T,H] f32, h0 [B,H,V,K] f32, h_out
// [B,NT,H,V,K] bf16, v_new [B,T,H,V] bf16, final [B,H,V,K] f32; scalars
// (B, T, H, Hg, V) at buffer(8). Grid (V/BV, H, B), group (WG, 1, 1).
//
// The group keeps BV rows of the f32 state S in S_smem for all chunks. Per
// chunk: snapshot S to h_out; stage the chunk's w rows in wk_smem and form
// Vn = u − S·w, store v_new = bf16(Vn), gate Vn by exp(g_last − g_t) in
// f32 and only then round it to bf16 into vn_smem (the round trip after the
// gate); stage the chunk's k rows in wk_smem and update
// S = S·exp(g_last) + Σ_t Vn_t ⊗ k_t. Plain FMA loops, no simdgroup MMA.
// Threadgroup memory: S_smem BV·(K+1) f32, wk_smem BT·(K+2) bf16,
// vn_smem BT·BV f32.
#include "mltop_common.h"

#define SLD (K + 1) // S_smem row stride (floats)
#define WLD (K + 2) // wk_smem row stride (bf16 elements)

static_assert(DTYPE == 2, "gated_delta_chunk stores bf16 only");
static_assert(WG % 32 == 0, "WG must be whole simdgroups");

struct GatedDeltaParams {
  int B;
  int T;
  int H;
  int Hg;
  int V;
};

[[kernel, max_total_threads_per_threadgroup(WG)]] void gated_delta_chunk(
    const device mltop_t* kin [[buffer(0)]],
    const device mltop_t* w [[buffer(1)]],
    const device mltop_t* u [[buffer(2)]],
    const device float* g [[buffer(3)]],
    const device float* h0 [[buffer(4)]],
    device mltop_t* h_out [[buffer(5)]],
    device mltop_t* v_new [[buffer(6)]],
    device float* fin [[buffer(7)]],
    constant GatedDeltaParams& p [[buffer(8)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid3 [[thread_index_in_threadgroup]]) {
  threadgroup float S_smem[BV * (K + 1)];
  threadgroup mltop_t wk_smem[BT * (K + 2)];
  threadgroup float vn_smem[BT * BV];
  const int v0 = int(tg.x) * BV;
  const int h = int(tg.y);
  const int b = int(tg.z);
  const int tid = int(tid3);
  if (b >= p.B || h >= p.H || v0 >= p.V) {
    return;
  }
  const int nt = p.T / BT;
  const int hk = h / (p.H / p.Hg);

  const device float* s0 = h0 + ((size_t(b) * p.H + h) * p.V + v0) * K;
  for (int o = tid; o < BV * K; o += WG) {
    S_smem[(o / K) * SLD + o % K] = s0[o];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  for (int c = 0; c < nt; ++c) {
    const int t0 = c * BT;
    device mltop_t* snap = h_out + (((size_t(b) * nt + c) * p.H + h) * p.V + v0) * K;
    for (int o = tid; o < BV * K; o += WG) {
      snap[o] = mltop_from_f32(S_smem[(o / K) * SLD + o % K]);
    }
    for (int i = tid; i < BT * K; i += WG) {
      const int t = i / K;
      const int kk = i % K;
      wk_smem[t * WLD + kk] = w[((size_t(b) * p.T + t0 + t) * p.H + h) * K + kk];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float gl = g[(size_t(b) * p.T + t0 + BT - 1) * p.H + h];
    for (int o = tid; o < BT * BV; o += WG) {
      const int t = o / BV;
      const int v = o % BV;
      float acc = 0.0f;
      for (int kk = 0; kk < K; ++kk) {
        acc = fma(mltop_to_f32(wk_smem[t * WLD + kk]), S_smem[v * SLD + kk], acc);
      }
      const size_t ui = ((size_t(b) * p.T + t0 + t) * p.H + h) * p.V + v0 + v;
      const float r = mltop_to_f32(u[ui]) - acc;
      v_new[ui] = mltop_from_f32(r);
      const float gate = exp(gl - g[(size_t(b) * p.T + t0 + t) * p.H + h]);
      vn_smem[t * BV + v] = mltop_to_f32(mltop_from_f32(r * gate)); // the bf16 round trip, after the gate
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int i = tid; i < BT * K; i += WG) {
      const int t = i / K;
      const int kk = i % K;
      wk_smem[t * WLD + kk] = kin[((size_t(b) * p.T + t0 + t) * p.Hg + hk) * K + kk];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float decay = exp(gl);
    for (int o = tid; o < BV * K; o += WG) {
      const int v = o / K;
      const int kk = o % K;
      float acc = S_smem[v * SLD + kk] * decay;
      for (int t = 0; t < BT; ++t) {
        acc = fma(vn_smem[t * BV + v], mltop_to_f32(wk_smem[t * WLD + kk]), acc);
      }
      S_smem[v * SLD + kk] = acc;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  device float* fo = fin + ((size_t(b) * p.H + h) * p.V + v0) * K;
  for (int o = tid; o < BV * K; o += WG) {
    fo[o] = S_smem[(o / K) * SLD + o % K];
  }
}
