// transpose: Y = Xᵀ for X [rows, cols], Y [cols, rows] (see the plan
// contract in kernels/transpose.go).
//
// Macros: TILE (tile edge), WG (threads per group), VEC (adjacent
// elements per thread and access), DTYPE (0 f32, 1 f16, 2 bf16). Buffers: X T, Y T; scalars (rows, cols) at buffer(2).
// Grid (ceil(cols/TILE), ceil(rows/TILE), 1), group (WG, 1, 1).
//
// Consecutive threads read consecutive VEC-wide pieces of a row of X into
// the tile, and write consecutive pieces of a row of Y out of it; the tile is
// f32 with one float of padding per row so the column read of the second
// half hits distinct banks. Threadgroup memory: tile_smem TILE·(TILE+1)·4.
#include "mltop_common.h"

#define TV (TILE / VEC) // vectors per tile row
#define STEP (WG / TV)  // tile rows moved per step

static_assert(TILE % VEC == 0 && WG % TV == 0 && TILE % STEP == 0, "WG must be a multiple of TILE/VEC and divide TILE*TILE/VEC");

struct TransposeParams {
  int rows;
  int cols;
};

[[kernel, max_total_threads_per_threadgroup(WG)]] void transpose(
    const device mltop_t* X [[buffer(0)]],
    device mltop_t* Y [[buffer(1)]],
    constant TransposeParams& p [[buffer(2)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float tile_smem[TILE * (TILE + 1)];
  const int tx = int(tid) % TV;
  const int ty = int(tid) / TV;
  const int r0 = int(tg.y) * TILE;
  const int c0 = int(tg.x) * TILE;
  for (int i = ty; i < TILE; i += STEP) {
    const int r = r0 + i;
    const int c = c0 + tx * VEC;
    for (int k = 0; k < VEC; ++k) {
      if (r < p.rows && c + k < p.cols) {
        tile_smem[i * (TILE + 1) + tx * VEC + k] = mltop_to_f32(X[size_t(r) * size_t(p.cols) + size_t(c + k)]);
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int i = ty; i < TILE; i += STEP) {
    const int yr = c0 + i; // a row of Y is a column of X
    const int yc = r0 + tx * VEC;
    for (int k = 0; k < VEC; ++k) {
      if (yr < p.cols && yc + k < p.rows) {
        Y[size_t(yr) * size_t(p.rows) + size_t(yc + k)] = mltop_from_f32(tile_smem[(tx * VEC + k) * (TILE + 1) + i]);
      }
    }
  }
}
