// attn_bwd_cast: dK, dV = the f32 atomic scratch rounded to the storage
// type (the last dispatch of attn_bwd_atomic). 256 threads per group, one
// element of each per thread.
#include "mltop_common.cuh"

extern "C" __global__ void __launch_bounds__(256)
attn_bwd_cast(const float* __restrict__ dKa, const float* __restrict__ dVa,
              T* __restrict__ dK, T* __restrict__ dV, int n) {
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n) {
        dK[i] = from_f32(dKa[i]);
        dV[i] = from_f32(dVa[i]);
    }
}
