// transpose: Y = Xᵀ for X [rows, cols], Y [cols, rows] (see the plan
// contract in kernels/transpose.go). Group (x, y) reads the TILE×TILE tile
// at rows y·TILE, columns x·TILE of X, VEC adjacent elements per thread and
// consecutive threads on consecutive vectors of a row (coalesced), parks it
// in tile_smem (f32, one float of padding per row against bank conflicts),
// and writes it back the same way along the rows of Y. Rows whose length is
// not a multiple of VEC fall back to one element per access.
#include "mltop_common.cuh"

#ifndef TILE
#define TILE 64
#endif
#ifndef WG
#define WG 256
#endif
#ifndef VEC
#define VEC 2
#endif
#define TV (TILE / VEC)  // vectors per tile row
#define STEP (WG / TV)   // tile rows moved per step

static_assert(TILE % VEC == 0 && WG % TV == 0 && TILE % STEP == 0, "WG must be a multiple of TILE/VEC and divide TILE*TILE/VEC");
static_assert(VEC * sizeof(T) <= 16, "VEC elements must fit one 16-byte access");

typedef VecN<VEC> VecT;

extern "C" __global__ void __launch_bounds__(WG)
transpose(const T* __restrict__ X, T* __restrict__ Y, int rows, int cols) {
    __shared__ float tile_smem[TILE][TILE + 1];
    const int tx = threadIdx.x % TV, ty = threadIdx.x / TV;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    const bool vin = cols % VEC == 0, vout = rows % VEC == 0;
#pragma unroll
    for (int i = ty; i < TILE; i += STEP) {
        const int r = r0 + i, c = c0 + tx * VEC;
        if (r < rows && c < cols) {
            const T* src = X + (size_t)r * cols + c;
            if (vin) {
                const VecT v = *(const VecT*)src;
#pragma unroll
                for (int k = 0; k < VEC; ++k) tile_smem[i][tx * VEC + k] = to_f32(v.v[k]);
            } else {
#pragma unroll
                for (int k = 0; k < VEC; ++k)
                    if (c + k < cols) tile_smem[i][tx * VEC + k] = to_f32(src[k]);
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = ty; i < TILE; i += STEP) {
        const int yr = c0 + i, yc = r0 + tx * VEC; // Y row = X column
        if (yr < cols && yc < rows) {
            T* dst = Y + (size_t)yr * rows + yc;
            if (vout) {
                VecT v;
#pragma unroll
                for (int k = 0; k < VEC; ++k) v.v[k] = from_f32(tile_smem[tx * VEC + k][i]);
                *(VecT*)dst = v;
            } else {
#pragma unroll
                for (int k = 0; k < VEC; ++k)
                    if (yc + k < rows) dst[k] = from_f32(tile_smem[tx * VEC + k][i]);
            }
        }
    }
}
