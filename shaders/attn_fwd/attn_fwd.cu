// attn_fwd: softmax(scale·Q·Kᵀ [+ causal mask])·V with an online softmax
// (one pass over K and V per query block), after the FlashAttention-2
// scheme, written from the math for mltop.
//
// Grid (ceil(Lq/BQ), H, B); block 32·WM·WN threads. The BQ×BK score tile
// is split over a WM×WN warp grid: warp (wm, wn) owns score rows
// [wm·BQ/WM, …) and columns [wn·BK/WN, …). For O = P·V it owns the same
// rows and head-dim columns [wn·D/WN, …). With WN = 1 a warp holds whole
// rows, so P never leaves registers (the score accumulators become the A
// operand of the next mma); with WN > 1 row maxima are combined through
// red_smem and P goes through P_smem.
//
// f16/bf16 use tensor cores (mma.sync m16n8k16, ldmatrix, cp.async for the
// tiles). f32 uses plain FMAs with the same fragment layout.
//
// Fragment layout shared by both paths: a thread (g = lane/4, q = lane%4)
// holds rows rt·8 + g of its warp's rows and columns nt·8 + 2q + {0,1}.
#include "mltop_common.cuh"

#ifndef BQ
#define BQ 32
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 4
#endif
#ifndef WN
#define WN 1
#endif
#ifndef D
#define D 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif

#define NTHREADS (32 * WM * WN)
#define RW (BQ / WM)  // score rows per warp
#define CW (BK / WN)  // score columns per warp
#define DW (D / WN)   // output columns per warp
#define RT (RW / 8)   // 8-row groups per warp
#define NT (CW / 8)   // 8-column score tiles per warp
#define ND (DW / 8)   // 8-column output tiles per warp
#define LDQ (D + 8)   // row stride of Q_smem, K_smem, V_smem (elements)
#define LDP (BK + 8)  // row stride of P_smem

#if DTYPE != 0
#if __CUDA_ARCH__ < 800
#error "attn_fwd for f16/bf16 needs sm_80 or newer (mma.sync m16n8k16)"
#endif
#define TC 1
#else
#define TC 0
#endif

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8*WM");
static_assert(!TC || BQ % (16 * WM) == 0, "tensor-core path: BQ must be a multiple of 16*WM");
static_assert(BK % (8 * WN) == 0, "BK must be a multiple of 8*WN");
static_assert(D % (8 * WN) == 0 && D % 16 == 0, "D must be a multiple of 16 and of 8*WN");

#define MT (RW / 16)  // 16-row mma tiles per warp (tensor-core path)
// Keep the warp's Q fragments in registers when they are few (one 16-row
// tile, D <= 128: at most 32 registers); otherwise reload them from Q_smem
// with ldmatrix, which leaves the registers to the O accumulators.
#ifndef Q_IN_REGS
#define Q_IN_REGS (TC && MT == 1 && D <= 128)
#endif

extern "C" __global__ void __launch_bounds__(NTHREADS)
attn_fwd(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
         T* __restrict__ O, float* __restrict__ L,
         int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* Qs = (T*)smem;
    T* Ks = Qs + BQ * LDQ;
    T* Vs = Ks + BK * LDQ;
#if WN > 1
    T* Ps = Vs + BK * LDQ;
    float* red = (float*)(Ps + BQ * LDP);
#endif

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN;
    const int g = lane >> 2, q = lane & 3;
    // Causal: the last query blocks see the most keys; start them first so
    // that the short ones fill the tail of the grid.
    const int qb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const int q0 = qb * BQ, h = blockIdx.y, b = blockIdx.z;
    const int hk = h / (H / Hkv);
    const T* Qg = Q + (size_t)(b * H + h) * Lq * D;
    const T* Kg = K + (size_t)(b * Hkv + hk) * Lk * D;
    const T* Vg = V + (size_t)(b * Hkv + hk) * Lk * D;
    const int off = Lk - Lq;  // row i sees key j iff j <= i + off (causal)
    const int kend = CAUSAL ? min(Lk, q0 + BQ + off) : Lk;
    const int nk = kend > 0 ? (kend + BK - 1) / BK : 0;
    const float sl2 = scale * 1.4426950408889634f;  // scores in log2 units

    load_tile_rows<BQ, D, LDQ, NTHREADS>(Qs, Qg, q0, Lq, tid);
    if (nk > 0) load_tile_rows<BK, D, LDQ, NTHREADS>(Ks, Kg, 0, Lk, tid);
    async_commit();
    if (nk > 0) load_tile_rows<BK, D, LDQ, NTHREADS>(Vs, Vg, 0, Lk, tid);
    async_commit();

    float o[RT][ND][2];
    float m[RT], l[RT];
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
        m[rt] = -MLTOP_INF;
        l[rt] = 0.f;
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) o[rt][nd][0] = o[rt][nd][1] = 0.f;
    }
