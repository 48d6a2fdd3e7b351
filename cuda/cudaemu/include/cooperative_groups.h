// cooperative_groups.h of the CUDA emulation: the block and its tiles
// (this_thread_block, tiled_partition<N>, thread_block_tile's shuffles,
// votes and sync, cg::reduce with cg::plus/less/greater…). The grid and
// clusters (this_grid, grid_group, this_cluster) are not here: mltop
// refuses a kernel that uses them before compiling.
#pragma once
#include <cuda_emu.h>

namespace cooperative_groups {

// emu_block_rank is the thread's rank in its block.
inline unsigned emu_block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

struct thread_group {
  unsigned long long size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const { return emu_block_rank(); }
  void sync() const { __syncthreads(); }
};

struct thread_block : thread_group {
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};
inline thread_block this_thread_block() { return thread_block{}; }

// A tile of N threads (N a power of two, at most 32): consecutive ranks of
// the block, inside one warp.
template <unsigned N>
struct emu_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile of 1, 2, 4, 8, 16 or 32 threads");
  static constexpr unsigned long long size() { return N; }
  static constexpr unsigned long long num_threads() { return N; }
  unsigned long long thread_rank() const { return emu_block_rank() % N; }
  unsigned long long meta_group_rank() const { return emu_block_rank() / N; }
  unsigned long long meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
  unsigned build_mask() const {
    const unsigned base = unsigned(emu_lane) / N * N;
    return (N == 32 ? 0xffffffffu : ((1u << N) - 1)) << base;
  }
  void sync() const { __syncwarp(build_mask()); }
  template <typename T> T shfl(T v, int src) const { return __shfl_sync(build_mask(), v, src, N); }
  template <typename T> T shfl_down(T v, unsigned d) const { return __shfl_down_sync(build_mask(), v, d, N); }
  template <typename T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(build_mask(), v, d, N); }
  template <typename T> T shfl_xor(T v, unsigned m) const { return __shfl_xor_sync(build_mask(), v, m, N); }
  unsigned ballot(int pred) const { return __ballot_sync(build_mask(), pred) >> (unsigned(emu_lane) / N * N); }
  int any(int pred) const { return __any_sync(build_mask(), pred); }
  int all(int pred) const { return __all_sync(build_mask(), pred); }
  template <typename T> unsigned match_any(T v) const { return __match_any_sync(build_mask(), v) >> (unsigned(emu_lane) / N * N); }
  operator thread_group() const { return thread_group{}; }
};
// thread_block_tile<N> and thread_block_tile<N, thread_block> are one tile.
template <unsigned N, typename Parent = void>
struct thread_block_tile : emu_tile<N> {
  thread_block_tile() = default;
  template <typename Q> thread_block_tile(const thread_block_tile<N, Q>&) {}
};

template <unsigned N, typename P>
inline thread_block_tile<N, P> tiled_partition(const P&) { return thread_block_tile<N, P>{}; }

template <typename T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <typename T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <typename T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <typename T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <typename T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <typename T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// reduce folds every thread's v of the tile with op; each gets the result.
template <unsigned N, typename T, typename Op>
inline T reduce(const emu_tile<N>& g, T v, Op op) {
  for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o));
  return v;
}
// inclusive_scan and exclusive_scan over the tile, in rank order.
template <unsigned N, typename T, typename Op = plus<T>>
inline T inclusive_scan(const emu_tile<N>& g, T v, Op op = Op()) {
  for (unsigned d = 1; d < N; d *= 2) {
    T o = g.shfl_up(v, d);
    if (g.thread_rank() >= d) v = op(v, o);
  }
  return v;
}
template <unsigned N, typename T, typename Op = plus<T>>
inline T exclusive_scan(const emu_tile<N>& g, T v, Op op = Op()) {
  T in = inclusive_scan(g, v, op);
  T prev = g.shfl_up(in, 1);
  return g.thread_rank() == 0 ? T{} : prev;
}

inline void sync(const thread_block& g) { g.sync(); }
template <unsigned N> inline void sync(const emu_tile<N>& g) { g.sync(); }

}  // namespace cooperative_groups
