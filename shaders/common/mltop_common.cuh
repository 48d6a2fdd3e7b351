// Shared helpers for mltop's CUDA kernels (bf16/f16 storage, f32 math).
//
// Every family's macros (-DK=128, -DD=64, …) apply to this header too: a
// template parameter named like one of them stops compiling that family.
// kernels/shader_macros_test.go checks the names.
//
// NVRTC compiles these without the CUDA toolkit's headers, so the 16-bit
// types are raw bits (unsigned short) converted with PTX cvt instructions,
// and nothing here includes a system header.
#pragma once

#ifndef DTYPE
#define DTYPE 0
#endif

// Storage type T by the DTYPE macro: 0 f32, 1 f16, 2 bf16.
#if DTYPE == 0
typedef float T;
#else
typedef unsigned short T;
#endif

#define MLTOP_INF __int_as_float(0x7f800000)

__device__ __forceinline__ float to_f32(float x) { return x; }

__device__ __forceinline__ float to_f32(unsigned short h) {
#if DTYPE == 1
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return __uint_as_float(((unsigned)h) << 16);
#endif
}

// from_f32 rounds to nearest even.
__device__ __forceinline__ T from_f32(float f) {
#if DTYPE == 0
    return f;
#elif DTYPE == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#elif __CUDA_ARCH__ >= 800
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
#endif
}

// pack2 puts lo in the low 16 bits and hi in the high 16 bits, as the
// tensor-core operand registers expect (lower column first).
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
#if DTYPE == 1 && __CUDA_ARCH__ >= 800
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#elif DTYPE == 2 && __CUDA_ARCH__ >= 800
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return (unsigned)from_f32(lo) | ((unsigned)from_f32(hi) << 16);
#endif
}

// fast 2^x (MUFU.EX2); ex2(-inf) = 0.
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// copy16 copies 16 bytes global -> shared, asynchronously on sm_80+; when
// valid is false the destination is zero-filled and nothing is read.
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    unsigned n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(n));
#else
    uint4 v = make_uint4(0, 0, 0, 0);
    if (valid) v = *(const uint4*)src;
    *(uint4*)dst = v;
#endif
}

// copy_async copies BYTES (4, 8 or 16) global -> shared, asynchronously on
// sm_80+ (16-byte copies bypass L1); both addresses aligned to BYTES. It
// joins the current commit group like copy16.
template <int BYTES>
__device__ __forceinline__ void copy_async(void* dst, const void* src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(smem_addr(dst)), "l"(src), "n"(BYTES));
#else
    if constexpr (BYTES == 16)
        *(uint4*)dst = *(const uint4*)src;
    else if constexpr (BYTES == 8)
        *(uint2*)dst = *(const uint2*)src;
    else
        *(unsigned*)dst = *(const unsigned*)src;
#endif
}

__device__ __forceinline__ void async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}

// async_wait waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// load_tile_rows copies R rows of a row-major [*, COLS] matrix, from row r0,
// into shared memory with row stride LD (elements), 16 bytes per copy16
// spread over NTH threads; rows at or past nrows are zero-filled.
template <int R, int COLS, int LD, int NTH>
__device__ __forceinline__ void load_tile_rows(T* sm, const T* g, int r0, int nrows, int tid) {
    constexpr int VE = 16 / (int)sizeof(T);
    constexpr int CPR = COLS / VE;
    constexpr int TOTAL = R * CPR;
#pragma unroll
    for (int it = 0; it < (TOTAL + NTH - 1) / NTH; ++it) {
        int i = it * NTH + tid;
        if (TOTAL % NTH == 0 || i < TOTAL) {
            int r = i / CPR, c = (i % CPR) * VE;
            bool ok = r0 + r < nrows;
            copy16(sm + r * LD + c, g + (size_t)(ok ? r0 + r : 0) * COLS + c, ok);
        }
    }
}

