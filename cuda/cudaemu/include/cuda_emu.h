// A CPU emulation of the part of CUDA C++ that kernels use, so that a
// kernel's source can be compiled with g++ and its outputs checked against
// the float64 reference on a machine without an NVIDIA GPU (mltop's
// cuda/cudaemu). Every thread of a block is a fiber; the blocks of a
// grid run one after another, so a __shared__ variable is a function
// static (one per block) and `extern __shared__` is the launch's dynamic
// shared memory. The threads of a block are fibers of one OS thread that
// switch where they wait: __syncthreads waits for every thread that has
// not returned (as on the GPU), a warp collective for the lanes its mask
// names that have not returned. The emulation proves indexing, reductions and
// synchronisation logic; not speed, and not the hardware's warp timing.
#pragma once
#if defined(WG) || defined(BM) || defined(BN) || defined(BK) || defined(N)
#error "a knob macro leaked into cuda_emu.h"
#endif
#include <atomic>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>
// CUDA declares the math functions' overloads globally (sqrt(float)…);
// libstdc++'s <math.h> does too, but under C++20 it also brings std::lerp
// and the special functions (beta, legendre…) into the global namespace,
// where a kernel's own `__device__ float lerp(…)` then clashes (llm.c's
// adamw.cu). Its guard is set so that a source's <math.h> adds nothing
// (<cmath> has already declared the C functions globally), and the
// overloads CUDA has are declared here.
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_MATH_H)
#define _GLIBCXX_MATH_H 1
using std::abs; using std::acos; using std::asin; using std::atan; using std::atan2; using std::ceil;
using std::cos; using std::cosh; using std::exp; using std::fabs; using std::floor; using std::fmod;
using std::frexp; using std::ldexp; using std::log; using std::log10; using std::modf; using std::pow;
using std::sin; using std::sinh; using std::sqrt; using std::tan; using std::tanh;
using std::fpclassify; using std::isfinite; using std::isinf; using std::isnan; using std::isnormal;
using std::signbit; using std::isgreater; using std::isgreaterequal; using std::isless;
using std::islessequal; using std::islessgreater; using std::isunordered;
using std::acosh; using std::asinh; using std::atanh; using std::cbrt; using std::copysign; using std::erf;
using std::erfc; using std::exp2; using std::expm1; using std::fdim; using std::fma; using std::fmax;
using std::fmin; using std::hypot; using std::ilogb; using std::lgamma; using std::llrint; using std::llround;
using std::log1p; using std::log2; using std::logb; using std::lrint; using std::lround; using std::nearbyint;
using std::nextafter; using std::nexttoward; using std::remainder; using std::remquo; using std::rint;
using std::round; using std::scalbln; using std::scalbn; using std::tgamma; using std::trunc;
#else
#include <math.h>
#endif
#include <stdio.h>
#include <time.h>
#include <assert.h>

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __CUDACC_RTC__
#define __CUDACC_RTC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 900
#endif
#define __CUDA_EMULATION__ 1
#define CUDART_VERSION 12000
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 0

#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__  // not always_inline: a function passed by pointer (cg::reduce(g, v, op)) could not be
#define __inline_hint__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __grid_constant__
#define __constant__
#define __managed__
// `__shared__ float s[N];` is a static: one per block, as blocks run one
// after another (mltop writes `extern __shared__` as the dynamic memory).
#define __shared__ static
#define __align__(n) alignas(n)
#define __builtin_assume_aligned(p, ...) (p)

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;

// ---- vector types ----------------------------------------------------
#define EMU_VEC1(T, N, A) struct alignas(A) N##1 { T x; };
#define EMU_VEC2(T, N, A) struct alignas(A) N##2 { T x, y; };
#define EMU_VEC3(T, N) struct N##3 { T x, y, z; };
#define EMU_VEC4(T, N, A) struct alignas(A) N##4 { T x, y, z, w; };
#define EMU_VECS(T, N, A1, A2, A4)                                               \
  EMU_VEC1(T, N, A1) EMU_VEC2(T, N, A2) EMU_VEC3(T, N) EMU_VEC4(T, N, A4)        \
  inline N##1 make_##N##1(T x) { return N##1{x}; }                               \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                       \
  inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }               \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
