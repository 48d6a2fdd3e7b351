// attn_fwd: flash-attention forward, O = softmax(scale·Q·Kᵀ)·V and the
// natural-log logsumexp L of each row's scaled scores.
//
// Macros (baked knobs): BQ, BK (query / key tile rows), WM, WN (warp grid),
// D (head dim), DTYPE (0 f32, 1 f16, 2 bf16), CAUSAL (0/1).
// Buffers: Q [B,H,Lq,D] T, K [B,Hkv,Lk,D] T, V [B,Hkv,Lk,D] T,
//          O [B,H,Lq,D] T, L [B,H,Lq] f32; scalars at buffer(5).
// Grid (ceil(Lq/BQ), H, B), threadgroup 32·WM·WN threads.
//
// Tile geometry: warp w = (wm, wn) with wm = w / WN, wn = w % WN owns the
// S = Q·Kᵀ tile rows [wm·BQ/WM, +BQ/WM) and key columns [wn·BK/WN, +BK/WN).
// Row max and row sum are combined over the WN warps of a row through
// red_smem. For O = P·V the warp owns the rows of wm and head-dim columns
// [wn·D/WN, +D/WN); with WN > 1 the probabilities go through P_smem so each
// warp sees whole rows of P. With WN == 1 the S accumulators are reused as
// the A operand of P·V and neither P_smem nor red_smem exists.
//
// Threadgroup memory (pad 8 elements against bank conflicts), exactly the
// Plan's items: Q_smem BQ·(D+8), K_smem BK·(D+8), V_smem BK·(D+8) of T;
// with WN > 1 also P_smem BQ·(BK+8) of T and red_smem 2·WN·BQ floats.
#include "mltop_common.h"

#ifndef CAUSAL
#define CAUSAL 0
#endif

#define NT (32 * WM * WN) // threads per group
#define LDS (D + 8)       // row stride of Q_smem, K_smem, V_smem
#define LDP (BK + 8)      // row stride of P_smem
#define WROWS (BQ / WM)   // S / O rows per warp
#define WCOLS (BK / WN)   // S key columns per warp
#define WDIMS (D / WN)    // O head-dim columns per warp
#define TM (WROWS / 8)    // row fragments per warp
#define TN (WCOLS / 8)    // key-column fragments per warp
#define TD (WDIMS / 8)    // head-dim fragments per warp

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8·WM");
static_assert(BK % (8 * WN) == 0, "BK must be a multiple of 8·WN");
static_assert(D % (8 * WN) == 0, "D must be a multiple of 8·WN");

struct AttnParams {
  int B;
  int H;
  int Hkv;
  int Lq;
  int Lk;
  float scale;
};

