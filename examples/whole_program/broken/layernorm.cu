// Layer normalization forward over (B, T, C) activations, kept the way a
// training code base keeps it: one .cu file with the kernel, a launcher and
// a main() that checks the kernel against a CPU loop.
//   nvcc -O3 layernorm.cu -o layernorm [-DENABLE_BF16]
// mltop compiles only the device code of this file (see kernel.yaml).
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <cuda_runtime.h>

#if defined(ENABLE_BF16)
#include <cuda_bf16.h>
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif

#define CUDA_CHECK(call) do { cudaError_t err_ = (call); if (err_ != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1); } } while (0)

static int verbose = 0;

__device__ inline float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    return v;
}

// One warp per (b, t) row: the row's mean and reciprocal standard
// deviation, then the normalized row, scaled and shifted per channel.
__global__ void layernorm_forward_kernel(floatX* out, float* mean, float* rstd,
                                         const floatX* inp, const floatX* weight, const floatX* bias,
                                         int B, int T, int C) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= B * T) {
        return;
    }
    const floatX* x = inp + (size_t)row * C;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) {
        sum += (float)x[i];
    }
    float m = warp_sum(sum) / C;
    float var = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float d = (float)x[i];
        var += d * d;
    }
    float s = rsqrtf(warp_sum(var) / C + 1e-5f);
    floatX* o = out + (size_t)row * C;
    for (int i = lane; i < C; i += 32) {
        float n = ((float)x[i] - m) * s;
        o[i] = (floatX)(n * (float)weight[i] + (float)bias[i]);
    }
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

void layernorm_forward(floatX* out, float* mean, float* rstd, const floatX* inp,
                       const floatX* weight, const floatX* bias, int B, int T, int C) {
    const int block_size = 256;
    const int rows_per_block = block_size / 32;
    const int grid_size = (B * T + rows_per_block - 1) / rows_per_block;
    layernorm_forward_kernel<<<grid_size, block_size>>>(out, mean, rstd, inp, weight, bias, B, T, C);
    CUDA_CHECK(cudaGetLastError());
}

template <typename Tv>
static void fill_uniform(Tv* h, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h[i] = (Tv)((float)rand() / RAND_MAX * 2.0f - 1.0f);
    }
}

int main(int argc, char** argv) {
    int B = 8, T = 1024, C = 768;
    size_t n = (size_t)B * T * C;
    floatX *h_inp = (floatX*)malloc(n * sizeof(floatX)), *h_out = (floatX*)malloc(n * sizeof(floatX));
    floatX *h_w = (floatX*)malloc(C * sizeof(floatX)), *h_b = (floatX*)malloc(C * sizeof(floatX));
    fill_uniform(h_inp, n);
    fill_uniform(h_w, C);
    fill_uniform(h_b, C);
    floatX *d_inp, *d_out, *d_w, *d_b;
    float *d_mean, *d_rstd;
    CUDA_CHECK(cudaMalloc(&d_inp, n * sizeof(floatX)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(floatX)));
    CUDA_CHECK(cudaMalloc(&d_w, C * sizeof(floatX)));
    CUDA_CHECK(cudaMalloc(&d_b, C * sizeof(floatX)));
    CUDA_CHECK(cudaMalloc(&d_mean, B * T * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_rstd, B * T * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_inp, h_inp, n * sizeof(floatX), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, h_w, C * sizeof(floatX), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, C * sizeof(floatX), cudaMemcpyHostToDevice));
    layernorm_forward(d_out, d_mean, d_rstd, d_inp, d_w, d_b, B, T, C);
    CUDA_CHECK(cudaMemcpy(h_out, d_out, n * sizeof(floatX), cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (int r = 0; r < B * T; r++) {
        const floatX* x = h_inp + (size_t)r * C;
        double m = 0.0, v = 0.0;
        for (int i = 0; i < C; i++) m += (float)x[i];
        m /= C;
        for (int i = 0; i < C; i++) v += ((float)x[i] - m) * ((float)x[i] - m);
        double s = 1.0 / sqrt(v / C + 1e-5);
        for (int i = 0; i < C; i++) {
            double want = ((float)x[i] - m) * s * (float)h_w[i] + (float)h_b[i];
            worst = fmax(worst, fabs(want - (float)h_out[(size_t)r * C + i]));
        }
    }
    printf("max abs error %g\n", worst);
    if (verbose) {
        printf("B=%d T=%d C=%d\n", B, T, C);
    }
    cudaFree(d_inp); cudaFree(d_out); cudaFree(d_w); cudaFree(d_b); cudaFree(d_mean); cudaFree(d_rstd);
    free(h_inp); free(h_out); free(h_w); free(h_b);
    return worst < 1e-2 ? 0 : 1;
}
