// attn_bwd_atomic: the one-kernel attention backward (seed 000's design),
// written from the math for mltop. Plan contract: kernels/attn_bwd_atomic.go.
//
// Macros: BQ, BK, WM, WN, D, DTYPE, CAUSAL, MASK.
// Buffers: Q, K, V, O (T), L (f32), dO (T), mask (f32 [Lq,Lk], unused when
// MASK=0), dQ (T), dK_acc, dV_acc (f32, zeroed by the plan); scalars at
// buffer(10). Grid (ceil(Lq/BQ), H, B), threadgroup 32·WM·WN threads.
//
// The group owns BQ query rows. It loads Q and dO once and computes delta =
// rowsum(dO∘O) of its rows. Per key tile: warp (wm, wn) computes the S and
// dP fragments of its RW×CW sub-tile with 8x8 simdgroup matrices, turns
// them into P = exp2(S·scale·log2e − L·log2e) and dS = P∘(dP − delta) in
// P_smem/dS_smem; dQ += dS·K accumulates in simdgroup matrices (warp (wm,
// wn) owns dQ rows of wm and head-dim columns of wn). The tile's dK/dV
// partials dSᵀ·Q and Pᵀ·dO are 8x8 output fragments dealt round-robin to
// the warps; each fragment element lives in exactly one lane, which adds it
// once with a device atomic_float (Metal 3.0). Adding it from every lane
// that holds a copy of the row would overcount — seed 000's 4× pitfall.
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef MASK
#define MASK 0
#endif

