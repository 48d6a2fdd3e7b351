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
