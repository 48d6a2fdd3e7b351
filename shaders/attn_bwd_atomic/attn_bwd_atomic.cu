// attn_bwd_atomic: the one-kernel attention backward (seed 000's design),
// written from the math for mltop. See kernels/attn_bwd_atomic.go for the
// Plan contract.
//
// Grid (ceil(Lq/BQ), H, B); block 32·WM·WN threads. The group owns BQ query
// rows: it loads Q and dO once, computes delta = rowsum(dO∘O) of its rows,
// then walks the key tiles it sees. Per tile: warp (wm, wn) computes the
// S/dP elements of its RW×CW sub-tile (P in the log2 domain), writes P and
// dS to shared memory; dQ += dS·K stays in registers (warp (wm, wn) owns
// dQ rows of wm × head-dim columns of wn); the tile's dK/dV partials,
// summed over the BQ rows, are split over all threads and each element is
// added with ONE f32 atomicAdd (adding it once per lane or warp that holds
// a copy would overcount, the pitfall seed 000 documents).
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
#ifndef MASK
#define MASK 0
#endif

#define NTHREADS (32 * WM * WN)
#define RW (BQ / WM)          // S rows per warp
#define CW (BK / WN)          // S columns per warp
#define DW (D / WN)           // dQ columns per warp
#define SPL (RW * CW / 32)    // S elements per lane
#define QPL (RW * DW / 32)    // dQ elements per lane
#define LDT (D + 8)           // row stride of the T tiles
#define LDS (BK + 4)          // row stride of P_smem, dS_smem
#define LOG2E 1.4426950408889634f

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8*WM");
static_assert(BK % (8 * WN) == 0, "BK must be a multiple of 8*WN");
static_assert(D % (8 * WN) == 0, "D must be a multiple of 8*WN");
static_assert((RW * DW) % 32 == 0, "dQ sub-tile must split over 32 lanes");

extern "C" __global__ void __launch_bounds__(NTHREADS)
attn_bwd_atomic(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                const T* __restrict__ O, const float* __restrict__ L, const T* __restrict__ dO,
                const float* __restrict__ mask, T* __restrict__ dQ,
                float* __restrict__ dKa, float* __restrict__ dVa,
                int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* Qs = (T*)smem;
    T* dOs = Qs + BQ * LDT;
    T* Ks = dOs + BQ * LDT;
    T* Vs = Ks + BK * LDT;
    float* Ps = (float*)(Vs + BK * LDT);
    float* dSs = Ps + BQ * LDS;
    float* Ls = dSs + BQ * LDS;  // L·log2e per row
    float* Dl = Ls + BQ;         // delta per row

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN;
    const int q0 = blockIdx.x * BQ, h = blockIdx.y, b = blockIdx.z;
    const int hk = h / (H / Hkv);
    const size_t qbase = (size_t)(b * H + h) * Lq;
    const size_t kbase = (size_t)(b * Hkv + hk) * Lk;
    const int off = Lk - Lq;  // causal: row i sees key j iff j <= i + off
    const float sl2 = scale * LOG2E;

    load_tile_rows<BQ, D, LDT, NTHREADS>(Qs, Q + qbase * D, q0, Lq, tid);
    load_tile_rows<BQ, D, LDT, NTHREADS>(dOs, dO + qbase * D, q0, Lq, tid);
    async_commit();
    async_wait<0>();
    __syncthreads();

    // Row statistics: delta = Σ dO·O (O from global memory), L in log2 units.
    for (int r = warp; r < BQ; r += NTHREADS / 32) {
        const int row = q0 + r;
        float acc = 0.f;
        if (row < Lq) {
            const T* orow = O + (qbase + row) * D;
            for (int d = lane; d < D; d += 32) acc += to_f32(dOs[r * LDT + d]) * to_f32(orow[d]);
        }
        acc = warp_sum(acc);
        if (lane == 0) {
            Dl[r] = acc;
            Ls[r] = row < Lq ? L[qbase + row] * LOG2E : 0.f;
        }
    }

    float dq[QPL];
#pragma unroll
    for (int t = 0; t < QPL; ++t) dq[t] = 0.f;

    int kend = CAUSAL ? min(Lk, q0 + BQ + off) : Lk;
    kend = max(kend, 0);
    const int ntiles = (kend + BK - 1) / BK;
    for (int j = 0; j < ntiles; ++j) {
        const int k0 = j * BK;
        __syncthreads();  // the previous tile's readers are done
        load_tile_rows<BK, D, LDT, NTHREADS>(Ks, K + kbase * D, k0, Lk, tid);
        load_tile_rows<BK, D, LDT, NTHREADS>(Vs, V + kbase * D, k0, Lk, tid);
        async_commit();
        async_wait<0>();
        __syncthreads();

#pragma unroll
        for (int t = 0; t < SPL; ++t) {
            const int e = lane + 32 * t;
            const int r = wm * RW + e / CW, c = wn * CW + e % CW;
            const int row = q0 + r, col = k0 + c;
            float s = 0.f, dp = 0.f;
            dot2<D>(Qs + r * LDT, Ks + c * LDT, dOs + r * LDT, Vs + c * LDT, s, dp);
            float p = 0.f;
            const bool ok = row < Lq && col < Lk && (!CAUSAL || col <= row + off);
            if (ok) {
                float x = s * sl2;
#if MASK
                x = fmaf(mask[(size_t)row * Lk + col], LOG2E, x);
#endif
                p = ex2(x - Ls[r]);
            }
            Ps[r * LDS + c] = p;
            dSs[r * LDS + c] = p * (dp - Dl[r]);
        }
        __syncthreads();

        // dQ += dS·K for this warp's rows and columns.
#pragma unroll
        for (int t = 0; t < QPL; ++t) {
            const int e = lane + 32 * t;
            const int r = wm * RW + e / DW, c = wn * DW + e % DW;
            float acc = dq[t];
#pragma unroll 8
            for (int k = 0; k < BK; ++k) acc = fmaf(dSs[r * LDS + k], to_f32(Ks[k * LDT + c]), acc);
            dq[t] = acc;
        }

        // dK/dV partials of the tile, one atomic per element.
        for (int e = tid; e < BK * D; e += NTHREADS) {
            const int jr = e / D, d = e % D;
            if (k0 + jr >= Lk) continue;
            float dk = 0.f, dv = 0.f;
#pragma unroll 8
            for (int r = 0; r < BQ; ++r) {
                dk = fmaf(dSs[r * LDS + jr], to_f32(Qs[r * LDT + d]), dk);
                dv = fmaf(Ps[r * LDS + jr], to_f32(dOs[r * LDT + d]), dv);
            }
            atomicAdd(dKa + (kbase + k0 + jr) * D + d, dk * scale);
            atomicAdd(dVa + (kbase + k0 + jr) * D + d, dv);
        }
    }

#pragma unroll
    for (int t = 0; t < QPL; ++t) {
        const int e = lane + 32 * t;
        const int r = wm * RW + e / DW, c = wn * DW + e % DW;
        if (q0 + r < Lq) dQ[(qbase + q0 + r) * D + c] = from_f32(dq[t] * scale);
    }
}
