// Tiled matmul for mltop (examples/matmul). Macros from the manifest: T, BM,
// BN, BK, WG (and M, N, K, which this file does not use: the sizes arrive as
// the arguments m, n, k).
#include "mltop_user.cuh"

#define TY (WG / BN)          // threads down a column of the tile
#define RPT (BM * BN / WG)    // rows of the tile per thread

extern "C" __global__ void __launch_bounds__(WG)
matmul_tiled(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int m, int n, int k) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x, tx = tid % BN, ty = tid / BN;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[RPT];
#pragma unroll
    for (int r = 0; r < RPT; r++) acc[r] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += BK) {
        for (int i = tid; i < BM * BK; i += WG) {
            const int r = i / BK, c = i % BK, gr = row0 + r, gc = k0 + c;
            As[r][c] = (gr < m && gc < k) ? to_f32(A[(size_t)gr * k + gc]) : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += WG) {
            const int r = i / BN, c = i % BN, gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < k && gc < n) ? to_f32(B[(size_t)gr * n + gc]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            const float b = Bs[kk][tx];
#pragma unroll
            for (int r = 0; r < RPT; r++) acc[r] += As[ty + r * TY][kk] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < RPT; r++) {
        const int gr = row0 + ty + r * TY, gc = col0 + tx;
        if (gr < m && gc < n) C[(size_t)gr * n + gc] = from_f32<T>(acc[r]);
    }
}