#if Q_IN_REGS
    unsigned qf[MT][D / 16][4];
#endif

    for (int j = 0; j < nk; ++j) {
        const int k0 = j * BK;
        async_wait<1>();  // Q and K_j have landed (V_j may be in flight)
        __syncthreads();

        float s[RT][NT][2];
#pragma unroll
        for (int rt = 0; rt < RT; ++rt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) s[rt][nt][0] = s[rt][nt][1] = 0.f;

#if TC
#if Q_IN_REGS
        if (j == 0) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int kd = 0; kd < D / 16; ++kd)
                    ldsm_x4(qf[mt][kd], Qs + (wm * RW + mt * 16 + (lane & 15)) * LDQ + kd * 16 + (lane >> 4) * 8);
        }
#endif
#pragma unroll
        for (int kd = 0; kd < D / 16; ++kd) {
            unsigned a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
#if Q_IN_REGS
#pragma unroll
                for (int x = 0; x < 4; ++x) a[mt][x] = qf[mt][kd][x];
#else
                ldsm_x4(a[mt], Qs + (wm * RW + mt * 16 + (lane & 15)) * LDQ + kd * 16 + (lane >> 4) * 8);
#endif
            }
#pragma unroll
            for (int np = 0; np < NT / 2; ++np) {
                unsigned bb[4];
                ldsm_x4(bb, Ks + (wn * CW + np * 16 + (lane & 7) + (lane >> 4) * 8) * LDQ + kd * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_16x16(s, mt, np, a[mt], bb);
                }
            }
            if (NT % 2) {
                unsigned bb[2];
                ldsm_x2(bb, Ks + (wn * CW + (NT - 1) * 8 + (lane & 7)) * LDQ + kd * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
                    mma16816(s[2 * mt][NT - 1][0], s[2 * mt][NT - 1][1], s[2 * mt + 1][NT - 1][0], s[2 * mt + 1][NT - 1][1], a[mt], bb[0], bb[1]);
            }
        }
#else
#pragma unroll 4
        for (int d = 0; d < D; d += 4) {
            float4 qv[RT];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) qv[rt] = *(const float4*)(Qs + (wm * RW + rt * 8 + g) * LDQ + d);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float4 kv = *(const float4*)(Ks + (wn * CW + nt * 8 + 2 * q + e) * LDQ + d);
#pragma unroll
                    for (int rt = 0; rt < RT; ++rt)
                        s[rt][nt][e] += qv[rt].x * kv.x + qv[rt].y * kv.y + qv[rt].z * kv.z + qv[rt].w * kv.w;
                }
        }
#endif
        __syncthreads();  // every warp is done with K_j: fetch K_{j+1}
        if (j + 1 < nk) load_tile_rows<BK, D, LDQ, NTHREADS>(Ks, Kg, k0 + BK, Lk, tid);
        async_commit();

        // Mask keys past Lk and, when causal, keys after the row's diagonal.
        if (k0 + BK > Lk || (CAUSAL && k0 + BK - 1 > q0 + off)) {
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
                const int row = q0 + wm * RW + rt * 8 + g;
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int col = k0 + wn * CW + nt * 8 + 2 * q + e;
                        if (col >= Lk || (CAUSAL && col > row + off)) s[rt][nt][e] = -MLTOP_INF;
                    }
            }
        }

        float mx[RT];
