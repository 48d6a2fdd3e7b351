// attn_bwd_dq: the dQ kernel of the two-kernel attention backward (seed
// 001's design), written from the math for mltop. See kernels/attn_bwd.go
// for the Plan contract.
//
// Grid (ceil(Lq/BQ), H, B); block 32·WM threads; warp w owns query rows
// [w·RW, (w+1)·RW) of the block. Q and dO stay in shared memory; per key
// tile every lane computes RW·BK/32 elements of S and dP, P = 2^(S·scale·
// log2e − L·log2e) (log2 domain), dS = P∘(dP − delta) goes to dS_smem and
// dQ += dS·K accumulates in registers (RW·D/32 per lane). No atomics.
//
// f16/bf16 (TC): tensor cores, the forward's fragment layout (mma.sync
// m16n8k16, ldmatrix): S and dP accumulate in registers, dS is computed in
// place and reused as the A operand of dS·K, so dS_smem is not used (the
// Plan leaves it out on this path). K and V are double-buffered (cp.async):
// the next key tile streams in while this one is computed. Needs
// BQ % (16·WM) == 0, BK % 16 == 0.
#include "mltop_common.cuh"

#ifndef BQ
#define BQ 32
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 4
#endif
#ifndef D
#define D 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif

#define NTHREADS (32 * WM)
#define RW (BQ / WM)
#define SPL (RW * BK / 32)
#define QPL (RW * D / 32)
#define LDT (D + 8)
#define LDS (BK + 4)
#define LOG2E 1.4426950408889634f

static_assert(BQ % (8 * WM) == 0, "BQ must be a multiple of 8*WM");
static_assert(BK % 8 == 0, "BK must be a multiple of 8");

#if DTYPE != 0
#if __CUDA_ARCH__ < 800
#error "attn_bwd_dq for f16/bf16 needs sm_80 or newer (mma.sync m16n8k16)"
#endif
#define TC 1
#define MT (RW / 16)  // 16-row mma tiles per warp
#define NT (BK / 8)   // 8-column S tiles
#define ND (D / 8)    // 8-column dQ tiles
static_assert(RW % 16 == 0, "tensor-core path: BQ must be a multiple of 16*WM");
static_assert(BK % 16 == 0, "tensor-core path: BK must be a multiple of 16");
#define STAGES 2  // K/V buffers
#else
#define TC 0
#define STAGES 1
#endif

extern "C" __global__ void __launch_bounds__(NTHREADS)
attn_bwd_dq(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
            const T* __restrict__ dO, const float* __restrict__ L, const float* __restrict__ delta,
            T* __restrict__ dQ, int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* Qs = (T*)smem;
    T* dOs = Qs + BQ * LDT;
    T* Ks = dOs + BQ * LDT;         // STAGES × BK×LDT
    T* Vs = Ks + STAGES * BK * LDT;  // STAGES × BK×LDT
#if TC
    float* Ls = (float*)(Vs + STAGES * BK * LDT);  // no dS_smem: dS stays in registers
#else
    float* dSs = (float*)(Vs + BK * LDT);
    float* Ls = dSs + BQ * LDS;
#endif
    float* Dl = Ls + BQ;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int q0 = blockIdx.x * BQ, h = blockIdx.y, b = blockIdx.z;
    const int hk = h / (H / Hkv);
    const size_t qbase = (size_t)(b * H + h) * Lq;
    const size_t kbase = (size_t)(b * Hkv + hk) * Lk;
    const int off = Lk - Lq;
    const float sl2 = scale * LOG2E;

    load_tile_rows<BQ, D, LDT, NTHREADS>(Qs, Q + qbase * D, q0, Lq, tid);
    load_tile_rows<BQ, D, LDT, NTHREADS>(dOs, dO + qbase * D, q0, Lq, tid);
    async_commit();
    for (int r = tid; r < BQ; r += NTHREADS) {
        const int row = q0 + r;
        Ls[r] = row < Lq ? L[qbase + row] * LOG2E : 0.f;
        Dl[r] = row < Lq ? delta[qbase + row] : 0.f;
    }

#if TC
    float s[2 * MT][NT][2], dp[2 * MT][NT][2], dq[2 * MT][ND][2];
#pragma unroll
    for (int rt = 0; rt < 2 * MT; ++rt)
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) dq[rt][nd][0] = dq[rt][nd][1] = 0.f;
    const int g = lane >> 2, qd = lane & 3;
#else
    float dq[QPL];
#pragma unroll
    for (int t = 0; t < QPL; ++t) dq[t] = 0.f;
