// softmax_bwd: dX_i = Y_i·(dY_i − Σ_j dY_j·Y_j) for each row, the backward
// pass of a row softmax. One block of WG threads per row; the dot product is
// accumulated in f32, reduced over each warp with shuffles and over the
// warps through red_smem ((WG/32) floats), then every thread writes its
// elements. Rows whose length is a multiple of 16 bytes use 16-byte loads
// and stores.
#include "mltop_common.cuh"

#ifndef WG
#define WG 256
#endif
#define NW (WG / 32)
#define VEC (16 / (int)sizeof(T))

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");

// unpack reads a 16-byte vector of VEC elements as floats.
__device__ __forceinline__ void unpack(const uint4& v, float (&f)[VEC]) {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#if DTYPE == 0
#pragma unroll
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(w[i]);
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = to_f32((unsigned short)(w[i] & 0xffffu));
        f[2 * i + 1] = to_f32((unsigned short)(w[i] >> 16));
    }
#endif
}

__device__ __forceinline__ uint4 pack(const float (&f)[VEC]) {
    unsigned w[4];
#if DTYPE == 0
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = __float_as_uint(f[i]);
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = pack2(f[2 * i], f[2 * i + 1]);
#endif
    return make_uint4(w[0], w[1], w[2], w[3]);
}

extern "C" __global__ void __launch_bounds__(WG)
softmax_bwd(const T* __restrict__ Y, const T* __restrict__ dY, T* __restrict__ dX, int rows, int cols) {
    extern __shared__ float red_smem[];
    const int row = blockIdx.x, tid = threadIdx.x;
    if (row >= rows) return;
    const size_t base = (size_t)row * cols;
    const T* y = Y + base;
    const T* dy = dY + base;
    T* dx = dX + base;
    const bool vec = cols % VEC == 0;

    float acc = 0.f;
    if (vec) {
        const int nv = cols / VEC;
        for (int i = tid; i < nv; i += WG) {
            float a[VEC], c[VEC];
            unpack(((const uint4*)y)[i], a);
            unpack(((const uint4*)dy)[i], c);
#pragma unroll
            for (int k = 0; k < VEC; ++k) acc = fmaf(a[k], c[k], acc);
        }
    } else {
        for (int i = tid; i < cols; i += WG) acc = fmaf(to_f32(y[i]), to_f32(dy[i]), acc);
    }
    acc = warp_sum(acc);
    if ((tid & 31) == 0) red_smem[tid >> 5] = acc;
    __syncthreads();
    float dot = 0.f;
#pragma unroll
    for (int w = 0; w < NW; ++w) dot += red_smem[w];

    if (vec) {
        const int nv = cols / VEC;
        for (int i = tid; i < nv; i += WG) {
            float a[VEC], c[VEC];
            unpack(((const uint4*)y)[i], a);
            unpack(((const uint4*)dy)[i], c);
#pragma unroll
            for (int k = 0; k < VEC; ++k) a[k] = a[k] * (c[k] - dot);
            ((uint4*)dx)[i] = pack(a);
        }
    } else {
        for (int i = tid; i < cols; i += WG) dx[i] = from_f32(to_f32(y[i]) * (to_f32(dy[i]) - dot));
    }
}
