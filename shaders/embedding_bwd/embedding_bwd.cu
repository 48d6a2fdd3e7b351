// embedding_bwd: dW[ids[t], :] += dY[t, :] with float atomics (see the plan
// contract in kernels/embedding_bwd.go). A block of WG threads handles TPG
// tokens; thread i loads the VEC-wide column vectors i, i+WG, … of a
// token's dY row and adds them to the table row. dW is f32 and zeroed by
// the plan's zero_dW dispatch. The atomics are fire-and-forget reductions
// (RED) that the L2 performs, vector-wide on sm_90.
//
// GATHER=1 (two other entries, no zero fill, no float atomics):
// embedding_link threads each id's tokens into a list (one integer
// atomicExch per token on head[id]); embedding_gather then gives each
// table row to one block, which walks the row's list, sums those dY rows
// in f32 registers and writes the row once, zeros for ids no token has:
// the table is written exactly once. A list is walked one dependent load
// per token, so an id with n tokens costs n steps of latency.
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

typedef VecN<VEC> VecT;

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

// LINK_WG threads per group of embedding_link.
#define LINK_WG 256

// embedding_link threads each id's tokens into a list: head[id] is the
// last token linked + 1 (0: none), nxt[t] the token before t + 1. head
// starts zeroed (the plan's initialiser, then embedding_gather after use).
extern "C" __global__ void __launch_bounds__(LINK_WG)
embedding_link(const int* __restrict__ ids, int* __restrict__ head, int* __restrict__ nxt, int tokens) {
    const int t = blockIdx.x * LINK_WG + threadIdx.x;
    if (t < tokens) nxt[t] = atomicExch(&head[ids[t]], t + 1);
}

// embedding_gather: block g writes table rows [g·TPG, …): thread i sums
// the VEC-wide column vectors i, i+WG, … of the dY rows on the row's list
// in f32 and stores them once (zeros for an empty list), with the
// streaming hint; then head is left zeroed for the next launch.
extern "C" __global__ void __launch_bounds__(WG)
embedding_gather(int* __restrict__ head, const int* __restrict__ nxt, const T* __restrict__ dY, float* __restrict__ dW, int vocab,
                 int D) {
    const int nv = D / VEC;
    const int v0 = blockIdx.x * TPG;
    int h[TPG];
#pragma unroll
    for (int vv = 0; vv < TPG; ++vv) h[vv] = v0 + vv < vocab ? head[v0 + vv] : 0;
    __syncthreads(); // every thread has its heads before they are cleared
    if (threadIdx.x < TPG && v0 + (int)threadIdx.x < vocab) head[v0 + threadIdx.x] = 0;
#pragma unroll
    for (int vv = 0; vv < TPG; ++vv) {
        const int id = v0 + vv;
        if (id >= vocab) return;
        float* w = dW + (size_t)id * D;
        for (int i = threadIdx.x; i < nv; i += WG) {
            float f[VEC];
#pragma unroll
            for (int k = 0; k < VEC; ++k) f[k] = 0.f;
            for (int j = h[vv]; j != 0; j = nxt[j - 1]) {
                const VecT v = ((const VecT*)(dY + (size_t)(j - 1) * D))[i];
#pragma unroll
                for (int k = 0; k < VEC; ++k) f[k] += to_f32(v.v[k]);
            }
            if constexpr (VEC % 4 == 0) {
#pragma unroll
                for (int k = 0; k < VEC; k += 4)
                    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(w + i * VEC + k), "f"(f[k]), "f"(f[k + 1]),
                                 "f"(f[k + 2]), "f"(f[k + 3])
                                 : "memory");
            } else {
#pragma unroll
                for (int k = 0; k < VEC; ++k) w[i * VEC + k] = f[k];
            }
        }
    }
}
