// Y[r] = sum of row r of X, read as T (float, __half or __nv_bfloat16),
// summed in float: a strided sum per thread, then a tree in shared memory.
extern "C" __global__ void row_sum(const T* X, float* Y, int rows, int cols) {
    __shared__ float partial[WG];
    int r = blockIdx.x;
    const T* x = X + (size_t)r * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += WG) acc += (float)x[c];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int w = WG / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) Y[r] = partial[0];
}
