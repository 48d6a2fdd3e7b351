// attn_bwd_dkv: the dK/dV kernel of the two-kernel attention backward
// (seed 001's design), written from the math for mltop. See
// kernels/attn_bwd.go for the Plan contract.
//
// Grid (ceil(Lk/BK), Hkv, B); block 32·WM threads. The group keeps its BK
// keys' K and V resident (KV_smem) and loops over the H/Hkv query heads of
// its GQA group, then over the query blocks that see the keys (causal
// skips the rest). Warp w owns query rows [w·RW, (w+1)·RW) of each block
// and accumulates a partial dK and dV of the whole BK×D block in registers
// (BK·D/32 each per lane); with WM > 1 the partials are summed through
// red_smem after the loops. With ALIAS, red_smem is carved out of
// Q_smem+dO_smem, which are no longer read by then (seed 001's aliasing).
//
// f16/bf16 (TC): tensor cores (mma.sync m16n8k16, ldmatrix) and a different
// warp split. Warp w owns the key rows [w·KW, (w+1)·KW) of the block, KW =
// BK/WM, and takes every query row of each Q block: it computes Sᵀ = K_w·Qᵀ
// and dPᵀ = V_w·dOᵀ, so P and dS come out key-major and serve directly as
// the A operands of dV_w += Pᵀ·dO and dK_w += dSᵀ·Q. Each warp's dK/dV
// rows are complete when the loops end: no partials, no red_smem, and the
// alias flag has nothing to alias. Q, dO, L and delta are double-buffered
// (cp.async): the next Q block streams in while this one is computed. The
// block's K and V are read from global once, so a large BK (many warps)
// cuts the L2 traffic of re-reading Q and dO per key block. Needs
// BK % (16·WM) == 0 and BQ % 16 == 0; P_smem and dS_smem are not used.
#include "mltop_common.cuh"

#ifndef BQ
#define BQ 16
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 2
#endif
#ifndef D
#define D 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef ALIAS
#define ALIAS 0
#endif

#define NTHREADS (32 * WM)
#define RW (BQ / WM)
#define SPL (RW * BK / 32)
#define APL (BK * D / 32)
#define LDT (D + 8)
#define LDS (BK + 4)
#define LOG2E 1.4426950408889634f

static_assert(BK % 8 == 0, "BK must be a multiple of 8");
#if DTYPE != 0
#if __CUDA_ARCH__ < 800
#error "attn_bwd_dkv for f16/bf16 needs sm_80 or newer (mma.sync m16n8k16)"
#endif
#define TC 1
#define KW (BK / WM)  // keys per warp
#define MK (KW / 16)  // 16-key mma tiles of the warp
#define NQ (BQ / 8)   // 8-query column tiles (every row of the Q block)
#define ND (D / 8)    // 8-column dK/dV tiles
#define STAGES 2      // Q/dO/L/delta buffers
static_assert(KW % 16 == 0, "tensor-core path: BK must be a multiple of 16*WM");
static_assert(BQ % 16 == 0, "tensor-core path: BQ must be a multiple of 16");
#else
#define TC 0
#define STAGES 1
static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8*WM");
static_assert(!ALIAS || WM == 1 || BK * D * 4 <= 2 * BQ * LDT * (int)sizeof(T),
              "ALIAS: red_smem must fit over Q_smem+dO_smem");

// reduce_warps sums the WM warps' partials into warp 0 through red (BK·D
// f32), one warp at a time. acc is taken by reference so it stays in
// registers once inlined.
__device__ __forceinline__ void reduce_warps(float (&acc)[APL], float* red, int warp, int lane) {
    for (int w = 1; w < WM; ++w) {
        if (warp == w) {
#pragma unroll
            for (int t = 0; t < APL; ++t) red[lane + 32 * t] = acc[t];
        }
        __syncthreads();
        if (warp == 0) {
#pragma unroll
            for (int t = 0; t < APL; ++t) acc[t] += red[lane + 32 * t];
        }
        __syncthreads();
    }
}
#endif

// copy4 copies one f32 global -> shared (asynchronously on sm_80+); when
// valid is false the destination is zero-filled and nothing is read.
__device__ __forceinline__ void copy4(float* dst, const float* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    unsigned n = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(n));
#else
    *dst = valid ? *src : 0.f;
