// cross_entropy: fused softmax cross entropy forward and backward, one
// block of WG threads per row (see the plan contract in
// kernels/cross_entropy.go). Pass 1 keeps an online (max, Σ2^x) per thread
// in the log2 domain over VEC-wide loads, merges it per warp by shuffles
// and across warps through red_smem; pass 2 writes dX = 2^(x·log2e − lse2)
// − [j = target]. The first CACHE vectors of each thread stay in registers
// between the passes; the rest of a long row is re-read, last-read first so
// that it is still in L2, and dX is stored with the evict-first hint. Pad
// rows get zeros.
//
// CL ≥ 1 (sm_90 for CL > 1): the row is split over CL blocks, a thread-block
// cluster; each copies its share of the row into dynamic shared memory by
// cp.async (one read of global memory), takes its max and then Σ2^(x−max)
// from there, merges the block's pair, exchanges the CL pairs over
// distributed shared memory, and writes its share of dX from shared memory.
#include "mltop_common.cuh"

#ifndef WG
#define WG 512
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef CL
#define CL 0
#endif
#define NW (WG / 32)
// Vectors per thread kept in registers between the passes (about 32
// floats; fewer at 1024 threads, where a thread has at most 64 registers).
#define CACHE ((WG >= 1024 ? 24 : 32) / VEC)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(VEC * sizeof(T) <= 16, "VEC elements must fit one 16-byte access");

__device__ __forceinline__ float lg2(float x) {
    float y;
    asm("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// merge combines two online (max, sum) pairs; an empty pair has max -inf.
__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
    const float nm = fmaxf(m, om);
    if (nm == -MLTOP_INF) return;
    s = (m == -MLTOP_INF ? 0.f : s * ex2(m - nm)) + (om == -MLTOP_INF ? 0.f : os * ex2(om - nm));
    m = nm;
}

// block_merge leaves every thread of the block with the merge of all its
// threads' (m, s) pairs: shuffles within each warp, then red (2·NW floats)
// across the warps.
__device__ __forceinline__ void block_merge(float& m, float& s, float* red, int warp, int lane) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float om = __shfl_xor_sync(0xffffffffu, m, o);
        const float os = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, om, os);
    }
    if (lane == 0) {
        red[warp] = m;
        red[NW + warp] = s;
    }
    __syncthreads();
    m = red[0];
    s = red[NW];
#pragma unroll
    for (int i = 1; i < NW; ++i) merge(m, s, red[i], red[NW + i]);
}

// accumulate folds one vector (scaled to log2 units) into (m, s).
__device__ __forceinline__ void accumulate(float& m, float& s, const float (&f)[VEC]) {
    float cm = f[0] * LOG2E;
#pragma unroll
    for (int k = 1; k < VEC; ++k) cm = fmaxf(cm, f[k] * LOG2E);
    float cs = 0.f;
#pragma unroll
    for (int k = 0; k < VEC; ++k) cs += ex2(fmaf(f[k], LOG2E, -cm));
    merge(m, s, cm, cs);
}

#if CL == 0
// write_grad stores dX of vector i: softmax minus the one-hot of the target.
__device__ __forceinline__ void write_grad(T* dx, int i, const float (&f)[VEC], float lse2, int target) {
    float g[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        g[k] = ex2(fmaf(f[k], LOG2E, -lse2));
        if (i * VEC + k == target) g[k] -= 1.f;
    }
    store_vec_cs(dx + (size_t)i * VEC, g);
}

extern "C" __global__ void __launch_bounds__(WG)
cross_entropy(const T* __restrict__ logits, const int* __restrict__ targets, float* __restrict__ loss,
              T* __restrict__ dlogits, int rows, int vocab, int pad_id) {
    __shared__ float red_smem[2 * NW];
    const int row = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (row >= rows) return;
    const T* x = logits + (size_t)row * vocab;
    T* dx = dlogits + (size_t)row * vocab;
    const int target = targets[row];
    const int nv = vocab / VEC;
    if (target == pad_id) { // the whole block takes this branch
        float z[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) z[k] = 0.f;
        for (int i = tid; i < nv; i += WG) store_vec(dx + (size_t)i * VEC, z);
        if (tid == 0) loss[row] = 0.f;
        return;
    }
    float m = -MLTOP_INF, s = 0.f;
    float keep[CACHE][VEC];
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * WG;
        if (i < nv) {
            load_vec(x + (size_t)i * VEC, keep[j]);
            accumulate(m, s, keep[j]);
        }
    }
    for (int i = tid + CACHE * WG; i < nv; i += WG) {
        float f[VEC];
        load_vec(x + (size_t)i * VEC, f);
        accumulate(m, s, f);
    }
    block_merge(m, s, red_smem, warp, lane);
    const float lse2 = m + lg2(s);
    if (tid == 0) loss[row] = lse2 * LN2 - to_f32(x[target]);
