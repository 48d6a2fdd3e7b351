// rmsnorm_bwd: dX and dW of y = x·r·w, r = 1/sqrt(mean(x²)+eps) (see the
// plan contract in kernels/rmsnorm_bwd.go). A block of WG threads owns RPG
// rows, taken RB at a time; thread t owns the VEC-wide column vectors t,
// t+WG, … (NIT of them) and keeps its W values and dW partials in
// registers across the rows. Per batch: the RB rows' X and dY are loaded
// together, kept raw (16-bit values packed, half the registers of floats),
// and the next batch is loaded before this one's barriers, so two batches
// of loads are in flight; Σx² and Σ dY·w·x of each row are reduced in f32
// (warp shuffles, then red_smem across warps, one pair of barriers for the
// batch), dX is written with VEC-wide stores and dY·x·r added to the
// partials.
// After the rows, one atomic add per column into dW (zeroed by the plan's
// zero_dW dispatch), VEC-wide on sm_90.
//
// ST > 0 (sm_80+): the rows come through a ring of ST row slots ([X | dY],
// 2·D elements each) in dynamic shared memory, filled by cp.async, so ST
// rows' loads are in flight per group without holding registers. Each
// thread copies exactly the column vectors it later reads, so a slot needs
// no barrier between its fill and its use; batch k+ST/RB−1 is issued into
// the slots of batch k−1 (read before that batch's barrier). red_smem is
// double-buffered by batch parity, so each batch pays one barrier.
// There is no zero fill dispatch either: each group takes a ticket from
// sync[0] as it starts (the counter runs on across launches, so launch n
// hands out tickets n·G … n·G+G−1 for a grid of G groups); the group with
// ticket n·G zeroes dW, fences and sets sync[1] = n+1. Every group adds its
// partials only once it has seen that flag, which a group already running
// raises before it waits on anything, so no group waits on one that is
// not scheduled. Nothing needs resetting between launches.
#include "mltop_common.cuh"

#ifndef WG
#define WG 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef RPG
#define RPG 16
#endif
#ifndef RB
#define RB 2
#endif
#ifndef ST
#define ST 0
#endif
#ifndef D
#define D 4096
#endif
#define NW (WG / 32)
#define NIT ((D + WG * VEC - 1) / (WG * VEC))

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(D % VEC == 0, "D must be a multiple of VEC");
static_assert(RPG % RB == 0, "RPG must be a multiple of RB");
static_assert(VEC * sizeof(T) <= 16, "VEC elements must fit one 16-byte access");

typedef VecN<VEC> VecT;  // raw batches: VEC elements, one access

// load_w reads this thread's W vectors (zero past D) and clears its dW
// partials.
__device__ __forceinline__ void load_w(const T* __restrict__ W, int tid, float (&w)[NIT][VEC], float (&acc)[NIT][VEC]) {
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D) {
            load_vec(W + c, w[it]);
        } else {
#pragma unroll
            for (int v = 0; v < VEC; ++v) w[it][v] = 0.f;
        }
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[it][v] = 0.f;
    }
}

// finish_row writes dX of one row, dX = r·w·dY − x·r³·Σ(dY·w·x)/D, from the
// row's Σx² (ss) and Σ dY·w·x (dot), and adds dY·x·r to the dW partials.
__device__ __forceinline__ void finish_row(T* __restrict__ dx, const VecT (&xr)[NIT], const VecT (&gr)[NIT],
                                           const float (&w)[NIT][VEC], float (&acc)[NIT][VEC], float ss, float dot, float eps,
                                           int tid) {
    const float rinv = rsqrtf(ss * (1.0f / D) + eps);
    const float k = rinv * rinv * rinv * (1.0f / D) * dot;
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D) {
            float out[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                const float x = to_f32(xr[it].v[v]), g = to_f32(gr[it].v[v]);
                out[v] = rinv * w[it][v] * g - x * k;
                acc[it][v] = fmaf(g * x, rinv, acc[it][v]);
            }
            store_vec(dx + c, out);
        }
    }
}

#if ST == 0

