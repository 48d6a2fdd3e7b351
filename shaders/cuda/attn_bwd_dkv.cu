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
#define VEC (16 / (int)sizeof(T))
#define LOG2E 1.4426950408889634f

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8*WM");
static_assert(BK % 8 == 0, "BK must be a multiple of 8");
static_assert(!ALIAS || WM == 1 || BK * D * 4 <= 2 * BQ * LDT * (int)sizeof(T),
              "ALIAS: red_smem must fit over Q_smem+dO_smem");

template <int R>
__device__ __forceinline__ void load_rows(T* sm, const T* g, int r0, int nrows, int tid) {
    constexpr int CPR = D / VEC;
    constexpr int TOTAL = R * CPR;
#pragma unroll
    for (int it = 0; it < (TOTAL + NTHREADS - 1) / NTHREADS; ++it) {
        int i = it * NTHREADS + tid;
        if (TOTAL % NTHREADS == 0 || i < TOTAL) {
            int r = i / CPR, c = (i % CPR) * VEC;
            bool ok = r0 + r < nrows;
            copy16(sm + r * LDT + c, g + (size_t)(ok ? r0 + r : 0) * D + c, ok);
        }
    }
}

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

extern "C" __global__ void __launch_bounds__(NTHREADS)
attn_bwd_dkv(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
             const T* __restrict__ dO, const float* __restrict__ L, const float* __restrict__ delta,
             T* __restrict__ dK, T* __restrict__ dV, int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* Qs = (T*)smem;
    T* dOs = Qs + BQ * LDT;
    T* Ks = dOs + BQ * LDT;  // KV_smem: K then V
    T* Vs = Ks + BK * LDT;
    float* Ps = (float*)(Vs + BK * LDT);
    float* dSs = Ps + BQ * LDS;
    float* Ls = dSs + BQ * LDS;
    float* Dl = Ls + BQ;
#if WM > 1
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

    load_rows<BK>(Ks, K + kbase * D, k0, Lk, tid);
    load_rows<BK>(Vs, V + kbase * D, k0, Lk, tid);
    async_commit();

    float dk[APL], dv[APL];
#pragma unroll
    for (int t = 0; t < APL; ++t) dk[t] = dv[t] = 0.f;

    // Causal: the first query row that sees key k0 is k0 - off.
    const int qstart = CAUSAL ? max(0, k0 - off) / BQ * BQ : 0;
    for (int hh = 0; hh < G; ++hh) {
        const int h = hk * G + hh;
        const size_t qbase = (size_t)(b * H + h) * Lq;
        for (int i0 = qstart; i0 < Lq; i0 += BQ) {
            __syncthreads();  // the previous block's readers are done
            load_rows<BQ>(Qs, Q + qbase * D, i0, Lq, tid);
            load_rows<BQ>(dOs, dO + qbase * D, i0, Lq, tid);
            async_commit();
            for (int r = tid; r < BQ; r += NTHREADS) {
                const int row = i0 + r;
                Ls[r] = row < Lq ? L[qbase + row] * LOG2E : 0.f;
                Dl[r] = row < Lq ? delta[qbase + row] : 0.f;
            }
            async_wait<0>();
            __syncthreads();

#pragma unroll
            for (int t = 0; t < SPL; ++t) {
                const int e = lane + 32 * t;
                const int r = warp * RW + e / BK, c = e % BK;
                const int row = i0 + r, col = k0 + c;
                const T* qr = Qs + r * LDT;
                const T* dr = dOs + r * LDT;
                const T* kr = Ks + c * LDT;
                const T* vr = Vs + c * LDT;
                float s = 0.f, dp = 0.f;
#pragma unroll 8
                for (int d = 0; d < D; ++d) {
                    s = fmaf(to_f32(qr[d]), to_f32(kr[d]), s);
                    dp = fmaf(to_f32(dr[d]), to_f32(vr[d]), dp);
                }
                const bool ok = row < Lq && col < Lk && (!CAUSAL || col <= row + off);
                const float p = ok ? ex2(fmaf(s, sl2, -Ls[r])) : 0.f;
                Ps[r * LDS + c] = p;
                dSs[r * LDS + c] = p * (dp - Dl[r]);
            }
            __syncwarp();  // a warp reads only its own rows of P/dS

#pragma unroll
            for (int t = 0; t < APL; ++t) {
                const int e = lane + 32 * t;
                const int jr = e / D, d = e % D;
                float ak = dk[t], av = dv[t];
#pragma unroll
                for (int r = warp * RW; r < warp * RW + RW; ++r) {
                    ak = fmaf(dSs[r * LDS + jr], to_f32(Qs[r * LDT + d]), ak);
                    av = fmaf(Ps[r * LDS + jr], to_f32(dOs[r * LDT + d]), av);
                }
                dk[t] = ak;
                dv[t] = av;
            }
        }
    }

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
}
