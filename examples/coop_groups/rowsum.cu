// Row sums of a (rows, cols) matrix, two ways: a warp per row reducing with
// cooperative groups' cg::reduce, and a block per row with cub::BlockReduce.
// WG (threads per block) comes from the manifest; the source only uses it.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>

namespace cg = cooperative_groups;

template <typename T>
__device__ __forceinline__ float load_f32(const T* p, long i) {
    return (float)p[i];
}

// A warp (a 32-thread tile of the block) per row.
__global__ void row_sum_cg(const float* x, float* y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= rows) {
        return;
    }
    float acc = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) {
        acc += load_f32(x, (long)row * cols + c);
    }
    float total = cg::reduce(warp, acc, cg::plus<float>());
    if (warp.thread_rank() == 0) {
        y[row] = total;
    }
}

// A block of WG threads per row.
__global__ void __launch_bounds__(WG) row_sum_cub(const float* x, float* y, int rows, int cols) {
    using BlockReduce = cub::BlockReduce<float, WG>;
    __shared__ typename BlockReduce::TempStorage temp;
    int row = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += WG) {
        acc += load_f32(x, (long)row * cols + c);
    }
    float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0) {
        y[row] = total;
    }
}