#endif
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
attn_bwd_dkv(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
             const T* __restrict__ dO, const float* __restrict__ L, const float* __restrict__ delta,
             T* __restrict__ dK, T* __restrict__ dV, int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* Qs = (T*)smem;                 // STAGES × BQ×LDT
    T* dOs = Qs + STAGES * BQ * LDT;  // STAGES × BQ×LDT
    T* Ks = dOs + STAGES * BQ * LDT;  // KV_smem: K then V
    T* Vs = Ks + BK * LDT;
#if TC
    float* Ls = (float*)(Vs + BK * LDT);  // no P_smem/dS_smem: P and dS stay in registers
#else
    float* Ps = (float*)(Vs + BK * LDT);
    float* dSs = Ps + BQ * LDS;
    float* Ls = dSs + BQ * LDS;
#endif
    float* Dl = Ls + STAGES * BQ;
#if !TC && WM > 1
#if ALIAS
    float* red = (float*)smem;  // over Q_smem + dO_smem
#else
    float* red = Dl + BQ;
#endif
#endif

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int k0 = blockIdx.x * BK, hk = blockIdx.y, b = blockIdx.z;
    const int G = H / Hkv;
    const size_t kbase = (size_t)(b * Hkv + hk) * Lk;
    const int off = Lk - Lq;
    const float sl2 = scale * LOG2E;

    load_tile_rows<BK, D, LDT, NTHREADS>(Ks, K + kbase * D, k0, Lk, tid);
    load_tile_rows<BK, D, LDT, NTHREADS>(Vs, V + kbase * D, k0, Lk, tid);
    async_commit();

    // The work is G heads × nqb query blocks; step n is head n / nqb, block
    // n % nqb. Causal: the first query row that sees key k0 is k0 - off.
    const int qstart = CAUSAL ? max(0, k0 - off) / BQ * BQ : 0;
    const int nqb = (Lq - qstart + BQ - 1) / BQ;
    const int total = G * max(nqb, 0);
    // issue starts the copies of step n's Q, dO, L and delta into stage st.
    auto issue = [&](int n, int st) {
        const size_t qbase = (size_t)(b * H + hk * G + n / nqb) * Lq;
        const int i0 = qstart + (n % nqb) * BQ;
        load_tile_rows<BQ, D, LDT, NTHREADS>(Qs + st * BQ * LDT, Q + qbase * D, i0, Lq, tid);
        load_tile_rows<BQ, D, LDT, NTHREADS>(dOs + st * BQ * LDT, dO + qbase * D, i0, Lq, tid);
        for (int r = tid; r < BQ; r += NTHREADS) {
            const bool ok = i0 + r < Lq;
            copy4(Ls + st * BQ + r, L + qbase + (ok ? i0 + r : 0), ok);
            copy4(Dl + st * BQ + r, delta + qbase + (ok ? i0 + r : 0), ok);
        }
        async_commit();
    };
    if (total > 0) issue(0, 0);

#if TC
    const int g = lane >> 2, qd = lane & 3;
    const int kw0 = warp * KW;  // this warp's first key row in the block
    float dk[2 * MK][ND][2], dv[2 * MK][ND][2];
#pragma unroll
    for (int rt = 0; rt < 2 * MK; ++rt)
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) dk[rt][nd][0] = dk[rt][nd][1] = dv[rt][nd][0] = dv[rt][nd][1] = 0.f;
#else
    float dk[APL], dv[APL];
#pragma unroll
    for (int t = 0; t < APL; ++t) dk[t] = dv[t] = 0.f;
#endif

    for (int n = 0; n < total; ++n) {
#if STAGES == 2
        // One barrier per step: once every warp is past it, step n has landed
        // and step n-1's stage is free, so step n+1 streams into it while
        // step n is computed.
        async_wait<0>();
        __syncthreads();
        if (n + 1 < total) issue(n + 1, (n + 1) & 1);
        const int st = n & 1;
#else
        if (n > 0) {
            __syncthreads();  // the previous step's readers are done
            issue(n, 0);
        }
        async_wait<0>();
        __syncthreads();
        const int st = 0;
#endif
        const int i0 = qstart + (n % nqb) * BQ;
        const T* Qc = Qs + st * BQ * LDT;
        const T* dOc = dOs + st * BQ * LDT;
        const float* Lc = Ls + st * BQ;
        const float* Dc = Dl + st * BQ;
#if TC
        // Sᵀ = K_w·Qᵀ and dPᵀ = V_w·dOᵀ: rows are the warp's keys, columns the block's queries.
        float st_[2 * MK][NQ][2], dpt[2 * MK][NQ][2];
#pragma unroll
        for (int rt = 0; rt < 2 * MK; ++rt)
#pragma unroll
            for (int nt = 0; nt < NQ; ++nt) st_[rt][nt][0] = st_[rt][nt][1] = dpt[rt][nt][0] = dpt[rt][nt][1] = 0.f;
        mma_abt2<MK, NQ / 2, D, LDT>(st_, dpt, Ks + kw0 * LDT, Vs + kw0 * LDT, Qc, dOc, lane);
        // Pᵀ into st_, dSᵀ into dpt.
#pragma unroll
        for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int c = nt * 8 + 2 * qd + e;
                const int row = i0 + c;
                const float l2 = Lc[c] * LOG2E, dl = Dc[c];
#pragma unroll
                for (int rt = 0; rt < 2 * MK; ++rt) {
                    const int key = k0 + kw0 + rt * 8 + g;
                    const bool ok = row < Lq && key < Lk && (!CAUSAL || key <= row + off);
                    const float pv = ok ? ex2(fmaf(st_[rt][nt][e], sl2, -l2)) : 0.f;
                    st_[rt][nt][e] = pv;
                    dpt[rt][nt][e] = pv * (dpt[rt][nt][e] - dl);
                }
            }
        // dV_w += Pᵀ·dO, dK_w += dSᵀ·Q (the k dimension is the block's queries).
