// cross_entropy: fused softmax cross entropy forward and backward, one
// group per row (see the plan contract in kernels/cross_entropy.go).
//
// Macros: WG (threads per group), VEC (elements per access), CL (0 here:
// the row split over a cluster is CUDA-only), DTYPE.
// Buffers: logits [rows, vocab] T, targets [rows] int, loss [rows] f32,
// dlogits [rows, vocab] T; scalars (rows, vocab, pad_id) at buffer(4).
// Grid (rows, 1, 1), group (WG, 1, 1).
//
// Pass 1: each thread keeps an online (max, Σexp) over its VEC-wide
// pieces; the pairs are merged across a simdgroup with shuffles and across
// simdgroups through red_smem (2·WG/32 floats, the Plan's only item).
// Pass 2 re-reads the row and writes dX = exp(x − lse) − [j = target].
// Rows whose target is pad_id get loss 0 and dX 0.
#include "mltop_common.h"

#define NW (WG / 32)

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");
static_assert(CL == 0, "CL > 0 (rows staged in shared memory over a cluster) is CUDA-only: the plan rejects it on Metal");

struct CrossEntropyParams {
  int rows;
  int vocab;
  int pad_id;
};

// merge folds the pair (om, os) into (m, s); an empty pair has max -inf.
inline void merge(thread float& m, thread float& s, float om, float os) {
  const float nm = max(m, om);
  if (nm == -INFINITY) {
    return;
  }
  s = (m == -INFINITY ? 0.0f : s * exp(m - nm)) + (om == -INFINITY ? 0.0f : os * exp(om - nm));
  m = nm;
}

[[kernel, max_total_threads_per_threadgroup(WG)]] void cross_entropy(
    const device mltop_t* logits [[buffer(0)]],
    const device int* targets [[buffer(1)]],
    device float* loss [[buffer(2)]],
    device mltop_t* dlogits [[buffer(3)]],
    constant CrossEntropyParams& p [[buffer(4)]],
    uint row [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    ushort sgid [[simdgroup_index_in_threadgroup]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float red_smem[2 * NW];
  if (int(row) >= p.rows) {
    return;
  }
  const device mltop_t* x = logits + size_t(row) * size_t(p.vocab);
  device mltop_t* dx = dlogits + size_t(row) * size_t(p.vocab);
  const int target = targets[row];
  const int nv = p.vocab / VEC;
  if (target == p.pad_id) { // the whole group takes this branch
    for (int i = int(tid); i < nv; i += WG) {
      for (int k = 0; k < VEC; ++k) {
        dx[i * VEC + k] = mltop_from_f32(0.0f);
      }
    }
    if (tid == 0) {
      loss[row] = 0.0f;
    }
    return;
  }
  float m = -INFINITY;
  float s = 0.0f;
  for (int i = int(tid); i < nv; i += WG) {
    float f[VEC];
    float cm = -INFINITY;
    for (int k = 0; k < VEC; ++k) {
      f[k] = mltop_to_f32(x[i * VEC + k]);
      cm = max(cm, f[k]);
    }
    float cs = 0.0f;
    for (int k = 0; k < VEC; ++k) {
      cs += exp(f[k] - cm);
    }
    merge(m, s, cm, cs);
  }
  for (ushort o = 16; o > 0; o >>= 1) {
    const float om = simd_shuffle_xor(m, o);
    const float os = simd_shuffle_xor(s, o);
    merge(m, s, om, os);
  }
  if (lane == 0) {
    red_smem[sgid] = m;
    red_smem[NW + sgid] = s;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  m = red_smem[0];
  s = red_smem[NW];
  for (int i = 1; i < NW; ++i) {
    merge(m, s, red_smem[i], red_smem[NW + i]);
  }
  const float lse = m + log(s);
  if (tid == 0) {
    loss[row] = lse - mltop_to_f32(x[target]);
  }
  for (int i = int(tid); i < nv; i += WG) {
    for (int k = 0; k < VEC; ++k) {
      const int j = i * VEC + k;
      float v = exp(mltop_to_f32(x[j]) - lse);
      if (j == target) {
        v -= 1.0f;
      }
      dx[j] = mltop_from_f32(v);
    }
  }
}