#pragma unroll
    for (int j = 0; j < CACHE; ++j) {
        const int i = tid + j * WG;
        if (i < nv) write_grad(dx, i, keep[j], lse2, target);
    }
    // The re-read runs backwards: the vectors read last in pass 1 come first.
    if (tid + CACHE * WG < nv) {
        for (int i = tid + CACHE * WG + (nv - 1 - tid - CACHE * WG) / WG * WG; i >= CACHE * WG; i -= WG) {
            float f[VEC];
            load_vec(x + (size_t)i * VEC, f);
            write_grad(dx, i, f, lse2, target);
        }
    }
}
// CL >= 1: the row split over a cluster of CL blocks, staged in shared memory.
#else
static_assert(CL == 1 || CL == 2 || CL == 4 || CL == 8, "CL must be 1, 2, 4 or 8");
static_assert(VEC * sizeof(T) >= 4, "cp.async moves at least 4 bytes: raise VEC");
typedef VecN<VEC> VecT;

#if CL > 1
// barrier.cluster: arrive releases and wait acquires by default.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
// peer_f32 reads the f32 at p in the shared memory of cluster block rank.
__device__ __forceinline__ float peer_f32(const float* p, unsigned rank) {
    unsigned a;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(smem_addr(p)), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}
#define CLUSTER_ATTR __cluster_dims__(CL, 1, 1)
#else
#define CLUSTER_ATTR
#endif

extern "C" __global__ void CLUSTER_ATTR __launch_bounds__(WG)
cross_entropy(const T* __restrict__ logits, const int* __restrict__ targets, float* __restrict__ loss,
              T* __restrict__ dlogits, int rows, int vocab, int pad_id) {
    extern __shared__ __align__(16) unsigned char chunk_raw[];
    const VecT* chunk = (const VecT*)chunk_raw;
    __shared__ float red_smem[2 * NW];
#if CL > 1
    __shared__ float xch_smem[2]; // this block's (max, sum), read by the cluster
#endif
    const int row = blockIdx.x / CL, part = blockIdx.x % CL;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (row >= rows) return; // whole clusters: rows·CL blocks exactly
    const int nv = vocab / VEC, per = (nv + CL - 1) / CL;
    const int v0 = part * per, n = max(0, min(per, nv - v0)); // this block's vectors
    const T* x = logits + (size_t)row * vocab;
    T* dx = dlogits + (size_t)row * vocab + (size_t)v0 * VEC;
    const int target = targets[row];
    if (target == pad_id) { // the whole cluster takes this branch
        float z[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) z[k] = 0.f;
        for (int i = tid; i < n; i += WG) store_vec_cs(dx + (size_t)i * VEC, z);
        if (part == 0 && tid == 0) loss[row] = 0.f;
        return;
    }
    const VecT* src = (const VecT*)(x + (size_t)v0 * VEC);
    for (int i = tid; i < n; i += WG) copy_async<VEC * sizeof(T)>((void*)(chunk + i), src + i);
    async_commit();
    async_wait<0>(); // each thread reads back only the vectors it copied
    float m = -MLTOP_INF;
    for (int i = tid; i < n; i += WG) {
        const VecT v = chunk[i];
#pragma unroll
        for (int k = 0; k < VEC; ++k) m = fmaxf(m, to_f32(v.v[k]));
    }
    m *= LOG2E;
    float s = 0.f;
    if (m != -MLTOP_INF) {
        for (int i = tid; i < n; i += WG) {
            const VecT v = chunk[i];
#pragma unroll
            for (int k = 0; k < VEC; ++k) s += ex2(fmaf(to_f32(v.v[k]), LOG2E, -m));
        }
    }
    block_merge(m, s, red_smem, warp, lane);
#if CL > 1
    if (tid == 0) {
        xch_smem[0] = m;
        xch_smem[1] = s;
    }
    cluster_arrive();
    cluster_wait(); // every block's pair is published
    m = -MLTOP_INF;
    s = 0.f;
#pragma unroll
    for (int r = 0; r < CL; ++r) merge(m, s, peer_f32(&xch_smem[0], r), peer_f32(&xch_smem[1], r));
    cluster_arrive(); // this block is done reading its peers; waited on before exit
#endif
    const float lse2 = m + lg2(s);
    if (part == 0 && tid == 0) loss[row] = lse2 * LN2 - to_f32(x[target]);
    const int tl = target - v0 * VEC; // the target's place in this block's share
    for (int i = tid; i < n; i += WG) {
        const VecT v = chunk[i];
        float g[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            g[k] = ex2(fmaf(to_f32(v.v[k]), LOG2E, -lse2));
            if (i * VEC + k == tl) g[k] -= 1.f;
        }
        store_vec_cs(dx + (size_t)i * VEC, g);
    }
#if CL > 1
    cluster_wait(); // no block leaves while a peer may still read its pair
#endif
}
#endif