#pragma unroll
        for (int rt = 0; rt < RT; ++rt) {
            float v = -MLTOP_INF;
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) v = fmaxf(v, fmaxf(s[rt][nt][0], s[rt][nt][1]));
            v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
            v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
            mx[rt] = v;
        }
#if WN > 1
        if (q == 0) {
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) red[wn * BQ + wm * RW + rt * 8 + g] = mx[rt];
        }
        __syncthreads();
#pragma unroll
        for (int rt = 0; rt < RT; ++rt) {
            float v = -MLTOP_INF;
#pragma unroll
            for (int w = 0; w < WN; ++w) v = fmaxf(v, red[w * BQ + wm * RW + rt * 8 + g]);
            mx[rt] = v;
        }
#endif

        // Online softmax: rescale what was accumulated by 2^(m_old - m_new).
        // Once the row maxima settle, alpha is 1 for every row of the warp
        // and the O rescale is skipped (a warp-uniform branch).
        float alpha[RT];
        bool moved = false;
#pragma unroll
        for (int rt = 0; rt < RT; ++rt) {
            const float mnew = fmaxf(m[rt], mx[rt] * sl2);
            const float muse = mnew == -MLTOP_INF ? 0.f : mnew;  // all masked so far
            alpha[rt] = ex2(m[rt] - muse);
            moved |= mnew != m[rt];
            m[rt] = mnew;
            mx[rt] = muse;
        }
        if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
                l[rt] *= alpha[rt];
#pragma unroll
                for (int nd = 0; nd < ND; ++nd) {
                    o[rt][nd][0] *= alpha[rt];
                    o[rt][nd][1] *= alpha[rt];
                }
            }
        }
#pragma unroll
        for (int rt = 0; rt < RT; ++rt) {
            const float muse = mx[rt];
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float p = ex2(fmaf(s[rt][nt][e], sl2, -muse));
                    s[rt][nt][e] = p;
                    l[rt] += p;
                }
        }

#if WN > 1
        // Share P: each warp needs every key's probability for its O columns.
#pragma unroll
        for (int rt = 0; rt < RT; ++rt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                T* dst = Ps + (wm * RW + rt * 8 + g) * LDP + wn * CW + nt * 8 + 2 * q;
#if TC
                *(unsigned*)dst = pack2(s[rt][nt][0], s[rt][nt][1]);
#else
                *(float2*)dst = make_float2(s[rt][nt][0], s[rt][nt][1]);
#endif
            }
#endif
        async_wait<1>();  // V_j has landed (K_{j+1} may be in flight)
        __syncthreads();

#if TC
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
#if WN == 1
                pack_a16(a[mt], s, mt, kk);
#else
                ldsm_x4(a[mt], Ps + (wm * RW + mt * 16 + (lane & 15)) * LDP + kk * 16 + (lane >> 4) * 8);
#endif
            }
#pragma unroll
            for (int dp = 0; dp < ND / 2; ++dp) {
                unsigned bb[4];
                ldsm_x4_t(bb, Vs + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDQ + wn * DW + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_16x16(o, mt, dp, a[mt], bb);
                }
            }
            if (ND % 2) {
                unsigned bb[2];
                ldsm_x2_t(bb, Vs + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDQ + wn * DW + (ND - 1) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
                    mma16816(o[2 * mt][ND - 1][0], o[2 * mt][ND - 1][1], o[2 * mt + 1][ND - 1][0], o[2 * mt + 1][ND - 1][1], a[mt], bb[0], bb[1]);
            }
        }
        if (BK % 16) {  // a last block of 8 keys: m16n8k8
            constexpr int kb = BK - 8;
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                unsigned a0, a1;
#if WN == 1
                a0 = pack2(s[2 * mt][NT - 1][0], s[2 * mt][NT - 1][1]);
                a1 = pack2(s[2 * mt + 1][NT - 1][0], s[2 * mt + 1][NT - 1][1]);
#else
                unsigned aa[2];
                ldsm_x2(aa, Ps + (wm * RW + mt * 16 + (lane & 15)) * LDP + kb);
                a0 = aa[0];
                a1 = aa[1];
#endif
#pragma unroll
                for (int dp = 0; dp < ND / 2; ++dp) {
                    unsigned bb[2];
                    ldsm_x2_t(bb, Vs + (kb + (lane & 7)) * LDQ + wn * DW + dp * 16 + ((lane >> 3) & 1) * 8);
                    mma1688(o[2 * mt][2 * dp][0], o[2 * mt][2 * dp][1], o[2 * mt + 1][2 * dp][0], o[2 * mt + 1][2 * dp][1], a0, a1, bb[0]);
                    mma1688(o[2 * mt][2 * dp + 1][0], o[2 * mt][2 * dp + 1][1], o[2 * mt + 1][2 * dp + 1][0], o[2 * mt + 1][2 * dp + 1][1], a0, a1, bb[1]);
                }
                if (ND % 2) {
                    unsigned bv;
                    ldsm_x1_t(bv, Vs + (kb + (lane & 7)) * LDQ + wn * DW + (ND - 1) * 8);
                    mma1688(o[2 * mt][ND - 1][0], o[2 * mt][ND - 1][1], o[2 * mt + 1][ND - 1][0], o[2 * mt + 1][ND - 1][1], a0, a1, bv);
                }
            }
        }