#endif
    int kend = CAUSAL ? min(Lk, q0 + BQ + off) : Lk;
    kend = max(kend, 0);
    const int ntiles = (kend + BK - 1) / BK;
    // issue starts the copies of key tile j into stage st.
    auto issue = [&](int j, int st) {
        load_tile_rows<BK, D, LDT, NTHREADS>(Ks + st * BK * LDT, K + kbase * D, j * BK, Lk, tid);
        load_tile_rows<BK, D, LDT, NTHREADS>(Vs + st * BK * LDT, V + kbase * D, j * BK, Lk, tid);
        async_commit();
    };
    if (ntiles > 0) issue(0, 0);
    for (int j = 0; j < ntiles; ++j) {
        const int k0 = j * BK;
#if STAGES == 2
        // One barrier per tile: once every warp is past it, tile j has landed
        // and tile j-1's stage is free, so tile j+1 streams into it while
        // tile j is computed.
        async_wait<0>();
        __syncthreads();
        if (j + 1 < ntiles) issue(j + 1, (j + 1) & 1);
        const T* Kc = Ks + (j & 1) * BK * LDT;
        const T* Vc = Vs + (j & 1) * BK * LDT;
#else
        if (j > 0) {
            __syncthreads();  // the previous tile's readers are done
            issue(j, 0);
        }
        async_wait<0>();
        __syncthreads();
        const T* Kc = Ks;
        const T* Vc = Vs;
#endif
#if TC
#pragma unroll
        for (int rt = 0; rt < 2 * MT; ++rt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) s[rt][nt][0] = s[rt][nt][1] = dp[rt][nt][0] = dp[rt][nt][1] = 0.f;
        mma_abt2<MT, NT / 2, D, LDT>(s, dp, Qs + warp * RW * LDT, dOs + warp * RW * LDT, Kc, Vc, lane);
        // dS = P∘(dP − delta) in place of S; P = 2^(S·scale·log2e − L·log2e).
#pragma unroll
        for (int rt = 0; rt < 2 * MT; ++rt) {
            const int r = warp * RW + rt * 8 + g, row = q0 + r;
            const float l2 = Ls[r], dl = Dl[r];
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int col = k0 + nt * 8 + 2 * qd + e;
                    const bool ok = row < Lq && col < Lk && (!CAUSAL || col <= row + off);
                    const float pv = ok ? ex2(fmaf(s[rt][nt][e], sl2, -l2)) : 0.f;
                    s[rt][nt][e] = pv * (dp[rt][nt][e] - dl);
                }
        }
        // dQ += dS·K: the dS accumulators are the A operand.
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                pack_a16(a[mt], s, mt, kk);
            }
#pragma unroll
            for (int dd = 0; dd < ND / 2; ++dd) {
                unsigned bb[4];
                ldsm_x4_t(bb, Kc + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDT + dd * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_16x16(dq, mt, dd, a[mt], bb);
                }
            }
        }
#else
#pragma unroll
        for (int t = 0; t < SPL; ++t) {
            const int e = lane + 32 * t;
            const int r = warp * RW + e / BK, c = e % BK;
            const int row = q0 + r, col = k0 + c;
            float s = 0.f, dp = 0.f;
            dot2<D>(Qs + r * LDT, Kc + c * LDT, dOs + r * LDT, Vc + c * LDT, s, dp);
            const bool ok = row < Lq && col < Lk && (!CAUSAL || col <= row + off);
            const float p = ok ? ex2(fmaf(s, sl2, -Ls[r])) : 0.f;
            dSs[r * LDS + c] = p * (dp - Dl[r]);
        }
        __syncwarp();  // a warp reads only its own rows of dS_smem

#pragma unroll
        for (int t = 0; t < QPL; ++t) {
            const int e = lane + 32 * t;
            const int r = warp * RW + e / D, c = e % D;
            float acc = dq[t];
#pragma unroll 8
            for (int k = 0; k < BK; ++k) acc = fmaf(dSs[r * LDS + k], to_f32(Kc[k * LDT + c]), acc);
            dq[t] = acc;
        }
#endif
    }
    async_wait<0>();  // ntiles == 0: the Q/dO copies are still in flight
#if TC
#pragma unroll
    for (int rt = 0; rt < 2 * MT; ++rt) {
        const int row = q0 + warp * RW + rt * 8 + g;
        if (row >= Lq) continue;
        T* orow = dQ + (qbase + row) * D + 2 * qd;
#pragma unroll
        for (int nd = 0; nd < ND; ++nd) *(unsigned*)(orow + nd * 8) = pack2(dq[rt][nd][0] * scale, dq[rt][nd][1] * scale);
    }
#else
#pragma unroll
    for (int t = 0; t < QPL; ++t) {
        const int e = lane + 32 * t;
        const int r = warp * RW + e / D, c = e % D;
        if (q0 + r < Lq) dQ[(qbase + q0 + r) * D + c] = from_f32(dq[t] * scale);
    }
#endif
}
