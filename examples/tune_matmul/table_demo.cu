// Uses a tuning table the way an application does: for each shape it asks
// the header mltop tune wrote for the best configuration of matmul5,
// launches that template instantiation, checks C against a float64-summed
// reference GEMM on the GPU, and prints the configuration, the time and
// the error. The shapes are the table's own (where select_config must
// return the entry of that shape) and a few that are in no table (the
// nearest entry's configuration, at sizes no tile divides).
//
//   mltop tune ./examples/tune_matmul --dtype f32 --shapes "M=512,N=512,K=512;…" --header out/user_matmul5_tune.h
//   nvcc -O3 -std=c++17 -arch=native -I out -I examples/tune_matmul -o table_demo examples/tune_matmul/table_demo.cu
//   ./table_demo
//
// Exit status: 0 every shape verified; 1 a wrong result, a configuration
// the dispatch does not know, or a CUDA error. scripts/tune-header-gpu.sh
// does all of it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "matmul.cu"
#include "user_matmul5_tune.h"

#define CUDA_OK(call)                                                                       \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorString(err_));                                         \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

typedef void (*launcher)(const float*, const float*, float*, int, int, int);

template <int BM, int BN, int BK, int TM, int TN, int PAD>
static void launch(const float* A, const float* B, float* C, int m, int n, int k) {
    const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
    matmul5<float, BM, BN, BK, TM, TN, PAD><<<grid, (BM / TM) * (BN / TN)>>>(A, B, C, m, n, k);
}

// find_launcher is the instantiation of the configuration select_config
// returned: user_matmul5_FOR_EACH_CONFIG lists every configuration of the
// table (in the manifest's knob order), so each has its launcher here.
static launcher find_launcher(user_matmul5_config c) {
#define MATMUL5_LAUNCHER(bm, bn, bk, tm, tn, pad)                                                   \
    if (c.BM == bm && c.BN == bn && c.BK == bk && c.TM == tm && c.TN == tn && c.PAD == pad) \
        return &launch<bm, bn, bk, tm, tn, pad>;
    user_matmul5_FOR_EACH_CONFIG(MATMUL5_LAUNCHER)
#undef MATMUL5_LAUNCHER
    return nullptr;
}

// reference_gemm sums each element of A·B in double, with the sum of the
// squared products: the rounding bound of a float sum of k terms grows
// with sqrt(k) times their magnitude.
__global__ void reference_gemm(const float* A, const float* B, double* want, double* norm, int m, int n, int k) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (col >= n || row >= m) return;
    double sum = 0, sq = 0;
    for (int i = 0; i < k; i++) {
        const double p = (double)A[(size_t)row * k + i] * (double)B[(size_t)i * n + col];
        sum += p;
        sq += p * p;
    }
    want[(size_t)row * n + col] = sum;
    norm[(size_t)row * n + col] = sqrt(sq);
}

struct shape { long long m, n, k; bool in_table; };

