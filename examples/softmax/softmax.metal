// Row softmax for mltop (examples/softmax): one threadgroup of WG threads
// per row. mltop defines T (float, half or bfloat), WG, rows, cols as macros
// and binds X, Y, then the scalars as one struct at the next buffer index.
#include <metal_stdlib>
using namespace metal;

struct SoftmaxParams {
    int n_rows;
    int n_cols;
};

[[kernel]] void softmax_rows(device const T* X [[buffer(0)]],
                             device T* Y [[buffer(1)]],
                             constant SoftmaxParams& p [[buffer(2)]],
                             uint row [[threadgroup_position_in_grid]],
                             uint tid [[thread_position_in_threadgroup]],
                             ushort sg [[simdgroup_index_in_threadgroup]],
                             ushort lane [[thread_index_in_simdgroup]]) {
    threadgroup float red[WG / 32];
    const int n = p.n_cols;
    device const T* x = X + (ulong)row * n;
    device T* y = Y + (ulong)row * n;

    float m = -INFINITY;
    for (int c = tid; c < n; c += WG) m = max(m, float(x[c]));
    m = simd_max(m);
    if (lane == 0) red[sg] = m;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    m = lane < WG / 32 ? red[lane] : -INFINITY;
    m = simd_max(m);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    float s = 0.0f;
    for (int c = tid; c < n; c += WG) s += exp(float(x[c]) - m);
    s = simd_sum(s);
    if (lane == 0) red[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = lane < WG / 32 ? red[lane] : 0.0f;
    s = simd_sum(s);

    const float inv = 1.0f / s;
    for (int c = tid; c < n; c += WG) y[c] = T(exp(float(x[c]) - m) * inv);
}
