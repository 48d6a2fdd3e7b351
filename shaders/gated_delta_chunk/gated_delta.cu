// gated_delta_chunk: the inter-chunk state recurrence of the gated delta
// rule (see the plan contract and the math in kernels/gated_delta.go). A
// block owns BV rows of the f32 state S of one (batch, head), kept in
// S_smem for all chunks. Per chunk of BT steps:
//   1. snapshot S → h_out (bf16)
//   2. stage the chunk's w rows in wk_smem; Vn = u − S·w (one output per
//      thread and step, K-long dot over shared memory); v_new = bf16(Vn);
//      gate Vn by exp(g_last − g_t) in f32, then round it to bf16 (the
//      round trip after the gate) into vn_smem
//   3. stage the chunk's k rows in wk_smem; S = S·exp(g_last) + Σ_t Vn_t ⊗ k_t
// Storage is bf16 (DTYPE 2); all math f32. Plain FMA loops: this kernel
// has no tensor-core path.
#include "mltop_common.cuh"

#ifndef BT
#define BT 64
#endif
#ifndef BV
#define BV 32
#endif
#ifndef K
#define K 128
#endif
#ifndef WG
#define WG 128
#endif
#define SLD (K + 1) // S_smem row stride (floats)
#define WLD (K + 2) // wk_smem row stride (bf16 elements): one extra word per row
#define LOG2E 1.4426950408889634f

static_assert(DTYPE == 2, "gated_delta_chunk stores bf16 only");
static_assert(WG % 32 == 0, "WG must be whole warps");

extern "C" __global__ void __launch_bounds__(WG)
gated_delta_chunk(const T* __restrict__ kin, const T* __restrict__ w, const T* __restrict__ u, const float* __restrict__ g,
                  const float* __restrict__ h0, T* __restrict__ h_out, T* __restrict__ v_new, float* __restrict__ fin,
                  int B, int Tn, int H, int Hg, int V) {
    extern __shared__ __align__(16) unsigned char smem[];
    float* S = (float*)smem;                                        // S_smem  BV×(K+1) f32
    T* wk = (T*)(smem + BV * SLD * 4);                              // wk_smem BT×(K+2) bf16
    float* vn = (float*)(smem + BV * SLD * 4 + BT * WLD * 2);       // vn_smem BT×BV f32
    const int v0 = blockIdx.x * BV, h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
    if (b >= B || h >= H || v0 >= V) return;
    const int nt = Tn / BT;
    const int hk = h / (H / Hg);

    const float* s0 = h0 + (((size_t)b * H + h) * V + v0) * K;
    for (int o = tid; o < BV * K; o += WG) S[(o / K) * SLD + o % K] = s0[o];
    __syncthreads();

    for (int c = 0; c < nt; ++c) {
        const int t0 = c * BT;
        T* snap = h_out + ((((size_t)b * nt + c) * H + h) * V + v0) * K;
        for (int o = tid; o < BV * K; o += WG) snap[o] = from_f32(S[(o / K) * SLD + o % K]);
        // Stage w rows as 32-bit pairs (rows are K·2 bytes, K even).
        for (int i = tid; i < BT * (K / 2); i += WG) {
            const int t = i / (K / 2), kp = i % (K / 2);
            const unsigned* src = (const unsigned*)(w + (((size_t)b * Tn + t0 + t) * H + h) * K);
            ((unsigned*)(wk + t * WLD))[kp] = src[kp];
        }
        __syncthreads();
        const float gl = g[((size_t)b * Tn + t0 + BT - 1) * H + h];
        for (int o = tid; o < BT * BV; o += WG) {
            const int t = o / BV, v = o % BV;
            const T* wr = wk + t * WLD;
            const float* sr = S + v * SLD;
            float acc = 0.f;
#pragma unroll 8
            for (int kk = 0; kk < K; ++kk) acc = fmaf(to_f32(wr[kk]), sr[kk], acc);
            const size_t ui = (((size_t)b * Tn + t0 + t) * H + h) * V + v0 + v;
            const float r = to_f32(u[ui]) - acc;
            v_new[ui] = from_f32(r);
            const float gate = ex2((gl - g[((size_t)b * Tn + t0 + t) * H + h]) * LOG2E);
            vn[t * BV + v] = to_f32(from_f32(r * gate)); // the bf16 round trip, after the gate
        }
        __syncthreads();
        for (int i = tid; i < BT * (K / 2); i += WG) {
            const int t = i / (K / 2), kp = i % (K / 2);
            const unsigned* src = (const unsigned*)(kin + (((size_t)b * Tn + t0 + t) * Hg + hk) * K);
            ((unsigned*)(wk + t * WLD))[kp] = src[kp];
        }
        __syncthreads();
        const float decay = ex2(gl * LOG2E);
        for (int o = tid; o < BV * K; o += WG) {
            const int v = o / K, kk = o % K;
            float acc = S[v * SLD + kk] * decay;
#pragma unroll 8
            for (int t = 0; t < BT; ++t) acc = fmaf(vn[t * BV + v], to_f32(wk[t * WLD + kk]), acc);
            S[v * SLD + kk] = acc;
        }
        __syncthreads();
    }
    float* fo = fin + (((size_t)b * H + h) * V + v0) * K;
    for (int o = tid; o < BV * K; o += WG) fo[o] = S[(o / K) * SLD + o % K];
}
