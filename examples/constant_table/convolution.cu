// Row pass of a separable image convolution, kept as image-processing code
// keeps it: the filter taps live in constant memory, which the host fills
// with cudaMemcpyToSymbol before launching, and main() checks the GPU
// against a CPU loop. mltop compiles this file unchanged: kernel.yaml
// fills c_Kernel through `symbol: true`.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
#define ROW_THREADS 128

__constant__ float c_Kernel[KERNEL_LENGTH];

// One thread per output pixel; pixels beyond the row's ends repeat the
// edge pixel.
__global__ void convolutionRowsKernel(float* d_Dst, const float* d_Src, int imageW, int imageH) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= imageW || y >= imageH) return;
    const float* row = d_Src + (size_t)y * imageW;
    float sum = 0.0f;
#pragma unroll
    for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++) {
        const int xs = min(max(x + k, 0), imageW - 1);
        sum += c_Kernel[KERNEL_RADIUS - k] * row[xs];
    }
    d_Dst[(size_t)y * imageW + x] = sum;
}

void setConvolutionKernel(const float* h_Kernel) {
    cudaMemcpyToSymbol(c_Kernel, h_Kernel, KERNEL_LENGTH * sizeof(float));
}

void convolutionRowsGPU(float* d_Dst, const float* d_Src, int imageW, int imageH) {
    dim3 threads(ROW_THREADS);
    dim3 blocks((imageW + ROW_THREADS - 1) / ROW_THREADS, imageH);
    convolutionRowsKernel<<<blocks, threads>>>(d_Dst, d_Src, imageW, imageH);
}

static void convolutionRowsCPU(float* dst, const float* src, const float* taps, int imageW, int imageH) {
    for (int y = 0; y < imageH; y++) {
        for (int x = 0; x < imageW; x++) {
            double sum = 0;
            for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++) {
                int xs = x + k < 0 ? 0 : (x + k >= imageW ? imageW - 1 : x + k);
                sum += taps[KERNEL_RADIUS - k] * src[y * imageW + xs];
            }
            dst[y * imageW + x] = (float)sum;
        }
    }
}

int main() {
    const int imageW = 3072, imageH = 1024;
    const size_t bytes = (size_t)imageW * imageH * sizeof(float);
    float h_Kernel[KERNEL_LENGTH];
    float* h_Src = (float*)malloc(bytes);
    float* h_Dst = (float*)malloc(bytes);
    float* h_Ref = (float*)malloc(bytes);
    srand(2009);
    for (int i = 0; i < KERNEL_LENGTH; i++) h_Kernel[i] = (float)(rand() % 16) / 16.0f - 0.5f;
    for (int i = 0; i < imageW * imageH; i++) h_Src[i] = (float)(rand() % 16) / 16.0f;
    float *d_Src, *d_Dst;
    cudaMalloc(&d_Src, bytes);
    cudaMalloc(&d_Dst, bytes);
    cudaMemcpy(d_Src, h_Src, bytes, cudaMemcpyHostToDevice);
    setConvolutionKernel(h_Kernel);
    convolutionRowsGPU(d_Dst, d_Src, imageW, imageH);
    cudaMemcpy(h_Dst, d_Dst, bytes, cudaMemcpyDeviceToHost);
    convolutionRowsCPU(h_Ref, h_Src, h_Kernel, imageW, imageH);
    double worst = 0;
    for (int i = 0; i < imageW * imageH; i++) worst = fmax(worst, fabs(h_Dst[i] - h_Ref[i]));
    printf("max |gpu - cpu| = %g\n", worst);
    cudaFree(d_Src);
    cudaFree(d_Dst);
    free(h_Src);
    free(h_Dst);
    free(h_Ref);
    return worst < 1e-4 ? 0 : 1;
}
