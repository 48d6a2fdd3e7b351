// attn_bwd_dkv: the dK/dV kernel of the two-kernel attention backward
// (seed 001's design), written from the math for mltop. Plan contract:
// kernels/attn_bwd.go.
//
// Macros: BQ, BK, WM (the _dkv knobs), D, DTYPE, CAUSAL, ALIAS.
// Buffers: Q, K, V, dO (T), L, delta (f32), dK, dV (T); scalars at
// buffer(8). Grid (ceil(Lk/BK), Hkv, B), threadgroup 32·WM threads.
//
// The group keeps its BK keys' K and V resident in KV_smem and loops over
// the H/Hkv query heads of its GQA group, then over the query blocks that
// see the keys (causal skips the others). Warp w owns rows [w·RW, …) of
// each block: its S/dP fragments give P and dS (P_smem, dS_smem, own rows
// only), and it accumulates partial dK = dSᵀ·Q and dV = Pᵀ·dO of the whole
// BK×D block in (BK/8)·(D/8) simdgroup matrices each. With WM > 1 the
// partials are summed into warp 0 through red_smem (BK·D floats, dK then
// dV) after the loops; with ALIAS, red_smem is the storage of Q_smem and
// dO_smem, free by then (seed 001's aliasing: the TGM budget drops by
// BK·D·4 bytes).
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef ALIAS
#define ALIAS 0
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
static_assert(!ALIAS || WM == 1 || BK * D * 4 <= 2 * BQ * LDT * int(sizeof(mltop_t)), "ALIAS: red_smem must fit over Q_smem+dO_smem");

struct BwdParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

