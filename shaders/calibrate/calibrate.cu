// Calibration micro-kernels: what this GPU achieves on a plain copy and on
// dense arithmetic, the ceilings mltop holds Results against next to the
// datasheet peaks. cuda/calibrate*.go launches them and counts their work;
// the macros below come from there, so both sides agree on the counts.
//
//   cal_fill      fills a buffer with hashed nonzero bits (no host upload)
//   cal_copy      16-byte grid-stride device-to-device copy
//   cal_mma_bf16  mma.sync m16n8k16, bf16 in, f32 accumulate (sm_80+)
//   cal_mma_f16   the same with f16 inputs
//   cal_fma_f32   independent FMA chains per thread
//
// Every kernel writes what it computed, so nothing is dead code.

#ifndef MMA_ACC
#error "MMA_ACC (independent accumulators per warp) comes from cuda/calibrate.go"
#endif
#ifndef FMA_CHAINS
#error "FMA_CHAINS (independent FMA chains per thread) comes from cuda/calibrate.go"
#endif

typedef unsigned int u32;

extern "C" __global__ void __launch_bounds__(256) cal_fill(uint4* __restrict__ dst, u32 n, u32 seed) {
    const u32 stride = gridDim.x * blockDim.x;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u32 h = (i ^ seed) * 2654435761u;
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        dst[i] = make_uint4(h, h * 3u + 1u, h ^ 0x9e3779b9u, ~h);
    }
}

// Four 16-byte loads in flight per thread before the stores, so that the
// memory system sees enough outstanding requests at full occupancy.
extern "C" __global__ void __launch_bounds__(256) cal_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, u32 n) {
    const u32 stride = gridDim.x * blockDim.x;
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3u * stride < n; i += 4u * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2u * stride], d = src[i + 3u * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2u * stride] = c;
        dst[i + 3u * stride] = d;
    }
    for (; i < n; i += stride) dst[i] = src[i];
}

#if __CUDA_ARCH__ >= 800
// One m16n8k16 tensor-core product: 2*16*8*16 = 4096 FLOPs per warp.
// volatile: identical operands must not be merged across accumulators.
template <bool BF16>
__device__ __forceinline__ void mma16816(float (&c)[4], const u32 (&a)[4], const u32 (&b)[2]) {
    if (BF16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

template <bool BF16>
__device__ __forceinline__ u32 pack_in(float lo, float hi) {
    u32 r;
    if (BF16)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Each warp runs MMA_ACC independent accumulators through iters rounds
// (MMA_ACC*iters products); in holds 1024 floats of operand values.
template <bool BF16>
__device__ __forceinline__ void mma_loop(const float* __restrict__ in, float* __restrict__ out, int iters) {
    const int lane = threadIdx.x & 31;
    u32 a[4], b[2];
#pragma unroll
    for (int j = 0; j < 4; ++j) a[j] = pack_in<BF16>(in[(lane * 12 + 2 * j) & 1023], in[(lane * 12 + 2 * j + 1) & 1023]);
#pragma unroll
    for (int j = 0; j < 2; ++j) b[j] = pack_in<BF16>(in[(lane * 12 + 8 + 2 * j) & 1023], in[(lane * 12 + 9 + 2 * j) & 1023]);
    float c[MMA_ACC][4];
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k)
#pragma unroll
        for (int j = 0; j < 4; ++j) c[k][j] = 0.001f * (k * 4 + j);
#pragma unroll 2
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < MMA_ACC; ++k) mma16816<BF16>(c[k], a, b);
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif

extern "C" __global__ void __launch_bounds__(256) cal_mma_bf16(const float* __restrict__ in, float* __restrict__ out, int iters) {
#if __CUDA_ARCH__ >= 800
    mma_loop<true>(in, out, iters);
#endif
}

extern "C" __global__ void __launch_bounds__(256) cal_mma_f16(const float* __restrict__ in, float* __restrict__ out, int iters) {
#if __CUDA_ARCH__ >= 800
    mma_loop<false>(in, out, iters);
#endif
}

// FMA_CHAINS independent chains per thread, x <- x*m + c, each converging
// to c/(1-m): finite for any iteration count. m and c come from memory so
// the compiler cannot fold the loop.
extern "C" __global__ void __launch_bounds__(256) cal_fma_f32(const float* __restrict__ in, float* __restrict__ out, int iters) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const float m = 0.999f + 0.0001f * in[t & 1023];
    const float c = 0.001f * in[(t + 7) & 1023];
    float x[FMA_CHAINS];
#pragma unroll
    for (int k = 0; k < FMA_CHAINS; ++k) x[k] = in[(t + k) & 1023];
#pragma unroll 4
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < FMA_CHAINS; ++k) x[k] = fmaf(x[k], m, c);
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < FMA_CHAINS; ++k) s += x[k];
    out[t] = s;
}
