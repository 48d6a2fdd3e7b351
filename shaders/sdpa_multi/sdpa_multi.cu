// sdpa_multi: n_query query rows against a shared K/V cache, one block per
// (head, query) (see the plan contract in kernels/sdpa_multi.go). The NW =
// TPG/32 warps take the visible keys round-robin (warp w: keys w, w+NW, …),
// two keys per step for more loads in flight. Lane l owns head-dim elements
// [l·EPL, l·EPL+EPL); a score is a warp_sum of the lanes' partial dots.
// Each warp keeps an online softmax (max, Σ2^s, O) in f32 in the log2
// domain (Q is pre-scaled by scale·log2e); at the end every warp rescales
// its O to the block's max and sum and parks it in o_smem, and the first D
// threads add the NW rows per column.
#include "mltop_common.cuh"

#ifndef TPG
#define TPG 1024
#endif
#ifndef D
#define D 128
#endif
#ifndef CAUSAL
#define CAUSAL 1
#endif
#define NW (TPG / 32)
#define EPL (D / 32)
#define LOG2E 1.4426950408889634f

static_assert(TPG % 32 == 0 && TPG >= 32 && TPG <= 1024, "TPG must be a multiple of 32 in [32, 1024]: a group of less than one warp would never advance the key walk");
static_assert(D % 32 == 0, "each lane owns D/32 head-dim elements");

extern "C" __global__ void __launch_bounds__(TPG)
sdpa_multi(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V, T* __restrict__ O,
           int n_query, int H, int Hkv, int base_kv, int kv_stride, float scale) {
    __shared__ float m_smem[NW];
    __shared__ float l_smem[NW];
    __shared__ __align__(16) float o_smem[NW * D];
    const int h = blockIdx.x, r = blockIdx.y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (h >= H || r >= n_query) return;
    const int n = CAUSAL ? base_kv + r + 1 : base_kv + n_query;
    const int kvh = h / (H / Hkv);
    float q[EPL];
    load_vec(Q + ((size_t)r * H + h) * D + lane * EPL, q);
#pragma unroll
    for (int e = 0; e < EPL; ++e) q[e] *= scale * LOG2E;
    const T* kb = K + (size_t)kvh * kv_stride * D + lane * EPL;
    const T* vb = V + (size_t)kvh * kv_stride * D + lane * EPL;

    float m = -MLTOP_INF, l = 0.f, o[EPL];
#pragma unroll
    for (int e = 0; e < EPL; ++e) o[e] = 0.f;
    int j = warp;
    for (; j + NW < n; j += 2 * NW) {
        float k0[EPL], k1[EPL], v0[EPL], v1[EPL];
        load_vec(kb + (size_t)j * D, k0);
        load_vec(kb + (size_t)(j + NW) * D, k1);
        load_vec(vb + (size_t)j * D, v0);
        load_vec(vb + (size_t)(j + NW) * D, v1);
        float s0 = 0.f, s1 = 0.f;
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
            s0 = fmaf(q[e], k0[e], s0);
            s1 = fmaf(q[e], k1[e], s1);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            s0 += __shfl_xor_sync(0xffffffffu, s0, off);
            s1 += __shfl_xor_sync(0xffffffffu, s1, off);
        }
        const float nm = fmaxf(m, fmaxf(s0, s1));
        const float f = ex2(m - nm), p0 = ex2(s0 - nm), p1 = ex2(s1 - nm);
        l = fmaf(l, f, p0 + p1);
        m = nm;
#pragma unroll
        for (int e = 0; e < EPL; ++e) o[e] = fmaf(o[e], f, fmaf(p0, v0[e], p1 * v1[e]));
    }
    if (j < n) {
        float k0[EPL], v0[EPL];
        load_vec(kb + (size_t)j * D, k0);
        load_vec(vb + (size_t)j * D, v0);
        float s0 = 0.f;
#pragma unroll
        for (int e = 0; e < EPL; ++e) s0 = fmaf(q[e], k0[e], s0);
        s0 = warp_sum(s0);
        const float nm = fmaxf(m, s0);
        const float f = ex2(m - nm), p0 = ex2(s0 - nm);
        l = fmaf(l, f, p0);
        m = nm;
#pragma unroll
        for (int e = 0; e < EPL; ++e) o[e] = fmaf(o[e], f, p0 * v0[e]);
    }

    if (lane == 0) {
        m_smem[warp] = m;
        l_smem[warp] = l;
    }
    __syncthreads();
    float gm = -MLTOP_INF;
#pragma unroll
    for (int w = 0; w < NW; ++w) gm = fmaxf(gm, m_smem[w]);
    float gl = 0.f;
#pragma unroll
    for (int w = 0; w < NW; ++w) gl += l_smem[w] > 0.f ? l_smem[w] * ex2(m_smem[w] - gm) : 0.f;
    const float c = l > 0.f ? ex2(m - gm) / gl : 0.f; // a warp that saw no key adds nothing
#pragma unroll
    for (int e = 0; e < EPL; ++e) o_smem[warp * D + lane * EPL + e] = o[e] * c;
    __syncthreads();
    T* out = O + ((size_t)r * H + h) * D;
    for (int d = threadIdx.x; d < D; d += TPG) {
        float acc = 0.f;
#pragma unroll 8
        for (int w = 0; w < NW; ++w) acc += o_smem[w * D + d];
        out[d] = from_f32(acc);
    }
}