// load_batch reads the raw vectors of this thread's columns of rows
// rb..rb+RB-1 of X and dY (rows past the group's last repeat it; columns
// past D read as zero).
__device__ __forceinline__ void load_batch(const T* __restrict__ X, const T* __restrict__ dY, int rb, int rlast, int tid,
                                           VecT (&xr)[RB][NIT], VecT (&gr)[RB][NIT]) {
#pragma unroll
    for (int b = 0; b < RB; ++b) {
        const size_t off = (size_t)min(rb + b, rlast) * D;
#pragma unroll
        for (int it = 0; it < NIT; ++it) {
            const int c = (it * WG + tid) * VEC;
            if (c < D) {
                xr[b][it] = *(const VecT*)(X + off + c);
                gr[b][it] = *(const VecT*)(dY + off + c);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) xr[b][it].v[v] = gr[b][it].v[v] = T(0);
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(WG)
rmsnorm_bwd(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ dY, T* __restrict__ dX,
            float* __restrict__ dW, int rows, float eps) {
    __shared__ float red_smem[2 * RB * NW];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float w[NIT][VEC], acc[NIT][VEC];
    load_w(W, tid, w, acc);
    const int r0 = blockIdx.x * RPG;
    const int r1 = min(r0 + RPG, rows);
    VecT xr[RB][NIT], gr[RB][NIT];
    load_batch(X, dY, r0, r1 - 1, tid, xr, gr);
    for (int rb = r0; rb < r1; rb += RB) {
        float ss[RB], dot[RB];
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            ss[b] = 0.f;
            dot[b] = 0.f;
#pragma unroll
            for (int it = 0; it < NIT; ++it) {
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    const float x = to_f32(xr[b][it].v[v]), g = to_f32(gr[b][it].v[v]);
                    ss[b] = fmaf(x, x, ss[b]);
                    dot[b] = fmaf(g * w[it][v], x, dot[b]);
                }
            }
        }
        // The next batch's loads go out before this batch waits on barriers.
        VecT xn[RB][NIT], gn[RB][NIT];
        if (rb + RB < r1) load_batch(X, dY, rb + RB, r1 - 1, tid, xn, gn);
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            ss[b] = warp_sum(ss[b]);
            dot[b] = warp_sum(dot[b]);
        }
        if (lane == 0) {
#pragma unroll
            for (int b = 0; b < RB; ++b) {
                red_smem[(2 * b) * NW + warp] = ss[b];
                red_smem[(2 * b + 1) * NW + warp] = dot[b];
            }
        }
        __syncthreads();
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            ss[b] = 0.f;
            dot[b] = 0.f;
#pragma unroll
            for (int i = 0; i < NW; ++i) {
                ss[b] += red_smem[(2 * b) * NW + i];
                dot[b] += red_smem[(2 * b + 1) * NW + i];
            }
        }
        __syncthreads(); // everyone has read before the next batch overwrites
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            const int r = rb + b;
            if (r >= r1) break; // a ragged last batch (its rows were loaded clamped)
            finish_row(dX + (size_t)r * D, xr[b], gr[b], w, acc, ss[b], dot[b], eps, tid);
        }
#pragma unroll
        for (int b = 0; b < RB; ++b) {
#pragma unroll
            for (int it = 0; it < NIT; ++it) {
                xr[b][it] = xn[b][it];
                gr[b][it] = gn[b][it];
            }
        }
    }
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D && r0 < r1) red_add(dW + c, acc[it]);
    }
}
// ST > 0: the shared-memory ring.
#else

static_assert(ST % RB == 0 && ST >= 2 * RB, "ST must be a multiple of RB and at least 2·RB");
static_assert(VEC * sizeof(T) >= 4, "cp.async moves at least 4 bytes: raise VEC");
#define NB (ST / RB) // batches in the ring

