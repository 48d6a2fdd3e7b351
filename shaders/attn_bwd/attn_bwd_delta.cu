// attn_bwd_delta: delta = rowsum(dO∘O) in f32, the first dispatch of the
// attn_bwd and attn_bwd_unfused families. Grid (ceil(Lq/8), H, B), 256
// threads: one warp per query row.
#include "mltop_common.cuh"

#ifndef D
#define D 64
#endif

extern "C" __global__ void __launch_bounds__(256)
attn_bwd_delta(const T* __restrict__ O, const T* __restrict__ dO, float* __restrict__ delta,
               int B, int H, int Hkv, int Lq, int Lk, float scale) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row = blockIdx.x * 8 + warp;
    if (row >= Lq) return;
    const size_t r = (size_t)(blockIdx.z * H + blockIdx.y) * Lq + row;
    const T* o = O + r * D;
    const T* g = dO + r * D;
    float acc = 0.f;
#pragma unroll
    for (int d = lane; d < D; d += 32) acc = fmaf(to_f32(o[d]), to_f32(g[d]), acc);
    acc = warp_sum(acc);
    if (lane == 0) delta[r] = acc;
}