#define NT (32 * WM * WN)        // threads per group
#define NW (WM * WN)             // warps per group
#define RW (BQ / WM)             // S rows per warp
#define CW (BK / WN)             // S columns per warp
#define DW (D / WN)              // dQ columns per warp
#define TM (RW / 8)              // row fragments per warp
#define TN (CW / 8)              // S column fragments per warp
#define TD (DW / 8)              // dQ column fragments per warp
#define LDT (D + 8)              // row stride of the T tiles
#define LDS (BK + 4)             // row stride of P_smem, dS_smem
#define NFRAG ((BK / 8) * (D / 8)) // 8x8 fragments of a BK×D dK/dV partial
#define LOG2E 1.4426950408889634f

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8·WM");
static_assert(BK % (8 * WN) == 0, "BK must be a multiple of 8·WN");
static_assert(D % (8 * WN) == 0, "D must be a multiple of 8·WN");

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(NT)]] void attn_bwd_atomic(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    const device mltop_t* O [[buffer(3)]],
    const device float* L [[buffer(4)]],
    const device mltop_t* dO [[buffer(5)]],
    const device float* mask [[buffer(6)]],
    device mltop_t* dQ [[buffer(7)]],
    device float* dKa [[buffer(8)]],
    device float* dVa [[buffer(9)]],
    constant BwdParams& p [[buffer(10)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup mltop_t Q_smem[BQ * LDT];
  threadgroup mltop_t dO_smem[BQ * LDT];
  threadgroup mltop_t K_smem[BK * LDT];
  threadgroup mltop_t V_smem[BK * LDT];
  threadgroup float P_smem[BQ * LDS];
  threadgroup float dS_smem[BQ * LDS];
  threadgroup float stat_smem[2 * BQ]; // [0, BQ): L·log2e, [BQ, 2BQ): delta

  const int q0 = int(tg.x) * BQ;
  const int h = int(tg.y);
  const int b = int(tg.z);
  const int hkv = h / (p.H / p.Hkv);
  const int wm = int(sgid) / WN;
  const int wn = int(sgid) % WN;
  const short2 fc = mltop_frag_coord(lane);
  const int off = p.Lk - p.Lq; // causal: row i sees key j iff j <= i + off
  const float sl2 = p.scale * LOG2E;
  const size_t qrow = (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq);
  const size_t kvrow = (size_t(b) * size_t(p.Hkv) + size_t(hkv)) * size_t(p.Lk);

  mltop_load_tile<BQ, D, LDT, NT>(Q_smem, Q + (qrow + size_t(q0)) * D, p.Lq - q0, tid);
  mltop_load_tile<BQ, D, LDT, NT>(dO_smem, dO + (qrow + size_t(q0)) * D, p.Lq - q0, tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);

  // Row statistics, one warp per row: delta = Σ dO·O, L in log2 units.
  for (int r = int(sgid); r < BQ; r += NW) {
    const int row = q0 + r;
    float acc = 0.0f;
    if (row < p.Lq) {
      for (int d = int(lane); d < D; d += 32) {
        acc += mltop_to_f32(dO_smem[r * LDT + d]) * mltop_to_f32(O[(qrow + size_t(row)) * D + d]);
      }
    }
    acc = simd_sum(acc);
    if (lane == 0) {
      stat_smem[r] = row < p.Lq ? L[qrow + size_t(row)] * LOG2E : 0.0f;
      stat_smem[BQ + r] = acc;
    }
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
    threadgroup_barrier(mem_flags::mem_threadgroup); // the last tile's readers are done
    mltop_load_tile<BK, D, LDT, NT>(K_smem, K + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);
    mltop_load_tile<BK, D, LDT, NT>(V_smem, V + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // S and dP of this warp's sub-tile, then P and dS into shared memory.
    for (int i = 0; i < TM; i++) {
      for (int j = 0; j < TN; j++) {
        simdgroup_float8x8 s = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        simdgroup_float8x8 dp = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        const int r0 = wm * RW + i * 8;
        const int c0 = wn * CW + j * 8;
        for (int kd = 0; kd < D; kd += 8) {
          simdgroup_float8x8 a;
          simdgroup_float8x8 bt;
          mltop_frag_load(a, Q_smem + r0 * LDT + kd, LDT, fc);
          mltop_frag_load_t(bt, K_smem + c0 * LDT + kd, LDT, fc);
          simdgroup_multiply_accumulate(s, a, bt, s);
          mltop_frag_load(a, dO_smem + r0 * LDT + kd, LDT, fc);
          mltop_frag_load_t(bt, V_smem + c0 * LDT + kd, LDT, fc);
          simdgroup_multiply_accumulate(dp, a, bt, dp);
        }
        thread auto& se = s.thread_elements();
        thread auto& de = dp.thread_elements();
        const int r = r0 + fc.y;
        const int row = q0 + r;
        for (int e = 0; e < 2; e++) {
          const int c = c0 + fc.x + e;
          const int col = k0 + c;
          bool ok = row < p.Lq && col < p.Lk;
#if CAUSAL
          ok = ok && col <= row + off;
#endif
          float pv = 0.0f;
          if (ok) {
            float x = se[e] * sl2;
#if MASK
            x += mask[size_t(row) * size_t(p.Lk) + size_t(col)] * LOG2E;
#endif
            pv = exp2(x - stat_smem[r]);
          }
          P_smem[r * LDS + c] = pv;
          dS_smem[r * LDS + c] = pv * (de[e] - stat_smem[BQ + r]);
        }
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // dQ += dS·K.
    for (int i = 0; i < TM; i++) {
      for (int d = 0; d < TD; d++) {
        for (int kb = 0; kb < BK; kb += 8) {
          simdgroup_float8x8 a;
          simdgroup_float8x8 bk;
          mltop_ffrag_load(a, dS_smem + (wm * RW + i * 8) * LDS + kb, LDS, fc);
          mltop_frag_load(bk, K_smem + kb * LDT + wn * DW + d * 8, LDT, fc);
          simdgroup_multiply_accumulate(dq[i][d], a, bk, dq[i][d]);
        }
      }
    }

    // dK/dV partials of the tile: fragment f = (jb, db) to warp f mod NW,
    // each element added once.
    for (int f = int(sgid); f < NFRAG; f += NW) {
      const int jb = f / (D / 8);
      const int db = f % (D / 8);
      simdgroup_float8x8 ak = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
      simdgroup_float8x8 av = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
      for (int rb = 0; rb < BQ; rb += 8) {
        simdgroup_float8x8 a;
        simdgroup_float8x8 bq;
        mltop_ffrag_load_t(a, dS_smem + rb * LDS + jb * 8, LDS, fc);
        mltop_frag_load(bq, Q_smem + rb * LDT + db * 8, LDT, fc);
        simdgroup_multiply_accumulate(ak, a, bq, ak);
        mltop_ffrag_load_t(a, P_smem + rb * LDS + jb * 8, LDS, fc);
        mltop_frag_load(bq, dO_smem + rb * LDT + db * 8, LDT, fc);
        simdgroup_multiply_accumulate(av, a, bq, av);
      }
      const int key = k0 + jb * 8 + fc.y;
      if (key < p.Lk) {
        thread auto& ke = ak.thread_elements();
        thread auto& ve = av.thread_elements();
        const size_t o = (kvrow + size_t(key)) * D + size_t(db * 8 + fc.x);
        for (int e = 0; e < 2; e++) {
          atomic_fetch_add_explicit((device atomic_float*)(dKa + o + e), ke[e] * p.scale, memory_order_relaxed);
          atomic_fetch_add_explicit((device atomic_float*)(dVa + o + e), ve[e], memory_order_relaxed);
        }
      }
    }
  }

  for (int i = 0; i < TM; i++) {
    const int row = q0 + wm * RW + i * 8 + fc.y;
    if (row >= p.Lq) {
      continue;
    }
    for (int d = 0; d < TD; d++) {
      thread auto& qe = dq[i][d].thread_elements();
      const size_t o = (qrow + size_t(row)) * D + size_t(wn * DW + d * 8 + fc.x);
      dQ[o] = mltop_from_f32(qe[0] * p.scale);
      dQ[o + 1] = mltop_from_f32(qe[1] * p.scale);
    }
  }
}
