// embedding_bwd: dW[ids[t], :] += dY[t, :] with float atomics (see the plan
// contract in kernels/embedding_bwd.go). A block of WG threads handles TPG
// tokens; thread i loads the VEC-wide column vectors i, i+WG, … of a
// token's dY row and adds them to the table row. dW is f32 and zeroed by
// the plan's zero_dW dispatch. The atomics are fire-and-forget reductions
// (RED) that the L2 performs, vector-wide on sm_90.
#include "mltop_common.cuh"

#ifndef WG
#define WG 256
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef TPG
#define TPG 1
#endif

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(VEC * sizeof(T) <= 16, "VEC elements must fit one 16-byte access");

struct __align__(VEC * sizeof(T)) VecT {
    T v[VEC];
};

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

extern "C" __global__ void __launch_bounds__(WG)
embedding_bwd(const int* __restrict__ ids, const T* __restrict__ dY, float* __restrict__ dW, int tokens, int D) {
    const int nv = D / VEC;
    const int t0 = blockIdx.x * TPG;
#pragma unroll
    for (int tt = 0; tt < TPG; ++tt) {
        const int t = t0 + tt;
        if (t >= tokens) return;
        const int id = ids[t];
        const VecT* g = (const VecT*)(dY + (size_t)t * D);
        float* w = dW + (size_t)id * D;
        for (int i = threadIdx.x; i < nv; i += WG) {
            const VecT v = g[i];
            float f[VEC];
#pragma unroll
            for (int k = 0; k < VEC; ++k) f[k] = to_f32(v.v[k]);
            red_add(w + i * VEC, f);
        }
    }
}
