// Tiled transpose for mltop (examples/transpose). Macros: T, TILE, ROWS.
// A group of TILE×ROWS threads reads a TILE×TILE tile of src row by row and
// writes it to dst row by row, so both sides are coalesced.
#include "mltop_user.cuh"

extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose_tiled(const T* __restrict__ src, T* __restrict__ dst, int h, int w) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int x = blockIdx.x * TILE + tx;
    for (int j = ty; j < TILE; j += ROWS) {
        const int y = blockIdx.y * TILE + j;
        if (x < w && y < h) tile[j][tx] = to_f32(src[(size_t)y * w + x]);
    }
    __syncthreads();
    const int ox = blockIdx.y * TILE + tx;
    for (int j = ty; j < TILE; j += ROWS) {
        const int oy = blockIdx.x * TILE + j;
        if (ox < h && oy < w) dst[(size_t)oy * h + ox] = from_f32<T>(tile[tx][j]);
    }
}
