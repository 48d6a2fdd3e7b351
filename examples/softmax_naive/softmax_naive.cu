// Naive row softmax for mltop (examples/softmax_naive): one thread per row,
// three passes (max, sum of exponentials, write) in f32. mltop defines T,
// WG, rows, cols as macros; mltop_user.cuh gives to_f32 and from_f32<T>.
#include "mltop_user.cuh"

extern "C" __global__ void __launch_bounds__(WG)
softmax_naive(const T* __restrict__ X, T* __restrict__ Y, int n_rows, int n_cols) {
    const long long row = (long long)blockIdx.x * WG + threadIdx.x;
    if (row >= n_rows) return;
    const T* x = X + row * n_cols;
    T* y = Y + row * n_cols;
    float m = to_f32(x[0]);
    for (int c = 1; c < n_cols; ++c) m = fmaxf(m, to_f32(x[c]));
    float s = 0.0f;
    for (int c = 0; c < n_cols; ++c) s += expf(to_f32(x[c]) - m);
    const float inv = 1.0f / s;
    for (int c = 0; c < n_cols; ++c) y[c] = from_f32<T>(expf(to_f32(x[c]) - m) * inv);
}