// issue_batch starts the copies of this thread's column vectors of rows
// rb..rb+RB-1 (those below rend) into the ring slots of batch k.
__device__ __forceinline__ void issue_batch(T* ring, const T* __restrict__ X, const T* __restrict__ dY, int k, int rb, int rend,
                                            int tid) {
#pragma unroll
    for (int b = 0; b < RB; ++b) {
        if (rb + b < rend) {
            T* slot = ring + (size_t)((k % NB) * RB + b) * (2 * D);
            const size_t off = (size_t)(rb + b) * D;
#pragma unroll
            for (int it = 0; it < NIT; ++it) {
                const int c = (it * WG + tid) * VEC;
                if (c < D) {
                    copy_async<VEC * sizeof(T)>(slot + c, X + off + c);
                    copy_async<VEC * sizeof(T)>(slot + D + c, dY + off + c);
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(WG)
rmsnorm_bwd(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ dY, T* __restrict__ dX,
            float* __restrict__ dW, int* __restrict__ sync, int rows, float eps) {
    extern __shared__ __align__(16) unsigned char ring_raw[];
    T* ring = (T*)ring_raw;
    __shared__ float red_smem[2][2 * RB * NW];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int r0 = blockIdx.x * RPG;
    const int r1 = min(r0 + RPG, rows);
    const int nb = (r1 - r0 + RB - 1) / RB;
    // The first NB-1 batches go out before anything else.
#pragma unroll
    for (int k = 0; k < NB - 1; ++k) {
        if (k < nb) issue_batch(ring, X, dY, k, r0 + k * RB, r1, tid);
        async_commit();
    }
    // The ticket: the launch's first group zeroes dW and raises the flag.
    __shared__ unsigned ticket_smem;
    if (tid == 0) ticket_smem = atomicAdd((unsigned*)&sync[0], 1u);
    __syncthreads();
    const unsigned gen = ticket_smem / gridDim.x + 1; // the flag value of this launch
    if (ticket_smem % gridDim.x == 0) {
        for (int c = tid; c < D; c += WG) dW[c] = 0.f;
        __threadfence();
        __syncthreads();
        if (tid == 0) asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(sync + 1), "r"(gen) : "memory");
    }
    float w[NIT][VEC], acc[NIT][VEC];
    load_w(W, tid, w, acc);
    for (int k = 0; k < nb; ++k) {
        const int rb = r0 + k * RB;
        if (k + NB - 1 < nb) issue_batch(ring, X, dY, k + NB - 1, rb + (NB - 1) * RB, r1, tid);
        async_commit();
        async_wait<NB - 1>(); // this thread's copies of batch k have landed
        VecT xr[RB][NIT], gr[RB][NIT];
        float ss[RB], dot[RB];
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            const T* slot = ring + (size_t)((k % NB) * RB + b) * (2 * D);
            ss[b] = 0.f;
            dot[b] = 0.f;
#pragma unroll
            for (int it = 0; it < NIT; ++it) {
                const int c = (it * WG + tid) * VEC;
                if (c < D && rb + b < r1) {
                    xr[b][it] = *(const VecT*)(slot + c);
                    gr[b][it] = *(const VecT*)(slot + D + c);
                } else {
#pragma unroll
                    for (int v = 0; v < VEC; ++v) xr[b][it].v[v] = gr[b][it].v[v] = T(0);
                }
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    const float x = to_f32(xr[b][it].v[v]), g = to_f32(gr[b][it].v[v]);
                    ss[b] = fmaf(x, x, ss[b]);
                    dot[b] = fmaf(g * w[it][v], x, dot[b]);
                }
            }
            ss[b] = warp_sum(ss[b]);
            dot[b] = warp_sum(dot[b]);
        }
        float* red = red_smem[k & 1];
        if (lane == 0) {
#pragma unroll
            for (int b = 0; b < RB; ++b) {
                red[(2 * b) * NW + warp] = ss[b];
                red[(2 * b + 1) * NW + warp] = dot[b];
            }
        }
        __syncthreads(); // one barrier per batch: the other parity is written next
#pragma unroll
        for (int b = 0; b < RB; ++b) {
            const int r = rb + b;
            if (r >= r1) break;
            float sb = 0.f, db = 0.f;
#pragma unroll
            for (int i = 0; i < NW; ++i) {
                sb += red[(2 * b) * NW + i];
                db += red[(2 * b + 1) * NW + i];
            }
            finish_row(dX + (size_t)r * D, xr[b], gr[b], w, acc, sb, db, eps, tid);
        }
    }
    // dW: add the partials once this launch's zero fill is visible.
    if (tid == 0) {
        unsigned f;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(f) : "l"(sync + 1) : "memory");
            if (f == gen) break;
            __nanosleep(100);
        }
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < NIT; ++it) {
        const int c = (it * WG + tid) * VEC;
        if (c < D && r0 < r1) red_add(dW + c, acc[it]);
    }
}
#endif
