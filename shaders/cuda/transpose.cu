// transpose: Y = Xᵀ for X [rows, cols], Y [cols, rows] (see the plan
// contract in kernels/transpose.go). Group (x, y) reads the TILE×TILE tile
// at rows y·TILE, columns x·TILE of X with consecutive threads on
// consecutive columns (coalesced), parks it in tile_smem (f32, one float of
// padding per row so the column read below hits 32 different banks), and
// writes it back with consecutive threads on consecutive columns of Y.
#include "mltop_common.cuh"

#ifndef TILE
#define TILE 32
#endif
#ifndef WG
#define WG 256
#endif
#define STEP (WG / TILE) // tile rows moved per step

static_assert(WG % TILE == 0 && (TILE * TILE) % WG == 0, "WG must be a multiple of TILE and divide TILE*TILE");

extern "C" __global__ void __launch_bounds__(WG)
transpose(const T* __restrict__ X, T* __restrict__ Y, int rows, int cols) {
    __shared__ float tile_smem[TILE][TILE + 1];
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
#pragma unroll
    for (int i = ty; i < TILE; i += STEP) {
        const int r = r0 + i, c = c0 + tx;
        if (r < rows && c < cols) tile_smem[i][tx] = to_f32(X[(size_t)r * cols + c]);
    }
    __syncthreads();
#pragma unroll
    for (int i = ty; i < TILE; i += STEP) {
        const int yr = c0 + i, yc = r0 + tx; // Y row = X column
        if (yr < cols && yc < rows) Y[(size_t)yr * rows + yc] = from_f32(tile_smem[tx][i]);
    }
}
