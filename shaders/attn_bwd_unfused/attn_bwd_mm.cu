// attn_bwd_mm: the tiled matrix kernel of the unfused attention backward
// (the baseline of seed 001), written for mltop. MODE selects the product
// (see kernels/attn_bwd_unfused.go):
//   0  P  = exp(scale·Q·Kᵀ − L), 0 where causal-masked   [B,H,Lq,Lk] f32
//   1  dS = P∘(dO·Vᵀ − delta)                             [B,H,Lq,Lk] f32
//   2  dV = Σ_heads Pᵀ·dO                                 [B,Hkv,Lk,D] T
//   3  dK = scale·Σ_heads dSᵀ·Q                           [B,Hkv,Lk,D] T
//   4  dQ = scale·dS·K                                    [B,H,Lq,D]   T
// 256 threads (16×16) per BM×BN output tile, each thread (BM/16)×(BN/16)
// outputs strided by 16; K steps of 16 staged in f32 (A_smem, B_smem,
// k-major). Plain FMAs for f32.
//
// f16/bf16 (TC): tensor cores. 8 warps as a 2×4 grid over the tile, each a
// (BM/2)×(BN/4) block of m16n8k16 mma.sync; K steps of 32 staged in the
// storage type, both operands k-contiguous (A_smem BM×(32+8), B_smem
// BN×(32+8)), P and dS rounded to it on the way in (as a bf16 unfused graph
// would hold them). Needs BM ∈ {32, 64, 128}, BN ∈ {64, 128}.
#include "mltop_common.cuh"

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef D
#define D 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef MODE
#define MODE 0
#endif

#define KS 16
#define TM (BM / 16)
#define TN (BN / 16)
#define LDA (BM + 4)
#define LDB (BN + 4)
#define LOG2E 1.4426950408889634f

#if DTYPE != 0
#if __CUDA_ARCH__ < 800
#error "attn_bwd_mm for f16/bf16 needs sm_80 or newer (mma.sync m16n8k16)"
#endif
#define TC 1
#define KT 32            // K step of the tensor-core path
#define LDK (KT + 8)     // row stride of A_smem/B_smem (elements)
#define WTM (BM / 2)     // warp tile rows
#define WTN (BN / 4)     // warp tile columns
#define MTT (WTM / 16)
#define NTT (WTN / 8)
static_assert(WTM % 16 == 0 && NTT % 2 == 0, "tensor-core path: BM in {32,64,128}, BN in {64,128}");
#else
#define TC 0
#endif

// The MODE switches both paths share: the head h of a step, the A(gm, gk)
// and B(gn, gk) operand elements as f32, and the store of output (m, n) = x.
#if MODE <= 1 || MODE == 4
#define MM_HEAD h0
#else
#define MM_HEAD hk * G + hh
#endif
#if MODE == 0
#define MM_A(gm, gk) to_f32(Q[(qrow + gm) * D + gk])
#define MM_B(gn, gk) to_f32(K[(kvrow + gn) * D + gk])
#define MM_STORE(m, n, x)                                  \
    const size_t r = (size_t)z * Lq + m;                   \
    const bool ok = !CAUSAL || n <= m + off;               \
    P[r * Lk + n] = ok ? ex2(fmaf(x, scale * LOG2E, -L[r] * LOG2E)) : 0.f
#elif MODE == 1
#define MM_A(gm, gk) to_f32(dO[(qrow + gm) * D + gk])
#define MM_B(gn, gk) to_f32(V[(kvrow + gn) * D + gk])
#define MM_STORE(m, n, x)                    \
    const size_t r = (size_t)z * Lq + m;     \
    dS[r * Lk + n] = P[r * Lk + n] * (x - delta[r])
#elif MODE == 2
#define MM_A(gm, gk) P[(qrow + gk) * Lk + gm]
#define MM_B(gn, gk) to_f32(dO[(qrow + gk) * D + gn])
#define MM_STORE(m, n, x) dV[((size_t)z * Lk + m) * D + n] = from_f32(x)
#elif MODE == 3
#define MM_A(gm, gk) dS[(qrow + gk) * Lk + gm]
#define MM_B(gn, gk) to_f32(Q[(qrow + gk) * D + gn])
#define MM_STORE(m, n, x) dK[((size_t)z * Lk + m) * D + n] = from_f32(x * scale)
#else
#define MM_A(gm, gk) dS[(qrow + gm) * Lk + gk]
#define MM_B(gn, gk) to_f32(K[(kvrow + gk) * D + gn])
#define MM_STORE(m, n, x) dQ[((size_t)z * Lq + m) * D + n] = from_f32(x * scale)
#endif

