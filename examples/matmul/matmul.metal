// Tiled matmul for mltop (examples/matmul), Metal. Macros: T, BM, BN, BK, WG.
// Buffers A, B, C, then the scalars (m, n, k) as one struct at index 3.
#include <metal_stdlib>
using namespace metal;

#define TY (WG / BN)
#define RPT (BM * BN / WG)

struct MatmulParams {
    int m;
    int n;
    int k;
};

[[kernel]] void matmul_tiled(device const T* A [[buffer(0)]],
                             device const T* B [[buffer(1)]],
                             device T* C [[buffer(2)]],
                             constant MatmulParams& p [[buffer(3)]],
                             uint3 tg [[threadgroup_position_in_grid]],
                             uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float As[BM][BK];
    threadgroup float Bs[BK][BN];
    const int m = p.m, n = p.n, k = p.k;
    const int tx = tid % BN, ty = tid / BN;
    const int row0 = tg.y * BM, col0 = tg.x * BN;
    float acc[RPT];
    for (int r = 0; r < RPT; r++) acc[r] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += BK) {
        for (int i = tid; i < BM * BK; i += WG) {
            const int r = i / BK, c = i % BK, gr = row0 + r, gc = k0 + c;
            As[r][c] = (gr < m && gc < k) ? float(A[(ulong)gr * k + gc]) : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += WG) {
            const int r = i / BN, c = i % BN, gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < k && gc < n) ? float(B[(ulong)gr * n + gc]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int kk = 0; kk < BK; kk++) {
            const float b = Bs[kk][tx];
            for (int r = 0; r < RPT; r++) acc[r] += As[ty + r * TY][kk] * b;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (int r = 0; r < RPT; r++) {
        const int gr = row0 + ty + r * TY, gc = col0 + tx;
        if (gr < m && gc < n) C[(ulong)gr * n + gc] = T(acc[r]);
    }
}
