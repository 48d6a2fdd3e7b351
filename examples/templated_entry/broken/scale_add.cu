// BROKEN twin of ../scale_add.cu (mltop expects mismatch): out = alpha * x + b, VEC consecutive elements per thread: a templated
// kernel the manifest instantiates per dtype through its entry,
// `scale_add<T, VEC>` (T becomes float, __half or __nv_bfloat16).
// Nothing here is written for mltop: no extern "C", no macros.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T, int VEC>
__global__ void scale_add(T* out, const T* x, const T* b, float alpha, size_t n) {
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
        const size_t i = first + v;
        if (i + 1 < n) { // bug: the last element is never written
            out[i] = T(alpha * (float)x[i] + (float)b[i]);
        }
    }
}