extern "C" __global__ void __launch_bounds__(256)
attn_bwd_mm(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
            const T* __restrict__ dO, const float* __restrict__ L, const float* __restrict__ delta,
            float* __restrict__ P, float* __restrict__ dS,
            T* __restrict__ dQ, T* __restrict__ dK, T* __restrict__ dV,
            int B, int H, int Hkv, int Lq, int Lk, float scale) {
    extern __shared__ __align__(16) unsigned char smem[];
    float* As = (float*)smem;
    float* Bs = As + KS * LDA;
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, z = blockIdx.z;
    const int G = H / Hkv;
#if MODE <= 1 || MODE == 4
    const int b = z / H, h0 = z % H, hk = h0 / G, nheads = 1;
    const int M = Lq, N = MODE == 4 ? D : Lk, KD = MODE == 4 ? Lk : D;
#else
    const int b = z / Hkv, hk = z % Hkv, nheads = G;
    const int M = Lk, N = D, KD = Lq;
#endif
    const size_t kvrow = (size_t)(b * Hkv + hk) * Lk;

#if TC
    T* At = (T*)smem;
    T* Bt = At + BM * LDK;
    const int lane = tid & 31, warp = tid >> 5, wm = warp >> 2, wn = warp & 3;
    const int g = lane >> 2, qd = lane & 3;
    float acc[MTT][NTT][4];
#pragma unroll
    for (int i = 0; i < MTT; ++i)
#pragma unroll
        for (int j = 0; j < NTT; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
    for (int hh = 0; hh < nheads; ++hh) {
        const int h = MM_HEAD;
        const size_t qrow = (size_t)(b * H + h) * Lq;
        for (int k0 = 0; k0 < KD; k0 += KT) {
            for (int e = tid; e < KT * BM; e += 256) {
#if MODE == 2 || MODE == 3
                const int k = e / BM, m = e % BM;
#else
                const int m = e / KT, k = e % KT;
#endif
                const int gm = m0 + m, gk = k0 + k;
                float v = 0.f;
                if (gm < M && gk < KD) {
                    v = MM_A(gm, gk);
                }
                At[m * LDK + k] = from_f32(v);
            }
            for (int e = tid; e < KT * BN; e += 256) {
#if MODE <= 1
                const int n = e / KT, k = e % KT;
#else
                const int k = e / BN, n = e % BN;
#endif
                const int gn = n0 + n, gk = k0 + k;
                float v = 0.f;
                if (gn < N && gk < KD) {
                    v = MM_B(gn, gk);
                }
                Bt[n * LDK + k] = from_f32(v);
            }
            __syncthreads();
#pragma unroll
            for (int ks = 0; ks < KT / 16; ++ks) {
                unsigned a[MTT][4];
#pragma unroll
                for (int i = 0; i < MTT; ++i)
                    ldsm_x4(a[i], At + (wm * WTM + i * 16 + (lane & 15)) * LDK + ks * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int np = 0; np < NTT / 2; ++np) {
                    unsigned bb[4];
                    ldsm_x4(bb, Bt + (wn * WTN + np * 16 + (lane & 7) + (lane >> 4) * 8) * LDK + ks * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                    for (int i = 0; i < MTT; ++i) {
                        mma16816(acc[i][2 * np][0], acc[i][2 * np][1], acc[i][2 * np][2], acc[i][2 * np][3], a[i], bb[0], bb[1]);
                        mma16816(acc[i][2 * np + 1][0], acc[i][2 * np + 1][1], acc[i][2 * np + 1][2], acc[i][2 * np + 1][3], a[i], bb[2], bb[3]);
                    }
                }
            }
            __syncthreads();
        }
    }
    const int off = Lk - Lq;
#pragma unroll
    for (int i = 0; i < MTT; ++i)
#pragma unroll
        for (int hi = 0; hi < 2; ++hi) {
            const int m = m0 + wm * WTM + i * 16 + g + 8 * hi;
            if (m >= M) continue;
#pragma unroll
            for (int j = 0; j < NTT; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int n = n0 + wn * WTN + j * 8 + 2 * qd + e;
                    if (n >= N) continue;
                    const float x = acc[i][j][2 * hi + e];
                    MM_STORE(m, n, x);
                }
        }
#else

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

    for (int hh = 0; hh < nheads; ++hh) {
        const int h = MM_HEAD;
        const size_t qrow = (size_t)(b * H + h) * Lq;
        for (int k0 = 0; k0 < KD; k0 += KS) {
            for (int e = tid; e < KS * BM; e += 256) {
#if MODE == 2 || MODE == 3
                const int k = e / BM, m = e % BM;  // A(m, k) contiguous in m
#else
                const int m = e / KS, k = e % KS;  // contiguous in k
#endif
                const int gm = m0 + m, gk = k0 + k;
                float v = 0.f;
                if (gm < M && gk < KD) {
                    v = MM_A(gm, gk);
                }
                As[k * LDA + m] = v;
            }
            for (int e = tid; e < KS * BN; e += 256) {
#if MODE <= 1
                const int n = e / KS, k = e % KS;  // B(k, n) = K/V row n, contiguous in k
#else
                const int k = e / BN, n = e % BN;  // contiguous in n
#endif
                const int gn = n0 + n, gk = k0 + k;
                float v = 0.f;
                if (gn < N && gk < KD) {
                    v = MM_B(gn, gk);
                }
                Bs[k * LDB + n] = v;
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < KS; ++k) {
                float a[TM], bb[TN];
#pragma unroll
                for (int i = 0; i < TM; ++i) a[i] = As[k * LDA + ty + 16 * i];
#pragma unroll
                for (int j = 0; j < TN; ++j) bb[j] = Bs[k * LDB + tx + 16 * j];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
            }
            __syncthreads();
        }
    }

    const int off = Lk - Lq;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int m = m0 + ty + 16 * i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int n = n0 + tx + 16 * j;
            if (n >= N) continue;
            const float x = acc[i][j];
            MM_STORE(m, n, x);
        }
    }
#endif
}