EMU_VECS(char, char, 1, 2, 4)
EMU_VECS(unsigned char, uchar, 1, 2, 4)
EMU_VECS(short, short, 2, 4, 8)
EMU_VECS(unsigned short, ushort, 2, 4, 8)
EMU_VECS(int, int, 4, 8, 16)
EMU_VECS(unsigned int, uint, 4, 8, 16)
EMU_VECS(long, long, 8, 16, 16)
EMU_VECS(unsigned long, ulong, 8, 16, 16)
EMU_VECS(long long, longlong, 8, 16, 16)
EMU_VECS(unsigned long long, ulonglong, 8, 16, 16)
EMU_VECS(float, float, 4, 8, 16)
EMU_VECS(double, double, 8, 16, 16)
#undef EMU_VEC1
#undef EMU_VEC2
#undef EMU_VEC3
#undef EMU_VEC4
#undef EMU_VECS

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---- the launch's geometry -------------------------------------------
// The running thread's (the scheduler sets them at every switch).
inline uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
constexpr int warpSize = 32;

// ---- a block's threads and warps -------------------------------------
// The threads of a block are fibers (ucontext) of one OS thread: each runs
// until it waits (__syncthreads, a warp collective) or returns, then the
// next one in thread order runs. So a run is deterministic, a race that a
// missing __syncthreads leaves shows the same way every time (thread 0
// runs ahead of the others), and a deadlock is found, not waited out.
struct emu_fiber;
// emu_coll is a warp collective of one mask: the lanes that have
// arrived, and each lane's value, by generation parity (a lane of a done
// collective reads it after the others may have gone on to the next).
struct emu_coll {
  unsigned mask = 0;
  unsigned arrived = 0;
  unsigned present[2] = {0, 0};  // lanes that gave a value
  unsigned long gen = 0;
  alignas(16) unsigned char slots[2][32][32];
};
// A warp: its live lanes and its collectives, one per mask (the tiles of
// a thread_block_tile<16> meet apart, at once).
struct emu_warp {
  unsigned alive = 0;  // lanes that have not returned
  int id = 0;
  int ncoll = 0;
  emu_coll coll[32];
};

enum emu_state { emu_ready, emu_at_sync, emu_at_warp, emu_done };

inline std::vector<emu_fiber*> emu_fibers;  // the block's threads
inline std::vector<emu_warp> emu_warps;
inline emu_fiber* emu_cur = nullptr;
inline emu_warp* emu_w = nullptr;
inline int emu_lane = 0;
inline int emu_live = 0;       // threads that have not returned
inline int emu_at_bar = 0;     // threads waiting in __syncthreads
inline int emu_n_true = 0, emu_n_false = 0, emu_r_true = 0, emu_r_false = 0;
// The launch's dynamic shared memory (`extern __shared__`, which mltop
// writes as a pointer to it: at namespace scope too, so a fixed array of
// the most a block may have, 227 KiB), and the bytes the launch asked.
alignas(128) inline unsigned char emu_dyn_smem[227 * 1024];
inline size_t emu_dyn_bytes = 0;

[[noreturn]] inline void emu_fail(const char* what) {
  std::fprintf(stderr, "block (%u,%u,%u) thread (%u,%u,%u): %s\n", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
               threadIdx.y, threadIdx.z, what);
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(3);
}

// emu_wait parks the running thread in state s and runs the others until
// it is ready again (cuda_emu_launch.h).
inline void emu_wait(emu_state s);
inline void emu_release(emu_state s);  // makes every thread waiting in s ready

// emu_sync_arrive counts the caller into __syncthreads and parks it; the
// last live thread to arrive releases them all.
inline void emu_sync_arrive() {
  if (++emu_at_bar == emu_live) {
    emu_at_bar = 0;
    emu_r_true = emu_n_true, emu_r_false = emu_n_false;
    emu_n_true = emu_n_false = 0;
    emu_release(emu_at_sync);
    return;
  }
  emu_wait(emu_at_sync);
}
inline void __syncthreads() { emu_sync_arrive(); }
inline int __syncthreads_count(int pred) {
  (pred ? emu_n_true : emu_n_false)++;
  emu_sync_arrive();
  return emu_r_true;
}
inline int __syncthreads_and(int pred) {
  (pred ? emu_n_true : emu_n_false)++;
  emu_sync_arrive();
  return emu_r_false == 0;
}
inline int __syncthreads_or(int pred) {
  (pred ? emu_n_true : emu_n_false)++;
  emu_sync_arrive();
  return emu_r_true != 0;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned) {}
