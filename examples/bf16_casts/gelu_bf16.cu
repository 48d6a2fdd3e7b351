// GELU (tanh form) over bf16 activations, written against the toolkit's
// bf16 type: reads with (float)x, writes with __float2bfloat16, and a
// packed __nv_bfloat162 path for pairs.
#include <cuda_bf16.h>

#define GELU_SCALE 0.7978845608028654f // sqrt(2 / pi)

__device__ __forceinline__ float gelu(float x) {
    float cube = 0.044715f * x * x * x;
    return 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + cube)));
}

// Each thread handles one pair of elements; n is even.
__global__ void gelu_forward_bf16(__nv_bfloat16* out, const __nv_bfloat16* inp, int n) {
    int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) {
        return;
    }
    __nv_bfloat162 pair = *reinterpret_cast<const __nv_bfloat162*>(inp + i);
    float a = (float)pair.x;
    float b = __bfloat162float(pair.y);
    out[i] = __float2bfloat16(gelu(a));
    out[i + 1] = __float2bfloat16(gelu(b));
}
