// BROKEN twin of ../rms.cu (mltop expects mismatch). Root mean square of each (b, t) row of a (B, T, C) activation, in the
// style of training code: the kernel takes the sequence length as `int T`
// and uses its own `template <typename T>` helper. The manifest names the
// element type floatX (dtype_name), which leaves T to the source and to
// the dims.
template <typename T>
__device__ T squared(T v) {
    return v * v;
}

__global__ void rms_forward(float* out, const float* inp, int B, int T, int C) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= B * T) {
        return;
    }
    const float* x = inp + (size_t)row * C;
    float sum = 0.0f;
    for (int c = 0; c < C; ++c) {
        sum += squared<float>(x[c]);
    }
    out[row] = sqrtf(sum / (C - 1)); // bug: divides by C - 1
}