inline long long clock64() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}
inline unsigned long long __globaltimer() { return (unsigned long long)clock64(); }
inline void __trap() { emu_fail("__trap() called"); }
inline void __brkpt() { emu_fail("__brkpt() called"); }

// emu_coll_complete ends c when every live lane of its mask has arrived.
inline void emu_coll_complete(emu_warp& w, emu_coll& c) {
  if (c.arrived == 0 || (c.mask & w.alive & ~c.arrived) != 0) return;
  c.present[c.gen & 1] = c.arrived;
  c.arrived = 0;
  c.gen++;
  emu_release(emu_at_warp);
}

// emu_coll_for is w's collective of mask; a collective of another mask
// that shares lanes with it and is being gathered is an error.
inline emu_coll& emu_coll_for(emu_warp& w, unsigned mask) {
  emu_coll* c = nullptr;
  for (int i = 0; i < w.ncoll; i++) {
    emu_coll& o = w.coll[i];
    if (o.mask == mask) {
      c = &o;
    } else if (o.arrived != 0 && (o.mask & mask) != 0) {
      char msg[200];
      std::snprintf(msg, sizeof msg, "warp %d: a warp collective of mask %08x while lanes %08x wait in one of mask %08x: the emulation runs one of overlapping masks at a time", w.id, mask, o.arrived, o.mask);
      emu_fail(msg);
    }
  }
  if (c) return *c;
  if (w.ncoll == 32) emu_fail("a warp's collectives use more than 32 masks");
  emu_coll& n = w.coll[w.ncoll++];
  n.mask = mask, n.arrived = 0, n.gen = 0;
  return n;
}

// emu_warp_op gathers v from every live lane of mask, then returns f(lanes,
// present) for the caller: lanes[i] is lane i's value where present has
// bit i.
template <typename V, typename F>
inline auto emu_warp_op(unsigned mask, V v, F f) {
  static_assert(sizeof(V) <= 32, "a warp collective's value of at most 32 bytes");
  static_assert(std::is_trivially_copyable_v<V>, "a warp collective's value must be trivially copyable");
  emu_warp& w = *emu_w;
  const int lane = emu_lane;
  if (!(mask >> lane & 1)) emu_fail("a warp collective whose mask leaves out the calling lane (undefined on the GPU)");
  emu_coll& c = emu_coll_for(w, mask);
  const unsigned long g = c.gen;
  std::memcpy(c.slots[g & 1][lane], &v, sizeof v);
  c.arrived |= 1u << lane;
  emu_coll_complete(w, c);
  while (c.gen == g) emu_wait(emu_at_warp);
  const unsigned present = c.present[g & 1];
  V lanes[32];
  for (int i = 0; i < 32; i++)
    if (present >> i & 1) std::memcpy(&lanes[i], c.slots[g & 1][i], sizeof v);
  return f(lanes, present);
}

// emu_poison<V>() is what a lane reads from a lane that gave no value
// (outside the mask, returned, or past a partial warp): undefined on the
// GPU, so the emulation makes it show: NaN for floating types, 0x5A bytes
// for the others.
template <typename V>
inline V emu_poison(V own) {
  if constexpr (std::is_same_v<V, bool>) {
    return own;
  } else if constexpr (std::is_floating_point_v<V>) {
    return V(NAN);
  } else {
    V p;
    std::memset(static_cast<void*>(&p), 0x5A, sizeof p);
    if constexpr (sizeof(V) == 2) {  // __half, __nv_bfloat16: a NaN
      unsigned short nan = 0x7fff;
      std::memcpy(static_cast<void*>(&p), &nan, 2);
    }
    return p;
  }
}

template <typename V>
inline V emu_read_lane(const V* l, unsigned present, int src, V own) {
  if (src < 0 || src >= 32) return own;
  if (!(present >> src & 1)) return emu_poison<V>(own);
  return l[src];
}

