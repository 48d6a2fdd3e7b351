// Test-only kernels for the crash and timeout isolation tests (family
// test_cuda_fault, registered by the cuda package's tests). Never used by a
// real family.
#include "mltop_common.cuh"

// test_fill writes X[i] = i: the control that must pass.
extern "C" __global__ void test_fill(float* X, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) X[i] = (float)i;
}

// test_oob writes a terabyte past the buffer: an illegal address that
// poisons the CUDA context for good.
extern "C" __global__ void test_oob(float* X, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) X[i + (1ll << 38)] = (float)i;
}

// test_hang spins until X[0] holds a value nothing ever writes.
extern "C" __global__ void test_hang(float* X, int n) {
    volatile float* v = X;
    while (v[0] != 12345.0f) {
        __nanosleep(1000);
    }
    if (threadIdx.x < n) X[threadIdx.x] = 0.f;
}
