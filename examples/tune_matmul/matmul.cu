// A register-tiled GEMM, C[M,N] = A[M,K]·B[K,N] (row-major), written as a
// template over its six tuning knobs so that each configuration is one
// instantiation: examples/tune_matmul/kernel.yaml names it by its C++ name,
// table_demo.cu dispatches to the instantiation a tuning table selects.
//
//   BM, BN  rows and columns of C per block
//   BK      depth of A and B staged in shared memory per step
//   TM, TN  rows and columns of C per thread (registers): the block has
//           (BM / TM) · (BN / TN) threads
//   PAD     floats added to each shared-memory row: the A tile is stored
//           transposed, and a pad moves the columns of that store off one bank
//
// T is float, __half or __nv_bfloat16; products are summed in float. Any
// m, n, k works: loads outside A or B read zeros, stores outside C are
// skipped. The sizes are arguments, not the manifest's dims M, N, K, so one
// compiled configuration serves every shape.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T, int BM, int BN, int BK, int TM, int TN, int PAD>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
matmul5(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int m, int n, int k) {
    static_assert(BM % TM == 0 && BN % TN == 0, "a thread tile must divide the block tile");
    constexpr int COLS = BN / TN;          // threads across the block tile
    constexpr int THREADS = (BM / TM) * COLS;
    __shared__ float As[BK][BM + PAD];     // transposed: a thread's TM rows are adjacent
    __shared__ float Bs[BK][BN + PAD];

    const int tid = threadIdx.x;
    const int tx = tid % COLS, ty = tid / COLS;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++) {
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    }

    for (int k0 = 0; k0 < k; k0 += BK) {
        // Consecutive threads read consecutive elements of a row of A and of B.
        for (int i = tid; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK, gr = row0 + r, gc = k0 + c;
            As[c][r] = (gr < m && gc < k) ? (float)A[(size_t)gr * k + gc] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN, gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < k && gc < n) ? (float)B[(size_t)gr * n + gc] : 0.0f;
        }
        __syncthreads();
        // Not unrolled over kk: each configuration compiles quickly.
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++) {
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int gr = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int gc = col0 + tx * TN + j;
            if (gr < m && gc < n) C[(size_t)gr * n + gc] = T(acc[i][j]);
        }
    }
}