template <typename V>
inline V __shfl_sync(unsigned mask, V v, int src, int width = 32) {
  const int lane = emu_lane, base = lane & ~(width - 1);
  const int s = base + (src & (width - 1));
  return emu_warp_op(mask, v, [&](const V* l, unsigned p) { return emu_read_lane(l, p, s, v); });
}
template <typename V>
inline V __shfl_up_sync(unsigned mask, V v, unsigned delta, int width = 32) {
  const int lane = emu_lane;
  const int s = (lane & (width - 1)) < int(delta) ? lane : lane - int(delta);
  return emu_warp_op(mask, v, [&](const V* l, unsigned p) { return emu_read_lane(l, p, s, v); });
}
template <typename V>
inline V __shfl_down_sync(unsigned mask, V v, unsigned delta, int width = 32) {
  const int lane = emu_lane;
  const int s = (lane & (width - 1)) + int(delta) >= width ? lane : lane + int(delta);
  return emu_warp_op(mask, v, [&](const V* l, unsigned p) { return emu_read_lane(l, p, s, v); });
}
template <typename V>
inline V __shfl_xor_sync(unsigned mask, V v, int lane_mask, int width = 32) {
  const int lane = emu_lane, base = lane & ~(width - 1);
  int s = lane ^ lane_mask;
  if (s >= base + width) s = lane;
  return emu_warp_op(mask, v, [&](const V* l, unsigned p) { return emu_read_lane(l, p, s, v); });
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  emu_warp_op(mask, 0, [](const int*, unsigned) { return 0; });
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return emu_warp_op(mask, pred != 0, [&](const bool* l, unsigned p) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
      if ((p & mask) >> i & 1 && l[i]) r |= 1u << i;
    return r;
  });
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) {
  return emu_warp_op(mask, pred != 0, [&](const bool* l, unsigned p) {
    for (int i = 0; i < 32; i++)
      if ((p & mask) >> i & 1 && !l[i]) return 0;
    return 1;
  });
}
inline int __uni_sync(unsigned mask, int pred) {
  return __all_sync(mask, pred) || !__any_sync(mask, pred);
}
inline unsigned __activemask() { return emu_w->alive; }
template <typename V>
inline unsigned __match_any_sync(unsigned mask, V v) {
  const int lane = emu_lane;
  return emu_warp_op(mask, v, [&](const V* l, unsigned p) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
      if ((p & mask) >> i & 1 && std::memcmp(&l[i], &l[lane], sizeof(V)) == 0) r |= 1u << i;
    return r;
  });
}
template <typename V>
inline unsigned __match_all_sync(unsigned mask, V v, int* pred) {
  const unsigned m = __match_any_sync(mask, v);
  const unsigned live = m | (mask & emu_w->alive);
  *pred = (m == live);
  return *pred ? m : 0;
}
#define EMU_REDUCE(NAME, T, OP)                                              \
  inline T NAME(unsigned mask, T v) {                                        \
    return emu_warp_op(mask, v, [&](const T* l, unsigned p) {                \
      bool first = true;                                                     \
      T r{};                                                                 \
      for (int i = 0; i < 32; i++)                                           \
        if ((p & mask) >> i & 1) {                                           \
          r = first ? l[i] : OP;                                             \
          first = false;                                                     \
        }                                                                    \
      return r;                                                              \
    });                                                                      \
  }
EMU_REDUCE(__reduce_add_sync, int, r + l[i])
EMU_REDUCE(__reduce_add_sync, unsigned, r + l[i])
EMU_REDUCE(__reduce_min_sync, int, (l[i] < r ? l[i] : r))
EMU_REDUCE(__reduce_min_sync, unsigned, (l[i] < r ? l[i] : r))
EMU_REDUCE(__reduce_max_sync, int, (r < l[i] ? l[i] : r))
EMU_REDUCE(__reduce_max_sync, unsigned, (r < l[i] ? l[i] : r))
EMU_REDUCE(__reduce_and_sync, unsigned, r & l[i])
EMU_REDUCE(__reduce_or_sync, unsigned, r | l[i])
EMU_REDUCE(__reduce_xor_sync, unsigned, r ^ l[i])
#undef EMU_REDUCE

// The legacy (pre-CUDA 9) shuffles, as the whole warp's.
template <typename V> inline V __shfl(V v, int s, int w = 32) { return __shfl_sync(0xffffffffu, v, s, w); }
template <typename V> inline V __shfl_up(V v, unsigned d, int w = 32) { return __shfl_up_sync(0xffffffffu, v, d, w); }
template <typename V> inline V __shfl_down(V v, unsigned d, int w = 32) { return __shfl_down_sync(0xffffffffu, v, d, w); }
template <typename V> inline V __shfl_xor(V v, int m, int w = 32) { return __shfl_xor_sync(0xffffffffu, v, m, w); }

#include "cuda_emu_math.h"
#include "cuda_emu_half.h"
#include "cuda_emu_atomic.h"
#include "cuda_emu_launch.h"
