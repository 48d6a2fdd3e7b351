// The cold-cache flush mltop runs on Apple GPUs before each timed dispatch
// (not timed), the Metal twin of l2flush.cu: it streams a buffer of twice
// the system-level cache (SLC) through the caches by *reading* it, so they
// end up holding only clean lines of that buffer. Evicting clean lines
// costs the timed kernel nothing, as after Nsight Compute's --cache-control
// all. A blit fill instead leaves the caches full of dirty lines that the
// timed kernel must write back as it evicts them (mltop's `--cache dirty`).
//
// The loads must not be optimised away, so each thread folds what it read
// into an XOR and stores it only when the XOR equals `never`: the host
// passes never = 1, which no fold of the buffer's contents can give (the
// buffer holds one byte value throughout: zeros, or a dirty fill's byte, so
// the four words of every element are equal and XOR to 0), so the flush
// writes nothing, but the compiler cannot know that. Four loads in flight
// per thread.
//
// Buffers: src (n uint4 elements), then the scalar struct. Grid (groups,
// 1, 1), group (FLUSH_THREADS, 1, 1); metal/flush.go launches it.
#include "mltop_common.h"

#ifndef FLUSH_THREADS
#error "FLUSH_THREADS (threads per group) comes from metal/flush.go"
#endif

struct FlushParams {
  int n;     // 16-byte elements
  int never; // a value the fold never takes: the store never happens
};

[[kernel, max_total_threads_per_threadgroup(FLUSH_THREADS)]] void mltop_slc_flush(
    device uint4* src [[buffer(0)]],
    constant FlushParams& p [[buffer(1)]],
    uint tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    uint groups [[threadgroups_per_grid]]) {
  const uint n = uint(p.n);
  const uint stride = groups * FLUSH_THREADS;
  uint i = tg * FLUSH_THREADS + tid;
  uint acc = 0;
  for (; i + 3u * stride < n; i += 4u * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2u * stride], d = src[i + 3u * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    uint4 a = src[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == uint(p.never)) {
    ((device uint*)src)[tg] = acc;
  }
}
