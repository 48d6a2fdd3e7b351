// Tiled transpose for mltop (examples/transpose), Metal. Macros: T, TILE, ROWS.
#include <metal_stdlib>
using namespace metal;

struct TransposeUserParams {
    int h;
    int w;
};

[[kernel]] void transpose_tiled(device const T* src [[buffer(0)]],
                                device T* dst [[buffer(1)]],
                                constant TransposeUserParams& p [[buffer(2)]],
                                uint3 tg [[threadgroup_position_in_grid]],
                                uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float tile[TILE][TILE + 1];
    const int h = p.h, w = p.w;
    const int tx = tid % TILE, ty = tid / TILE;
    const int x = tg.x * TILE + tx;
    for (int j = ty; j < TILE; j += ROWS) {
        const int y = tg.y * TILE + j;
        if (x < w && y < h) tile[j][tx] = float(src[(ulong)y * w + x]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const int ox = tg.y * TILE + tx;
    for (int j = ty; j < TILE; j += ROWS) {
        const int oy = tg.x * TILE + j;
        if (ox < h && oy < w) dst[(ulong)oy * h + ox] = T(tile[tx][j]);
    }
}
