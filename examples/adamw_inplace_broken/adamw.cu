// One AdamW step over a flat parameter tensor, updated in place.
#include <cuda_runtime.h>

__device__ inline float lerp_f(float a, float b, float w) { return fmaf(w, b, fmaf(-w, a, a)); }

extern "C" __global__ void adamw_step(float* params, const float* grads, float* m, float* v, int count,
                                      float lr, float beta1, float beta2, float eps, float weight_decay, int t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float g = grads[i];
    float mi = lerp_f(g, m[i], beta1);        // beta1*m + (1-beta1)*g
    float vi = lerp_f(g * g, v[i], beta2);    // beta2*v + (1-beta2)*g^2
    m[i] = mi;
    v[i] = vi;
    float mhat = mi / (1.0f - powf(beta1, (float)t));
    float vhat = vi;  // broken: no bias correction of v
    float p = params[i];
    params[i] = p - lr * (mhat / (sqrtf(vhat) + eps) + weight_decay * p);
}