// dot2 adds Σ a[d]·b[d] to s and Σ c[d]·e[d] to t over d < N in one pass
// (the S and dP elements of one query row and one key).
template <int N>
__device__ __forceinline__ void dot2(const T* a, const T* b, const T* c, const T* e, float& s, float& t) {
#pragma unroll 8
    for (int d = 0; d < N; ++d) {
        s = fmaf(to_f32(a[d]), to_f32(b[d]), s);
        t = fmaf(to_f32(c[d]), to_f32(e[d]), t);
    }
}

// VecN holds N storage elements moved as one aligned access (N·sizeof(T)
// must be a power of two, at most 16 bytes).
template <int N>
struct alignas(N * sizeof(T)) VecN {
    T v[N];
};

template <int N>
__device__ __forceinline__ void load_vec(const T* p, float (&f)[N]) {
    const VecN<N> t = *(const VecN<N>*)p;
#pragma unroll
    for (int i = 0; i < N; ++i) f[i] = to_f32(t.v[i]);
}

template <int N>
__device__ __forceinline__ void store_vec(T* p, const float (&f)[N]) {
    VecN<N> t;
#pragma unroll
    for (int i = 0; i < N; ++i) t.v[i] = from_f32(f[i]);
    *(VecN<N>*)p = t;
}

// store_vec_cs is store_vec with the streaming (evict-first) cache hint, for
// outputs nothing reads back soon, so they do not push inputs out of L2.
template <int N>
__device__ __forceinline__ void store_vec_cs(T* p, const float (&f)[N]) {
    VecN<N> t;
#pragma unroll
    for (int i = 0; i < N; ++i) t.v[i] = from_f32(f[i]);
    constexpr int B = N * (int)sizeof(T);
    if constexpr (B == 16) {
        const uint4 u = *(const uint4*)&t;
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u.x), "r"(u.y), "r"(u.z), "r"(u.w) : "memory");
    } else if constexpr (B == 8) {
        const uint2 u = *(const uint2*)&t;
        asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(u.x), "r"(u.y) : "memory");
    } else if constexpr (B == 4) {
        asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(*(const unsigned*)&t) : "memory");
    } else {
        *(VecN<N>*)p = t;
    }
}

// red_add adds f[0..N) to the f32 elements p[0..N) with fire-and-forget
// reductions (RED, performed in L2); on sm_90 four (or two) at a time with
// one vector instruction. p must be aligned to the vector width.
template <int N>
__device__ __forceinline__ void red_add(float* p, const float (&f)[N]) {
#if __CUDA_ARCH__ >= 900
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 4)
            asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p + i), "f"(f[i]), "f"(f[i + 1]), "f"(f[i + 2]),
                         "f"(f[i + 3])
                         : "memory");
        return;
    }
    if constexpr (N % 2 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 2)
            asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p + i), "f"(f[i]), "f"(f[i + 1]) : "memory");
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < N; ++i) atomicAdd(p + i, f[i]);
}

#if __CUDA_ARCH__ >= 800
// ldmatrix: each lane gives one 16-byte row address; x4 loads four 8x8
// b16 matrices (lanes 0-7 address the first, 8-15 the second, …).
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x2(unsigned (&r)[2], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x2_t(unsigned (&r)[2], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x1_t(unsigned& r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(smem_addr(p)));
}

#if DTYPE == 1
#define MMA_TYPES "f32.f16.f16.f32"
#else
#define MMA_TYPES "f32.bf16.bf16.f32"
#endif

// D += A·B for a 16x8 f32 tile, A 16x16 (4 regs), B 16x8 (2 regs).
__device__ __forceinline__ void mma16816(float& d0, float& d1, float& d2, float& d3, const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col." MMA_TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// D += A·B for a 16x8 f32 tile, A 16x8 (2 regs), B 8x8 (1 reg).
__device__ __forceinline__ void mma1688(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1, unsigned b0) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col." MMA_TYPES " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(b0));
}

