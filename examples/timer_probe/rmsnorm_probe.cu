// RMS-norm forward over rows × cols (f32), one block of WG threads per row:
// Y[r, c] = X[r, c] / sqrt(mean over c of X[r, c]² + eps). Memory-bound, so
// its time follows the size: ~3 µs at 256×1024 to ~200 µs at 16384×4096 on
// an H100. It is the probe kernel of scripts/timer-probe-gpu.sh.
//
// PROBE=1 adds the GPU's own view of the launch: thread 0 of each block reads
// %globaltimer (and clock64) at its first instruction and again after the
// block's last store has been fenced, then folds them into `probe`
// (4 × u64, zeroed before the launch):
//   probe[0] = max over blocks of ~start  → ~probe[0] is the first block's start
//   probe[1] = max over blocks of end     → the last block's end
//   probe[2] = Σ SM cycles of the blocks, probe[3] = Σ their nanoseconds
// so probe[1] − ~probe[0] is the kernel's span on the GPU's clock (first block
// start → last block end) and probe[2] / probe[3] its SM clock in GHz. The
// start is stored complemented so that both ends use atomicMax and a buffer
// of zeros is the neutral start (a plain memset, no init kernel).
// PROBE=0 is the same kernel without any of it; `probe` is then unused.
//
// mltop gives WG, PROBE (knobs) as #defines; nvcc users pass -DPROBE=1 or
// include this file with PROBE defined (scripts/timer_probe.cu includes it
// twice, in two namespaces). No #include and no include guard, for that.

#ifndef WG
#define WG 256
#endif
#ifndef PROBE
#define PROBE 0
#endif

#if PROBE
// The "memory" clobber keeps the compiler from moving loads and stores
// across the read, so the start is taken before the block's first load.
__device__ __forceinline__ unsigned long long probe_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}
#endif

// Sum of v over the block; every thread gets it. red holds WG / 32 floats.
__device__ __forceinline__ float rms_block_sum(float v, float* red) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < WG / 32 ? red[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void __launch_bounds__(WG)
rmsnorm_rows(const float* __restrict__ X, float* __restrict__ Y, unsigned long long* probe, int n_cols, float eps) {
#if PROBE
    unsigned long long t_start = 0;
    long long c_start = 0;
    if (threadIdx.x == 0) {
        t_start = probe_globaltimer();
        c_start = clock64();
    }
#endif
    __shared__ float red[WG / 32];
    const size_t row = blockIdx.x;
    const float* x = X + row * n_cols;
    float* y = Y + row * n_cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < n_cols; c += WG) {
        const float v = x[c];
        ss += v * v;
    }
    ss = rms_block_sum(ss, red);
    const float inv = rsqrtf(ss / n_cols + eps);
    for (int c = threadIdx.x; c < n_cols; c += WG) y[c] = x[c] * inv;
#if PROBE
    // The end is read once every thread's stores are visible (fence, then
    // barrier): a kernel is not finished while its stores are in flight.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned long long t_end = probe_globaltimer();
        const long long c_end = clock64();
        atomicMax(&probe[0], ~t_start);
        atomicMax(&probe[1], t_end);
        atomicAdd(&probe[2], (unsigned long long)(c_end - c_start));
        atomicAdd(&probe[3], t_end - t_start);
    }
#else
    (void)probe;
#endif
}
