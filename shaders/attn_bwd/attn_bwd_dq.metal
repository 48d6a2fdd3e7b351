// attn_bwd_dq: the dQ kernel of the two-kernel attention backward (seed
// 001's design), written from the math for mltop. Plan contract:
// kernels/attn_bwd.go.
//
// Macros: BQ, BK, WM (the _dq knobs), D, DTYPE, CAUSAL.
// Buffers: Q, K, V, dO (T), L, delta (f32), dQ (T); scalars at buffer(7).
// Grid (ceil(Lq/BQ), H, B), threadgroup 32·WM threads; warp w owns query
// rows [w·RW, (w+1)·RW). Per key tile the warp computes its S and dP
// fragments (8x8 simdgroup matrices), P = exp2(S·scale·log2e − L·log2e)
// (log2 domain), dS = P∘(dP − delta) into dS_smem, and dQ += dS·K in
// simdgroup accumulators. No atomics.
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif

#define NT (32 * WM)
#define RW (BQ / WM)
#define TM (RW / 8)
#define TN (BK / 8)
#define TD (D / 8)
#define LDT (D + 8)
#define LDS (BK + 4)
#define LOG2E 1.4426950408889634f

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8·WM");
static_assert(BK % 8 == 0, "BK must be a multiple of 8");

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(NT)]] void attn_bwd_dq(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    const device mltop_t* dO [[buffer(3)]],
    const device float* L [[buffer(4)]],
    const device float* delta [[buffer(5)]],
    device mltop_t* dQ [[buffer(6)]],
    constant BwdParams& p [[buffer(7)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup mltop_t Q_smem[BQ * LDT];
  threadgroup mltop_t dO_smem[BQ * LDT];
  threadgroup mltop_t K_smem[BK * LDT];
  threadgroup mltop_t V_smem[BK * LDT];
  threadgroup float dS_smem[BQ * LDS];
  threadgroup float stat_smem[2 * BQ]; // L·log2e, then delta

  const int q0 = int(tg.x) * BQ;
  const int h = int(tg.y);
  const int b = int(tg.z);
  const int hkv = h / (p.H / p.Hkv);
  const short2 fc = mltop_frag_coord(lane);
  const int off = p.Lk - p.Lq;
  const float sl2 = p.scale * LOG2E;
  const size_t qrow = (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq);
  const size_t kvrow = (size_t(b) * size_t(p.Hkv) + size_t(hkv)) * size_t(p.Lk);
  const int w0 = int(sgid) * RW; // first row of this warp

  mltop_load_tile<BQ, D, LDT, NT>(Q_smem, Q + (qrow + size_t(q0)) * D, p.Lq - q0, tid);
  mltop_load_tile<BQ, D, LDT, NT>(dO_smem, dO + (qrow + size_t(q0)) * D, p.Lq - q0, tid);
  for (int r = int(tid); r < BQ; r += NT) {
    const int row = q0 + r;
    stat_smem[r] = row < p.Lq ? L[qrow + size_t(row)] * LOG2E : 0.0f;
    stat_smem[BQ + r] = row < p.Lq ? delta[qrow + size_t(row)] : 0.0f;
  }

  simdgroup_float8x8 dq[TM][TD];
  for (int i = 0; i < TM; i++) {
    for (int d = 0; d < TD; d++) {
      dq[i][d] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
  }

  int kend = p.Lk;
#if CAUSAL
  kend = max(0, min(kend, q0 + BQ + off));
#endif
  for (int k0 = 0; k0 < kend; k0 += BK) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    mltop_load_tile<BK, D, LDT, NT>(K_smem, K + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);
    mltop_load_tile<BK, D, LDT, NT>(V_smem, V + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (int i = 0; i < TM; i++) {
      for (int j = 0; j < TN; j++) {
        simdgroup_float8x8 s = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        simdgroup_float8x8 dp = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        const int r0 = w0 + i * 8;
        for (int kd = 0; kd < D; kd += 8) {
          simdgroup_float8x8 a;
          simdgroup_float8x8 bt;
          mltop_frag_load(a, Q_smem + r0 * LDT + kd, LDT, fc);
          mltop_frag_load_t(bt, K_smem + j * 8 * LDT + kd, LDT, fc);
          simdgroup_multiply_accumulate(s, a, bt, s);
          mltop_frag_load(a, dO_smem + r0 * LDT + kd, LDT, fc);
          mltop_frag_load_t(bt, V_smem + j * 8 * LDT + kd, LDT, fc);
          simdgroup_multiply_accumulate(dp, a, bt, dp);
        }
        thread auto& se = s.thread_elements();
        thread auto& de = dp.thread_elements();
        const int r = r0 + fc.y;
        const int row = q0 + r;
        for (int e = 0; e < 2; e++) {
          const int c = j * 8 + fc.x + e;
          const int col = k0 + c;
          bool ok = row < p.Lq && col < p.Lk;
#if CAUSAL
          ok = ok && col <= row + off;
#endif
          const float pv = ok ? exp2(se[e] * sl2 - stat_smem[r]) : 0.0f;
          dS_smem[r * LDS + c] = pv * (de[e] - stat_smem[BQ + r]);
        }
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (int i = 0; i < TM; i++) {
      for (int d = 0; d < TD; d++) {
        for (int kb = 0; kb < BK; kb += 8) {
          simdgroup_float8x8 a;
          simdgroup_float8x8 bk;
          mltop_ffrag_load(a, dS_smem + (w0 + i * 8) * LDS + kb, LDS, fc);
          mltop_frag_load(bk, K_smem + kb * LDT + d * 8, LDT, fc);
          simdgroup_multiply_accumulate(dq[i][d], a, bk, dq[i][d]);
        }
      }
    }
  }

  for (int i = 0; i < TM; i++) {
    const int row = q0 + w0 + i * 8 + fc.y;
    if (row >= p.Lq) {
      continue;
    }
    for (int d = 0; d < TD; d++) {
      thread auto& qe = dq[i][d].thread_elements();
      const size_t o = (qrow + size_t(row)) * D + size_t(d * 8 + fc.x);
      dQ[o] = mltop_from_f32(qe[0] * p.scale);
      dQ[o + 1] = mltop_from_f32(qe[1] * p.scale);
    }
  }
}
