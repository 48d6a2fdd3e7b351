// The cold-cache flush mltop runs before each timed sample (not timed):
// it streams a buffer of a few times the L2 through the cache by *reading*
// it, so the L2 ends up holding only clean lines of that buffer. Evicting
// clean lines costs the timed kernel nothing, as after Nsight Compute's
// --cache-control all (flush and invalidate). A memset flush instead
// leaves the L2 full of dirty lines that the timed kernel must write back
// to DRAM as it evicts them (mltop's `--cache dirty`).
//
// The loads must not be optimised away, so each thread folds what it read
// into an XOR and stores it only when the XOR equals `never`: the host
// zero-fills the buffer and passes never = 1, so the store does not happen
// and the flush writes nothing, but the compiler cannot know that.
// Plain (L1/L2-allocating) loads: no streaming or evict-first hints, which
// would leave the kernel's lines in place. Four loads in flight per thread.

typedef unsigned int u32;

extern "C" __global__ void __launch_bounds__(256) mltop_l2_flush(const uint4* src, u32 n, u32 never) {
    const u32 stride = gridDim.x * blockDim.x;
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    u32 acc = 0;
    for (; i + 3u * stride < n; i += 4u * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2u * stride], d = src[i + 3u * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        uint4 a = src[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == never) {
        ((u32*)src)[blockIdx.x] = acc;
    }
}
