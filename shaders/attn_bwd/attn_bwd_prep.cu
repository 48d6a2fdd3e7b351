// attn_bwd_prep: the untimed Setup of attn_bwd_atomic when an additive
// mask is set (attn_fwd has none): O and the natural-log logsumexp L of
// softmax(scale·Q·Kᵀ + mask)·V. Grid (ceil(Lq/4), H, B), 128 threads: one
// warp per query row, two passes over the keys (statistics, then O).
// Simple on purpose: it is not timed.
#include "mltop_common.cuh"

#ifndef D
#define D 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif

__device__ __forceinline__ float row_score(const T* q, const T* k) {
    float s = 0.f;
#pragma unroll 8
    for (int d = 0; d < D; ++d) s = fmaf(to_f32(q[d]), to_f32(k[d]), s);
    return s;
}

extern "C" __global__ void __launch_bounds__(128)
attn_bwd_prep(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
              const float* __restrict__ mask, T* __restrict__ O, float* __restrict__ L,
              int B, int H, int Hkv, int Lq, int Lk, float scale) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int i = blockIdx.x * 4 + warp;
    if (i >= Lq) return;
    const int h = blockIdx.y, b = blockIdx.z, hk = h / (H / Hkv);
    const size_t row = (size_t)(b * H + h) * Lq + i;
    const T* q = Q + row * D;
    const T* Kh = K + (size_t)(b * Hkv + hk) * Lk * D;
    const T* Vh = V + (size_t)(b * Hkv + hk) * Lk * D;
    const int n = CAUSAL ? min(max(i + Lk - Lq + 1, 0), Lk) : Lk;

    float m = -MLTOP_INF, l = 0.f;
    for (int j = lane; j < n; j += 32) {
        const float s = row_score(q, Kh + (size_t)j * D) * scale + mask[(size_t)i * Lk + j];
        const float mn = fmaxf(m, s);
        l = l * __expf(m - mn) + __expf(s - mn);
        m = mn;
    }
    float M = m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
    float lsum = M == -MLTOP_INF ? 0.f : l * __expf(m - M);
    lsum = warp_sum(lsum);
    const float lse = lsum > 0.f ? M + __logf(lsum) : -MLTOP_INF;

    constexpr int PER = (D + 31) / 32;
    float o[PER];
#pragma unroll
    for (int c = 0; c < PER; ++c) o[c] = 0.f;
    for (int j0 = 0; j0 < n; j0 += 32) {
        const int j = j0 + lane;
        float p = 0.f;
        if (j < n) p = __expf(row_score(q, Kh + (size_t)j * D) * scale + mask[(size_t)i * Lk + j] - lse);
        const int cnt = min(32, n - j0);
        for (int jj = 0; jj < cnt; ++jj) {
            const float pj = __shfl_sync(0xffffffffu, p, jj);
            const T* v = Vh + (size_t)(j0 + jj) * D;
#pragma unroll
            for (int c = 0; c < PER; ++c) {
                const int d = lane + 32 * c;
                if (d < D) o[c] = fmaf(pj, to_f32(v[d]), o[c]);
            }
        }
    }
#pragma unroll
    for (int c = 0; c < PER; ++c) {
        const int d = lane + 32 * c;
        if (d < D) O[row * D + d] = from_f32(o[c]);
    }
    if (lane == 0) L[row] = lse;
}