// The accumulator fragments of a warp's tile: acc[rt][nt][e] is element
// (rt·8 + g, nt·8 + 2q + e), g = lane/4, q = lane%4.

// mma_16x16 adds A·B to the 16x16 block (rows 16m.., columns 16n..) of acc:
// a is the 16x16 A operand, b the two 16x8 B operands (columns 16n.. and
// 16n+8..) as ldsm_x4 returns them.
template <int R, int C>
__device__ __forceinline__ void mma_16x16(float (&acc)[R][C][2], int m, int n, const unsigned (&a)[4], const unsigned (&b)[4]) {
    mma16816(acc[2 * m][2 * n][0], acc[2 * m][2 * n][1], acc[2 * m + 1][2 * n][0], acc[2 * m + 1][2 * n][1], a, b[0], b[1]);
    mma16816(acc[2 * m][2 * n + 1][0], acc[2 * m][2 * n + 1][1], acc[2 * m + 1][2 * n + 1][0], acc[2 * m + 1][2 * n + 1][1], a, b[2], b[3]);
}

// mma_abt2 adds A1·B1ᵀ to c1 and A2·B2ᵀ to c2 (the S = Q·Kᵀ and dP = dO·Vᵀ
// pair of an attention backward, sharing one loop over the DEPTH columns):
// A1 and A2 are TILES_M·16 rows, B1 and B2 TILES_N·16 rows of row-major
// tiles in shared memory with row stride STRIDE; c1 and c2 hold
// TILES_M·16 × TILES_N·16 blocks.
template <int TILES_M, int TILES_N, int DEPTH, int STRIDE>
__device__ __forceinline__ void mma_abt2(float (&c1)[2 * TILES_M][2 * TILES_N][2], float (&c2)[2 * TILES_M][2 * TILES_N][2], const T* A1, const T* A2,
                                         const T* B1, const T* B2, int lane) {
#pragma unroll
    for (int kd = 0; kd < DEPTH / 16; ++kd) {
        unsigned a1[TILES_M][4], a2[TILES_M][4];
#pragma unroll
        for (int m = 0; m < TILES_M; ++m) {
            ldsm_x4(a1[m], A1 + (m * 16 + (lane & 15)) * STRIDE + kd * 16 + (lane >> 4) * 8);
            ldsm_x4(a2[m], A2 + (m * 16 + (lane & 15)) * STRIDE + kd * 16 + (lane >> 4) * 8);
        }
#pragma unroll
        for (int n = 0; n < TILES_N; ++n) {
            unsigned b1[4], b2[4];
            ldsm_x4(b1, B1 + (n * 16 + (lane & 7) + (lane >> 4) * 8) * STRIDE + kd * 16 + ((lane >> 3) & 1) * 8);
            ldsm_x4(b2, B2 + (n * 16 + (lane & 7) + (lane >> 4) * 8) * STRIDE + kd * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
            for (int m = 0; m < TILES_M; ++m) {
                mma_16x16(c1, m, n, a1[m], b1);
                mma_16x16(c2, m, n, a2[m], b2);
            }
        }
    }
}

// pack_a16 rounds the 16x16 block (rows 16m.., columns 16k..) of acc into
// the A operand registers of the next mma (the accumulator and A fragment
// layouts agree, so no data leaves the thread).
template <int R, int C>
__device__ __forceinline__ void pack_a16(unsigned (&a)[4], const float (&acc)[R][C][2], int m, int k) {
    a[0] = pack2(acc[2 * m][2 * k][0], acc[2 * m][2 * k][1]);
    a[1] = pack2(acc[2 * m + 1][2 * k][0], acc[2 * m + 1][2 * k][1]);
    a[2] = pack2(acc[2 * m][2 * k + 1][0], acc[2 * m][2 * k + 1][1]);
    a[3] = pack2(acc[2 * m + 1][2 * k + 1][0], acc[2 * m + 1][2 * k + 1][1]);
}
#endif