// uniform(-1, 1) from a fixed LCG: the same inputs every run.
static void fill(std::vector<float>& v, unsigned seed) {
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = (float)((seed >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    }
}

static bool same_config(user_matmul5_config a, user_matmul5_config b) {
    return a.BM == b.BM && a.BN == b.BN && a.BK == b.BK && a.TM == b.TM && a.TN == b.TN && a.PAD == b.PAD;
}

// run_shape selects, launches, times and checks one shape; false on a
// failure (printed).
static bool run_shape(const shape& s, int index) {
    const int m = (int)s.m, n = (int)s.n, k = (int)s.k;
    const user_matmul5_config c = user_matmul5_select_config(MLTOP_F32, s.m, s.n, s.k);
    std::printf("%-6s M=%-6d N=%-6d K=%-6d BM=%-3d BN=%-3d BK=%-2d TM=%-2d TN=%-2d PAD=%d  ", s.in_table ? "table" : "near",
                m, n, k, c.BM, c.BN, c.BK, c.TM, c.TN, c.PAD);
    if (s.in_table && !same_config(c, user_matmul5_table[index].config)) {
        std::printf("FAIL: not the configuration of this shape's own table entry\n");
        return false;
    }
    const launcher run = find_launcher(c);
    if (!run) {
        std::printf("FAIL: no instantiation of this configuration in user_matmul5_FOR_EACH_CONFIG\n");
        return false;
    }
    std::vector<float> a((size_t)m * k), b((size_t)k * n), got((size_t)m * n);
    std::vector<double> want(got.size()), norm(got.size());
    fill(a, 1u + index);
    fill(b, 1000u + index);
    float *dA, *dB, *dC;
    double *dWant, *dNorm;
    CUDA_OK(cudaMalloc(&dA, a.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dB, b.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dC, got.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&dWant, want.size() * sizeof(double)));
    CUDA_OK(cudaMalloc(&dNorm, norm.size() * sizeof(double)));
    CUDA_OK(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dC, 0xff, got.size() * sizeof(float))); // NaN: an element never written fails

    run(dA, dB, dC, m, n, k); // warm-up, and the result checked below
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got.data(), dC, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const int reps = 10;
    cudaEvent_t start, stop;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    CUDA_OK(cudaEventRecord(start));
    for (int r = 0; r < reps; r++) run(dA, dB, dC, m, n, k);
    CUDA_OK(cudaEventRecord(stop));
    CUDA_OK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
    const double us = 1e3 * ms / reps;

    reference_gemm<<<dim3((n + 127) / 128, m), 128>>>(dA, dB, dWant, dNorm, m, n, k);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(want.data(), dWant, want.size() * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(norm.data(), dNorm, norm.size() * sizeof(double), cudaMemcpyDeviceToHost));
    const double eps = std::ldexp(1.0, -24);
    double max_err = 0, worst = 0; // worst: the largest error as a share of its bound
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); i++) {
        const double err = std::fabs((double)got[i] - want[i]);
        const double bound = 1e-6 + 4 * eps * std::sqrt((double)k) * (std::fabs(want[i]) + norm[i]);
        if (!(err <= bound)) bad++; // NaN counts
        if (err > max_err || err != err) max_err = err;
        if (err / bound > worst || err != err) worst = err / bound;
    }
    CUDA_OK(cudaFree(dA));
    CUDA_OK(cudaFree(dB));
    CUDA_OK(cudaFree(dC));
    CUDA_OK(cudaFree(dWant));
    CUDA_OK(cudaFree(dNorm));
    CUDA_OK(cudaEventDestroy(start));
    CUDA_OK(cudaEventDestroy(stop));
    std::printf("%9.1f us %6.2f TFLOP/s  max err %.2e (%.3f of bound)  %s\n", us, 2.0 * m * n * k / us * 1e-6, max_err,
                worst, bad ? "FAIL" : "ok");
    if (bad) std::printf("       %zu of %zu elements beyond the bound\n", bad, got.size());
    return bad == 0;
}

int main() {
    std::vector<shape> shapes;
    const int entries = (int)(sizeof user_matmul5_table / sizeof user_matmul5_table[0]);
    for (int i = 0; i < entries; i++) {
        const user_matmul5_entry& e = user_matmul5_table[i];
        if (e.dtype == MLTOP_F32) shapes.push_back({e.dims[0], e.dims[1], e.dims[2], true});
    }
    if (shapes.empty()) {
        std::fprintf(stderr, "the tuning table has no f32 entry: tune with --dtype f32\n");
        return 1;
    }
    const int table_shapes = (int)shapes.size();
    // Shapes in no table: sizes no tile divides, a GEMV-like one, one element.
    const shape near[] = {{1000, 3000, 700, false}, {4000, 100, 5000, false}, {777, 1999, 129, false},
                          {1, 4096, 4096, false},   {1, 1, 1, false}};
    for (const shape& s : near) shapes.push_back(s);

    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s: %d table shapes of %d entries, %zu shapes in no table\n", prop.name, table_shapes, entries,
                shapes.size() - table_shapes);
    int failed = 0, table_index = 0;
    for (size_t i = 0; i < shapes.size(); i++) {
        // The index of a table shape's own entry, for the exact-shape check.
        while (shapes[i].in_table && user_matmul5_table[table_index].dtype != MLTOP_F32) table_index++;
        if (!run_shape(shapes[i], shapes[i].in_table ? table_index++ : (int)i)) failed++;
    }
    std::printf("%zu shapes, %d failed\n", shapes.size(), failed);
    return failed ? 1 : 0;
}
