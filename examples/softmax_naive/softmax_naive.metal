// Naive row softmax for mltop (examples/softmax_naive): one thread per row,
// three passes (max, sum of exponentials, write) in f32. mltop defines T
// (float, half or bfloat), WG, rows, cols as macros and binds X, Y, then
// the scalars as one struct at the next buffer index.
#include <metal_stdlib>
using namespace metal;

struct NaiveParams {
    int n_rows;
    int n_cols;
};

[[kernel]] void softmax_naive(device const T* X [[buffer(0)]],
                              device T* Y [[buffer(1)]],
                              constant NaiveParams& p [[buffer(2)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_position_in_threadgroup]]) {
    const long row = (long)group * WG + tid;
    if (row >= p.n_rows) return;
    const int n = p.n_cols;
    device const T* x = X + row * n;
    device T* y = Y + row * n;
    float m = float(x[0]);
    for (int c = 1; c < n; ++c) m = max(m, float(x[c]));
    float s = 0.0f;
    for (int c = 0; c < n; ++c) s += exp(float(x[c]) - m);
    const float inv = 1.0f / s;
    for (int c = 0; c < n; ++c) y[c] = T(exp(float(x[c]) - m) * inv);
}
