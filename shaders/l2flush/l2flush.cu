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

// The SM clock probe mltop runs before and after each batch of timed
// samples (never inside a timed window): one thread spins for `ns`
// nanoseconds of %globaltimer and counts the SM's cycles meanwhile, so that
// cycles / ns is the clock the GPU actually ran at. nvidia-smi's
// clocks.sm reads the target clock and misses GPU Boost moving the
// effective one by several per cent over tens of milliseconds, which is
// what makes one kernel's median differ between two runs.
extern "C" __global__ void mltop_sm_clock(unsigned long long* out, u32 slot, u32 ns) {
    // %globaltimer may tick coarsely (up to a µs): start the count right
    // after a tick and stop right after a later one, so both ends sit on an
    // edge and the quantisation cancels.
    unsigned long long prev, t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    } while (t0 == prev);
    const long long c0 = clock64();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < ns);
    const long long c1 = clock64();
    out[2 * slot] = (unsigned long long)(c1 - c0);
    out[2 * slot + 1] = t1 - t0;
}

// The gather of a check's download (DownloadRanges with many ranges):
// block r copies range r of src to its place in dst, descs[3r] being its
// offset in src, descs[3r+1] its offset in dst and descs[3r+2] its length
// in bytes, so that one copy to the host brings every range back. One
// launch instead of a driver call per range (a 256-row check made 500).
extern "C" __global__ void __launch_bounds__(256) mltop_gather(const unsigned char* src, unsigned char* dst, const unsigned long long* descs) {
    const unsigned long long* d = descs + 3ull * blockIdx.x;
    const unsigned long long from = d[0], to = d[1], n = d[2];
    for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) {
        dst[to + i] = src[from + i];
    }
}
