// rmsnorm_bwd: dX and dW of y = x·r·w, r = 1/sqrt(mean(x²)+eps) (see the
// plan contract in kernels/rmsnorm_bwd.go). A block of WG threads owns RPG
// rows; thread t owns the VEC-wide column vectors t, t+WG, … (NIT of them)
// and keeps its W values and dW partials in registers across the rows.
// Per row: Σx² and Σ dY·w·x in f32 (warp shuffles, then red_smem across
// warps), dX written with VEC-wide stores, dY·x·r added to the partials.
// After the rows, one atomic add per column into dW (zeroed by the plan's
// zero_dW dispatch), VEC-wide on sm_90.
#include "mltop_common.cuh"

#ifndef WG
#define WG 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef RPG
#define RPG 16
#endif
#ifndef D
#define D 4096
#endif
#define NW (WG / 32)
#define NIT ((D + WG * VEC - 1) / (WG * VEC))

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(D % VEC == 0, "D must be a multiple of VEC");
static_assert(VEC * sizeof(T) <= 16, "VEC elements must fit one 16-byte access");

struct __align__(VEC * sizeof(T)) VecT {
    T v[VEC];
};

__device__ __forceinline__ void load_vec(const T* p, float (&f)[VEC]) {
    const VecT t = *(const VecT*)p;
#pragma unroll
    for (int i = 0; i < VEC; ++i) f[i] = to_f32(t.v[i]);
}

__device__ __forceinline__ void store_vec(T* p, const float (&f)[VEC]) {
    VecT t;
#pragma unroll
    for (int i = 0; i < VEC; ++i) t.v[i] = from_f32(f[i]);
    *(VecT*)p = t;
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

// load_row reads this thread's columns of row r of X and dY (zeros past D).
__device__ __forceinline__ void load_row(const T* __restrict__ X, const T* __restrict__ dY, int r, int tid,
                                         float (&xv)[NIT][VEC], float (&gv)[NIT][VEC]) {
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D) {
            load_vec(X + (size_t)r * D + c, xv[it]);
            load_vec(dY + (size_t)r * D + c, gv[it]);
        } else {
#pragma unroll
            for (int v = 0; v < VEC; ++v) xv[it][v] = gv[it][v] = 0.f;
        }
    }
}

extern "C" __global__ void __launch_bounds__(WG)
rmsnorm_bwd(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ dY, T* __restrict__ dX,
            float* __restrict__ dW, int rows, float eps) {
    __shared__ float red_smem[2 * NW];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float w[NIT][VEC], acc[NIT][VEC];
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D) {
            load_vec(W + c, w[it]);
        } else {
#pragma unroll
            for (int v = 0; v < VEC; ++v) w[it][v] = 0.f;
        }
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[it][v] = 0.f;
    }
    const int r0 = blockIdx.x * RPG;
    const int r1 = min(r0 + RPG, rows);
    // Rows are software-pipelined: the next row's X and dY are loaded
    // before this row's reduction waits on the barrier.
    float xv[NIT][VEC], gv[NIT][VEC];
    load_row(X, dY, r0, tid, xv, gv);
    for (int r = r0; r < r1; ++r) {
        float ss = 0.f, dot = 0.f;
#pragma unroll
        for (int it = 0; it < NIT; ++it) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                ss = fmaf(xv[it][v], xv[it][v], ss);
                dot = fmaf(gv[it][v] * w[it][v], xv[it][v], dot);
            }
        }
        float xn[NIT][VEC], gn[NIT][VEC];
        if (r + 1 < r1) load_row(X, dY, r + 1, tid, xn, gn);
        ss = warp_sum(ss);
        dot = warp_sum(dot);
        if (lane == 0) {
            red_smem[warp] = ss;
            red_smem[NW + warp] = dot;
        }
        __syncthreads();
        float tss = 0.f, tdot = 0.f;
#pragma unroll
        for (int i = 0; i < NW; ++i) {
            tss += red_smem[i];
            tdot += red_smem[NW + i];
        }
        __syncthreads(); // everyone has read before the next row overwrites
        const float rinv = rsqrtf(tss * (1.0f / D) + eps);
        const float k = rinv * rinv * rinv * (1.0f / D) * tdot;
        T* dx = dX + (size_t)r * D;
#pragma unroll
        for (int it = 0; it < NIT; ++it) {
            const int c = (it * WG + tid) * VEC;
            if (c < D) {
                float out[VEC];
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    out[v] = rinv * w[it][v] * gv[it][v] - xv[it][v] * k;
                    acc[it][v] = fmaf(gv[it][v] * xv[it][v], rinv, acc[it][v]);
                }
                store_vec(dx + c, out);
            }
        }
#pragma unroll
        for (int it = 0; it < NIT; ++it) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                xv[it][v] = xn[it][v];
                gv[it][v] = gn[it][v];
            }
        }
    }
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D && r0 < r1) red_add(dW + c, acc[it]);
    }
}
