// attn_bwd_mm: the tiled matrix kernel of the unfused attention backward
// (seed 001's baseline), written for mltop. Plan contract:
// kernels/attn_bwd_unfused.go. MODE selects the product:
//   0  P  = exp(scale·Q·Kᵀ − L), 0 where causal-masked   [B,H,Lq,Lk] f32
//   1  dS = P∘(dO·Vᵀ − delta)                             [B,H,Lq,Lk] f32
//   2  dV = Σ_heads Pᵀ·dO                                 [B,Hkv,Lk,D] T
//   3  dK = scale·Σ_heads dSᵀ·Q                           [B,Hkv,Lk,D] T
//   4  dQ = scale·dS·K                                    [B,H,Lq,D]   T
// Macros BM, BN, D, DTYPE, CAUSAL, MODE. Buffers Q, K, V, dO, L, delta, P,
// dS, dQ, dK, dV; scalars at buffer(11). 256 threads (16×16) per BM×BN
// output tile, each thread (BM/16)×(BN/16) outputs strided by 16; K steps
// of 16 staged in f32 (A_smem, B_smem, k-major).
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif

#define KS 16
#define TM (BM / 16)
#define TN (BN / 16)
#define LDA (BM + 4)
#define LDB (BN + 4)
#define LOG2E 1.4426950408889634f

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(256)]] void attn_bwd_mm(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    const device mltop_t* dO [[buffer(3)]],
    const device float* L [[buffer(4)]],
    const device float* delta [[buffer(5)]],
    device float* P [[buffer(6)]],
    device float* dS [[buffer(7)]],
    device mltop_t* dQ [[buffer(8)]],
    device mltop_t* dK [[buffer(9)]],
    device mltop_t* dV [[buffer(10)]],
    constant BwdParams& p [[buffer(11)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float A_smem[KS * LDA];
  threadgroup float B_smem[KS * LDB];
  const int tx = int(tid) % 16;
  const int ty = int(tid) / 16;
  const int n0 = int(tg.x) * BN;
  const int m0 = int(tg.y) * BM;
  const int z = int(tg.z);
  const int G = p.H / p.Hkv;
#if MODE <= 1 || MODE == 4
  const int b = z / p.H;
  const int h0 = z % p.H;
  const int hk = h0 / G;
  const int nheads = 1;
  const int M = p.Lq;
  const int N = MODE == 4 ? D : p.Lk;
  const int KD = MODE == 4 ? p.Lk : D;
#else
  const int b = z / p.Hkv;
  const int hk = z % p.Hkv;
  const int nheads = G;
  const int M = p.Lk;
  const int N = D;
  const int KD = p.Lq;
#endif
  const size_t kvrow = (size_t(b) * size_t(p.Hkv) + size_t(hk)) * size_t(p.Lk);
  const size_t Lk = size_t(p.Lk);

  float acc[TM][TN];
  for (int i = 0; i < TM; i++) {
    for (int j = 0; j < TN; j++) {
      acc[i][j] = 0.0f;
    }
  }

  for (int hh = 0; hh < nheads; hh++) {
#if MODE <= 1 || MODE == 4
    const int h = h0;
#else
    const int h = hk * G + hh;
#endif
    const size_t qrow = (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq);
    for (int k0 = 0; k0 < KD; k0 += KS) {
      for (int e = int(tid); e < KS * BM; e += 256) {
#if MODE == 2 || MODE == 3
        const int k = e / BM;
        const int m = e % BM;
#else
        const int m = e / KS;
        const int k = e % KS;
#endif
        const int gm = m0 + m;
        const int gk = k0 + k;
        float v = 0.0f;
        if (gm < M && gk < KD) {
#if MODE == 0
          v = mltop_to_f32(Q[(qrow + size_t(gm)) * D + gk]);
#elif MODE == 1
          v = mltop_to_f32(dO[(qrow + size_t(gm)) * D + gk]);
#elif MODE == 2
          v = P[(qrow + size_t(gk)) * Lk + size_t(gm)];
#elif MODE == 3
          v = dS[(qrow + size_t(gk)) * Lk + size_t(gm)];
#else
          v = dS[(qrow + size_t(gm)) * Lk + size_t(gk)];
#endif
        }
        A_smem[k * LDA + m] = v;
      }
      for (int e = int(tid); e < KS * BN; e += 256) {
#if MODE <= 1
        const int n = e / KS;
        const int k = e % KS;
#else
        const int k = e / BN;
        const int n = e % BN;
#endif
        const int gn = n0 + n;
        const int gk = k0 + k;
        float v = 0.0f;
        if (gn < N && gk < KD) {
#if MODE == 0
          v = mltop_to_f32(K[(kvrow + size_t(gn)) * D + gk]);
#elif MODE == 1
          v = mltop_to_f32(V[(kvrow + size_t(gn)) * D + gk]);
#elif MODE == 2
          v = mltop_to_f32(dO[(qrow + size_t(gk)) * D + gn]);
#elif MODE == 3
          v = mltop_to_f32(Q[(qrow + size_t(gk)) * D + gn]);
#else
          v = mltop_to_f32(K[(kvrow + size_t(gk)) * D + gn]);
#endif
        }
        B_smem[k * LDB + n] = v;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
      for (int k = 0; k < KS; k++) {
        float a[TM];
        float bb[TN];
        for (int i = 0; i < TM; i++) {
          a[i] = A_smem[k * LDA + ty + 16 * i];
        }
        for (int j = 0; j < TN; j++) {
          bb[j] = B_smem[k * LDB + tx + 16 * j];
        }
        for (int i = 0; i < TM; i++) {
          for (int j = 0; j < TN; j++) {
            acc[i][j] += a[i] * bb[j];
          }
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
  }

  const int off = p.Lk - p.Lq;
  for (int i = 0; i < TM; i++) {
    const int m = m0 + ty + 16 * i;
    if (m >= M) {
      continue;
    }
    for (int j = 0; j < TN; j++) {
      const int n = n0 + tx + 16 * j;
      if (n >= N) {
        continue;
      }
      const float x = acc[i][j];
#if MODE == 0
      const size_t r = size_t(z) * size_t(p.Lq) + size_t(m);
      const bool ok = !CAUSAL || n <= m + off;
      P[r * Lk + size_t(n)] = ok ? exp2(x * p.scale * LOG2E - L[r] * LOG2E) : 0.0f;
#elif MODE == 1
      const size_t r = size_t(z) * size_t(p.Lq) + size_t(m);
      dS[r * Lk + size_t(n)] = P[r * Lk + size_t(n)] * (x - delta[r]);
#elif MODE == 2
      dV[(size_t(z) * Lk + size_t(m)) * D + n] = mltop_from_f32(x);
#elif MODE == 3
      dK[(size_t(z) * Lk + size_t(m)) * D + n] = mltop_from_f32(x * p.scale);
#else
      dQ[(size_t(z) * size_t(p.Lq) + size_t(m)) * D + n] = mltop_from_f32(x * p.scale);
#endif
    }
  }
}