#pragma unroll
        for (int kk = 0; kk < BQ / 16; ++kk) {
            unsigned ap[MK][4], ad[MK][4];
#pragma unroll
            for (int mk = 0; mk < MK; ++mk) {
                pack_a16(ap[mk], st_, mk, kk);
                pack_a16(ad[mk], dpt, mk, kk);
            }
#pragma unroll
            for (int dd = 0; dd < ND / 2; ++dd) {
                unsigned bo[4], bq[4];
                ldsm_x4_t(bo, dOc + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDT + dd * 16 + (lane >> 4) * 8);
                ldsm_x4_t(bq, Qc + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDT + dd * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mk = 0; mk < MK; ++mk) {
                    mma_16x16(dv, mk, dd, ap[mk], bo);
                    mma_16x16(dk, mk, dd, ad[mk], bq);
                }
            }
        }
#else
#pragma unroll
        for (int t = 0; t < SPL; ++t) {
            const int e = lane + 32 * t;
            const int r = warp * RW + e / BK, c = e % BK;
            const int row = i0 + r, col = k0 + c;
            float s = 0.f, dp = 0.f;
            dot2<D>(Qc + r * LDT, Ks + c * LDT, dOc + r * LDT, Vs + c * LDT, s, dp);
            const bool ok = row < Lq && col < Lk && (!CAUSAL || col <= row + off);
            const float p = ok ? ex2(fmaf(s, sl2, -Lc[r] * LOG2E)) : 0.f;
            Ps[r * LDS + c] = p;
            dSs[r * LDS + c] = p * (dp - Dc[r]);
        }
        __syncwarp();  // a warp reads only its own rows of P/dS

#pragma unroll
        for (int t = 0; t < APL; ++t) {
            const int e = lane + 32 * t;
            const int jr = e / D, d = e % D;
            float ak = dk[t], av = dv[t];
#pragma unroll
            for (int r = warp * RW; r < warp * RW + RW; ++r) {
                ak = fmaf(dSs[r * LDS + jr], to_f32(Qc[r * LDT + d]), ak);
                av = fmaf(Ps[r * LDS + jr], to_f32(dOc[r * LDT + d]), av);
            }
            dk[t] = ak;
            dv[t] = av;
        }
#endif
    }
    async_wait<0>();  // total == 0: K/V copies still owned by this group

#if TC
#pragma unroll
    for (int rt = 0; rt < 2 * MK; ++rt) {
        const int key = k0 + kw0 + rt * 8 + g;
        if (key >= Lk) continue;
        T* krow = dK + (kbase + key) * D + 2 * qd;
        T* vrow = dV + (kbase + key) * D + 2 * qd;
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) {
            *(unsigned*)(krow + nd * 8) = pack2(dk[rt][nd][0] * scale, dk[rt][nd][1] * scale);
            *(unsigned*)(vrow + nd * 8) = pack2(dv[rt][nd][0], dv[rt][nd][1]);
        }
    }
#else
#if WM > 1
    __syncthreads();  // Q_smem/dO_smem are free (ALIAS)
    reduce_warps(dk, red, warp, lane);
    reduce_warps(dv, red, warp, lane);
#endif
    if (warp == 0) {
#pragma unroll
        for (int t = 0; t < APL; ++t) {
            const int e = lane + 32 * t;
            const int jr = e / D, d = e % D;
            if (k0 + jr < Lk) {
                dK[(kbase + k0 + jr) * D + d] = from_f32(dk[t] * scale);
                dV[(kbase + k0 + jr) * D + d] = from_f32(dv[t]);
            }
        }
    }
#endif
}