#else
#pragma unroll
        for (int c = 0; c < BK; ++c) {
            float p[RT];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
#if WN == 1
                // Key c's probability for row g lives in lane 4g + (c%8)/2.
                p[rt] = __shfl_sync(0xffffffffu, s[rt][c / 8][c % 2], (lane & ~3) | ((c % 8) / 2));
#else
                p[rt] = Ps[(wm * RW + rt * 8 + g) * LDP + c];
#endif
            }
            const T* vrow = Vs + c * LDQ + wn * DW + 2 * q;
#pragma unroll
            for (int nd = 0; nd < ND; ++nd) {
                const float2 v = *(const float2*)(vrow + nd * 8);
#pragma unroll
                for (int rt = 0; rt < RT; ++rt) {
                    o[rt][nd][0] = fmaf(p[rt], v.x, o[rt][nd][0]);
                    o[rt][nd][1] = fmaf(p[rt], v.y, o[rt][nd][1]);
                }
            }
        }
#endif
        __syncthreads();  // every warp is done with V_j (and P_smem): fetch V_{j+1}
        if (j + 1 < nk) load_tile_rows<BK, D, LDQ, NTHREADS>(Vs, Vg, k0 + BK, Lk, tid);
        async_commit();
    }

    // Row sums: over the quad, then (WN > 1) over the warps of the row.
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
        l[rt] += __shfl_xor_sync(0xffffffffu, l[rt], 1);
        l[rt] += __shfl_xor_sync(0xffffffffu, l[rt], 2);
    }
#if WN > 1
    if (q == 0) {
#pragma unroll
        for (int rt = 0; rt < RT; ++rt) red[WN * BQ + wn * BQ + wm * RW + rt * 8 + g] = l[rt];
    }
    __syncthreads();
#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
        float v = 0.f;
#pragma unroll
        for (int w = 0; w < WN; ++w) v += red[WN * BQ + w * BQ + wm * RW + rt * 8 + g];
        l[rt] = v;
    }
#endif

#pragma unroll
    for (int rt = 0; rt < RT; ++rt) {
        const int row = q0 + wm * RW + rt * 8 + g;
        if (row >= Lq) continue;
        const float inv = l[rt] > 0.f ? 1.f / l[rt] : 0.f;  // a fully masked row gives O = 0
        T* orow = O + ((size_t)(b * H + h) * Lq + row) * D + wn * DW + 2 * q;
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) {
#if TC
            *(unsigned*)(orow + nd * 8) = pack2(o[rt][nd][0] * inv, o[rt][nd][1] * inv);
#else
            *(float2*)(orow + nd * 8) = make_float2(o[rt][nd][0] * inv, o[rt][nd][1] * inv);
#endif
        }
        if (wn == 0 && q == 0) {
            // natural-log logsumexp of the scaled scores: ln2·(m + log2 l)
            L[(size_t)(b * H + h) * Lq + row] = l[rt] > 0.f ? 0.6931471805599453f * (m[rt] + log2f(l[rt])) : -MLTOP_INF;
        }
    }
}