#if WM > 1
// Sum the warps' partial fragments into warp 0 through red (a BK×D f32 tile).
inline void reduce_warps(thread simdgroup_float8x8 (&acc)[TN][TD], threadgroup float* red, int w, short2 fc) {
  for (int src = 1; src < WM; src++) {
    if (w == src) {
      for (int jb = 0; jb < TN; jb++) {
        for (int db = 0; db < TD; db++) {
          thread auto& e = acc[jb][db].thread_elements();
          red[(jb * 8 + fc.y) * D + db * 8 + fc.x] = e[0];
          red[(jb * 8 + fc.y) * D + db * 8 + fc.x + 1] = e[1];
        }
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (w == 0) {
      for (int jb = 0; jb < TN; jb++) {
        for (int db = 0; db < TD; db++) {
          thread auto& e = acc[jb][db].thread_elements();
          e[0] += red[(jb * 8 + fc.y) * D + db * 8 + fc.x];
          e[1] += red[(jb * 8 + fc.y) * D + db * 8 + fc.x + 1];
        }
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}
#endif

[[kernel, max_total_threads_per_threadgroup(NT)]] void attn_bwd_dkv(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    const device mltop_t* dO [[buffer(3)]],
    const device float* L [[buffer(4)]],
    const device float* delta [[buffer(5)]],
    device mltop_t* dK [[buffer(6)]],
    device mltop_t* dV [[buffer(7)]],
    constant BwdParams& p [[buffer(8)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
#if ALIAS && WM > 1
  // Q_smem then dO_smem in one float array (4-byte aligned), red_smem over both.
  threadgroup float QdO_smem[(2 * BQ * LDT * int(sizeof(mltop_t))) / 4];
  threadgroup mltop_t* Q_smem = (threadgroup mltop_t*)QdO_smem;
  threadgroup mltop_t* dO_smem = Q_smem + BQ * LDT;
  threadgroup float* red_smem = QdO_smem;
#else
  threadgroup mltop_t Q_smem[BQ * LDT];
  threadgroup mltop_t dO_smem[BQ * LDT];
#if WM > 1
  threadgroup float red_smem[BK * D];
#endif
#endif
  threadgroup mltop_t KV_smem[2 * BK * LDT]; // K rows, then V rows
  threadgroup float P_smem[BQ * LDS];
  threadgroup float dS_smem[BQ * LDS];
  threadgroup float stat_smem[2 * BQ];

  const int k0 = int(tg.x) * BK;
  const int hkv = int(tg.y);
  const int b = int(tg.z);
  const int G = p.H / p.Hkv;
  const short2 fc = mltop_frag_coord(lane);
  const int off = p.Lk - p.Lq;
  const float sl2 = p.scale * LOG2E;
  const size_t kvrow = (size_t(b) * size_t(p.Hkv) + size_t(hkv)) * size_t(p.Lk);
  const int w0 = int(sgid) * RW;
  threadgroup mltop_t* K_smem = KV_smem;
  threadgroup mltop_t* V_smem = KV_smem + BK * LDT;

  mltop_load_tile<BK, D, LDT, NT>(K_smem, K + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);
  mltop_load_tile<BK, D, LDT, NT>(V_smem, V + (kvrow + size_t(k0)) * D, p.Lk - k0, tid);

  simdgroup_float8x8 dk[TN][TD];
  simdgroup_float8x8 dv[TN][TD];
  for (int jb = 0; jb < TN; jb++) {
    for (int db = 0; db < TD; db++) {
      dk[jb][db] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
      dv[jb][db] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
  }

  int qstart = 0;
#if CAUSAL
  qstart = max(0, k0 - off) / BQ * BQ; // the first row that sees key k0 is k0 - off
#endif
  for (int hh = 0; hh < G; hh++) {
    const size_t qrow = (size_t(b) * size_t(p.H) + size_t(hkv * G + hh)) * size_t(p.Lq);
    for (int i0 = qstart; i0 < p.Lq; i0 += BQ) {
      threadgroup_barrier(mem_flags::mem_threadgroup);
      mltop_load_tile<BQ, D, LDT, NT>(Q_smem, Q + (qrow + size_t(i0)) * D, p.Lq - i0, tid);
      mltop_load_tile<BQ, D, LDT, NT>(dO_smem, dO + (qrow + size_t(i0)) * D, p.Lq - i0, tid);
      for (int r = int(tid); r < BQ; r += NT) {
        const int row = i0 + r;
        stat_smem[r] = row < p.Lq ? L[qrow + size_t(row)] * LOG2E : 0.0f;
        stat_smem[BQ + r] = row < p.Lq ? delta[qrow + size_t(row)] : 0.0f;
      }
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
          const int row = i0 + r;
          for (int e = 0; e < 2; e++) {
            const int c = j * 8 + fc.x + e;
            const int col = k0 + c;
            bool ok = row < p.Lq && col < p.Lk;
#if CAUSAL
            ok = ok && col <= row + off;
#endif
            const float pv = ok ? exp2(se[e] * sl2 - stat_smem[r]) : 0.0f;
            P_smem[r * LDS + c] = pv;
            dS_smem[r * LDS + c] = pv * (de[e] - stat_smem[BQ + r]);
          }
        }
      }
      // Each warp reads back only its own rows of P/dS, but the emulated
      // and real simdgroups alike need the stores visible: a group barrier
      // keeps it simple.
      threadgroup_barrier(mem_flags::mem_threadgroup);

      for (int jb = 0; jb < TN; jb++) {
        for (int db = 0; db < TD; db++) {
          for (int i = 0; i < TM; i++) {
            const int rb = w0 + i * 8;
            simdgroup_float8x8 a;
            simdgroup_float8x8 bq;
            mltop_ffrag_load_t(a, dS_smem + rb * LDS + jb * 8, LDS, fc);
            mltop_frag_load(bq, Q_smem + rb * LDT + db * 8, LDT, fc);
            simdgroup_multiply_accumulate(dk[jb][db], a, bq, dk[jb][db]);
            mltop_ffrag_load_t(a, P_smem + rb * LDS + jb * 8, LDS, fc);
            mltop_frag_load(bq, dO_smem + rb * LDT + db * 8, LDT, fc);
            simdgroup_multiply_accumulate(dv[jb][db], a, bq, dv[jb][db]);
          }
        }
      }
    }
  }

#if WM > 1
  threadgroup_barrier(mem_flags::mem_threadgroup); // Q_smem/dO_smem are free (ALIAS)
  reduce_warps(dk, red_smem, int(sgid), fc);
  reduce_warps(dv, red_smem, int(sgid), fc);
#endif
  if (sgid == 0) {
    for (int jb = 0; jb < TN; jb++) {
      const int key = k0 + jb * 8 + fc.y;
      if (key >= p.Lk) {
        continue;
      }
      for (int db = 0; db < TD; db++) {
        thread auto& ke = dk[jb][db].thread_elements();
        thread auto& ve = dv[jb][db].thread_elements();
        const size_t o = (kvrow + size_t(key)) * D + size_t(db * 8 + fc.x);
        dK[o] = mltop_from_f32(ke[0] * p.scale);
        dK[o + 1] = mltop_from_f32(ke[1] * p.scale);
        dV[o] = mltop_from_f32(ve[0]);
        dV[o + 1] = mltop_from_f32(ve[1]);
      }
    }
  }
}