[[kernel, max_total_threads_per_threadgroup(NT)]] void attn_fwd(
    const device mltop_t* Q [[buffer(0)]],
    const device mltop_t* K [[buffer(1)]],
    const device mltop_t* V [[buffer(2)]],
    device mltop_t* O [[buffer(3)]],
    device float* L [[buffer(4)]],
    constant AttnParams& p [[buffer(5)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup mltop_t Q_smem[BQ * LDS];
  threadgroup mltop_t K_smem[BK * LDS];
  threadgroup mltop_t V_smem[BK * LDS];
#if WN > 1
  threadgroup mltop_t P_smem[BQ * LDP];
  threadgroup float red_smem[2 * WN * BQ]; // [0][wn][row] max partials, [1][wn][row] sum partials
#endif

  const int q0 = int(tg.x) * BQ;
  const int h = int(tg.y);
  const int b = int(tg.z);
  const int hkv = h / (p.H / p.Hkv);
  const int wm = int(sgid) / WN;
  const int wn = int(sgid) % WN;
  const int row0 = wm * WROWS; // first S/O row of this warp within the tile
  const int col0 = wn * WCOLS; // first key column of this warp within a K tile
  const int dim0 = wn * WDIMS; // first O head-dim column of this warp
  const short2 fc = mltop_frag_coord(lane);

  const device mltop_t* Qh = Q + (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq) * D;
  const device mltop_t* Kh = K + (size_t(b) * size_t(p.Hkv) + size_t(hkv)) * size_t(p.Lk) * D;
  const device mltop_t* Vh = V + (size_t(b) * size_t(p.Hkv) + size_t(hkv)) * size_t(p.Lk) * D;

  mltop_load_tile<BQ, D, LDS, NT>(Q_smem, Qh + size_t(q0) * D, p.Lq - q0, tid);

  // Running row max and sum for the rows this lane holds (one per row
  // fragment; the four lanes of a row keep identical copies).
  float m_run[TM];
  float l_run[TM];
  simdgroup_float8x8 Oacc[TM][TD];
  for (int i = 0; i < TM; i++) {
    m_run[i] = -INFINITY;
    l_run[i] = 0.0f;
    for (int d = 0; d < TD; d++) {
      Oacc[i][d] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
  }

  // Key tiles to visit. Causal: row i sees key j iff j <= i + (Lk - Lq), so
  // the last row of this query tile bounds the keys any row here can see.
  int kend = p.Lk;
#if CAUSAL
  kend = min(kend, q0 + BQ + (p.Lk - p.Lq)); // one past the last visible key
#endif
  const int ntiles = kend > 0 ? (kend + BK - 1) / BK : 0;

  for (int t = 0; t < ntiles; t++) {
    const int k0 = t * BK;
    threadgroup_barrier(mem_flags::mem_threadgroup); // previous tile's readers are done (and Q is loaded)
    mltop_load_tile<BK, D, LDS, NT>(K_smem, Kh + size_t(k0) * D, p.Lk - k0, tid);
    mltop_load_tile<BK, D, LDS, NT>(V_smem, Vh + size_t(k0) * D, p.Lk - k0, tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // S = Q·Kᵀ for this warp's TM×TN fragments.
    simdgroup_float8x8 S[TM][TN];
    for (int i = 0; i < TM; i++) {
      for (int j = 0; j < TN; j++) {
        S[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
      }
    }
    for (int kk = 0; kk < D; kk += 8) {
      simdgroup_float8x8 A[TM];
      for (int i = 0; i < TM; i++) {
        mltop_frag_load(A[i], Q_smem + (row0 + 8 * i) * LDS + kk, LDS, fc);
      }
      for (int j = 0; j < TN; j++) {
        simdgroup_float8x8 Bf;
        // Bf(k, n) = K[col0 + 8j + n][kk + k]: the transpose of K_smem.
        mltop_frag_load_t(Bf, K_smem + (col0 + 8 * j) * LDS + kk, LDS, fc);
        for (int i = 0; i < TM; i++) {
          simdgroup_multiply_accumulate(S[i][j], A[i], Bf, S[i][j]);
        }
      }
    }

    // Scale, mask, and this warp's row max over its key columns.
    float m_new[TM];
    for (int i = 0; i < TM; i++) {
      const int qrow = q0 + row0 + 8 * i + fc.y;
      float mx = -INFINITY;
      for (int j = 0; j < TN; j++) {
        thread auto& e = S[i][j].thread_elements();
        for (int c = 0; c < 2; c++) {
          const int kcol = k0 + col0 + 8 * j + fc.x + c;
          bool visible = kcol < p.Lk;
#if CAUSAL
          visible = visible && kcol <= qrow + (p.Lk - p.Lq);
#endif
          const float s = visible ? float(e[c]) * p.scale : -INFINITY;
          e[c] = s;
          mx = max(mx, s);
        }
      }
      m_new[i] = mltop_row_max(mx);
    }

#if WN > 1
    // Combine the row max over the WN warps that share these rows.
    if (fc.x == 0) {
      for (int i = 0; i < TM; i++) {
        red_smem[wn * BQ + row0 + 8 * i + fc.y] = m_new[i];
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int i = 0; i < TM; i++) {
      float mx = -INFINITY;
      for (int w = 0; w < WN; w++) {
        mx = max(mx, red_smem[w * BQ + row0 + 8 * i + fc.y]);
      }
      m_new[i] = mx;
    }
#endif

    // P = exp(S - m), rescale factors, and this warp's row sums.
    float alpha[TM];
    float psum[TM];
    for (int i = 0; i < TM; i++) {
      const float m = max(m_run[i], m_new[i]);
      // A row with nothing visible yet keeps m = -inf; subtracting 0 then
      // keeps exp(-inf) = 0 instead of exp(-inf + inf) = NaN.
      const float msafe = m == -INFINITY ? 0.0f : m;
      alpha[i] = exp(m_run[i] - msafe);
      m_run[i] = m;
      float sum = 0.0f;
      for (int j = 0; j < TN; j++) {
        thread auto& e = S[i][j].thread_elements();
        for (int c = 0; c < 2; c++) {
          const float pv = exp(float(e[c]) - msafe);
          e[c] = pv;
          sum += pv;
        }
      }
      psum[i] = mltop_row_sum(sum);
    }

#if WN > 1
    // Share P (rounded to T, as it enters the P·V product) and the sum partials.
    for (int i = 0; i < TM; i++) {
      for (int j = 0; j < TN; j++) {
        thread auto& e = S[i][j].thread_elements();
        const int r = row0 + 8 * i + fc.y;
        const int c = col0 + 8 * j + fc.x;
        P_smem[r * LDP + c] = mltop_from_f32(float(e[0]));
        P_smem[r * LDP + c + 1] = mltop_from_f32(float(e[1]));
      }
      if (fc.x == 0) {
        red_smem[(WN + wn) * BQ + row0 + 8 * i + fc.y] = psum[i];
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int i = 0; i < TM; i++) {
      float sum = 0.0f;
      for (int w = 0; w < WN; w++) {
        sum += red_smem[(WN + w) * BQ + row0 + 8 * i + fc.y];
      }
      psum[i] = sum;
    }
#endif

    // O = alpha·O + P·V over this warp's rows and head-dim columns.
    for (int i = 0; i < TM; i++) {
      l_run[i] = l_run[i] * alpha[i] + psum[i];
      for (int d = 0; d < TD; d++) {
        thread auto& e = Oacc[i][d].thread_elements();
        e[0] = float(e[0]) * alpha[i];
        e[1] = float(e[1]) * alpha[i];
      }
    }
#if WN > 1
    for (int kj = 0; kj < BK; kj += 8) {
      simdgroup_float8x8 A[TM];
      for (int i = 0; i < TM; i++) {
        mltop_frag_load(A[i], P_smem + (row0 + 8 * i) * LDP + kj, LDP, fc);
      }
      for (int d = 0; d < TD; d++) {
        simdgroup_float8x8 Bf;
        mltop_frag_load(Bf, V_smem + kj * LDS + dim0 + 8 * d, LDS, fc);
        for (int i = 0; i < TM; i++) {
          simdgroup_multiply_accumulate(Oacc[i][d], A[i], Bf, Oacc[i][d]);
        }
      }
    }
#else
    for (int j = 0; j < TN; j++) {
#if DTYPE != 0
      // Round P to T as the WN > 1 path does through P_smem, so both paths
      // feed the same values into P·V.
      for (int i = 0; i < TM; i++) {
        thread auto& e = S[i][j].thread_elements();
        e[0] = mltop_to_f32(mltop_from_f32(float(e[0])));
        e[1] = mltop_to_f32(mltop_from_f32(float(e[1])));
      }
#endif
      for (int d = 0; d < TD; d++) {
        simdgroup_float8x8 Bf;
        mltop_frag_load(Bf, V_smem + (col0 + 8 * j) * LDS + dim0 + 8 * d, LDS, fc);
        for (int i = 0; i < TM; i++) {
          simdgroup_multiply_accumulate(Oacc[i][d], S[i][j], Bf, Oacc[i][d]);
        }
      }
    }
#endif
  }

  // Normalise and store. A row that saw no key (possible when Lq > Lk with
  // causal) has l = 0: O = 0 and L = -inf.
  device mltop_t* Oh = O + (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq) * D;
  device float* Lh = L + (size_t(b) * size_t(p.H) + size_t(h)) * size_t(p.Lq);
  for (int i = 0; i < TM; i++) {
    const int qrow = q0 + row0 + 8 * i + fc.y;
    if (qrow >= p.Lq) {
      continue;
    }
    const bool empty = l_run[i] == 0.0f;
    const float inv = empty ? 0.0f : 1.0f / l_run[i];
    for (int d = 0; d < TD; d++) {
      thread auto& e = Oacc[i][d].thread_elements();
      const int col = dim0 + 8 * d + fc.x;
      Oh[size_t(qrow) * D + col] = mltop_from_f32(float(e[0]) * inv);
      Oh[size_t(qrow) * D + col + 1] = mltop_from_f32(float(e[1]) * inv);
    }
    if (wn == 0 && fc.x == 0) {
      Lh[qrow] = empty ? -INFINITY : m_run[i] + log(l_run[i]);
    }
  }
}
