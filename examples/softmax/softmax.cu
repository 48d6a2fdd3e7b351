// Row softmax for mltop (examples/softmax): one block of WG threads per row.
// mltop defines T (float, __half or __nv_bfloat16), WG, rows, cols as macros;
// mltop_user.cuh gives to_f32(x) and from_f32<T>(f) without toolkit headers.
#include "mltop_user.cuh"

#define NEG_INF __int_as_float(0xff800000)

template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float v, float* red) {
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = IS_MAX ? fmaxf(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < WG / 32 ? red[lane] : (IS_MAX ? NEG_INF : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = IS_MAX ? fmaxf(v, w) : v + w;
    }
    __syncthreads(); // red is reused by the next reduction
    return v;
}

extern "C" __global__ void __launch_bounds__(WG)
softmax_rows(const T* __restrict__ X, T* __restrict__ Y, int n_rows, int n_cols) {
    __shared__ float red[WG / 32];
    const size_t row = blockIdx.x;
    const T* x = X + row * n_cols;
    T* y = Y + row * n_cols;
    float m = NEG_INF;
    for (int c = threadIdx.x; c < n_cols; c += WG) m = fmaxf(m, to_f32(x[c]));
    m = block_reduce<true>(m, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += WG) s += expf(to_f32(x[c]) - m);
    s = block_reduce<false>(s, red);
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < n_cols; c += WG) y[c] = from_f32<T>(expf(to_f32(x[c]) - m) * inv);
}
