// embedding_bwd: dW[ids[t], :] += dY[t, :] with float atomics (see the plan
// contract in kernels/embedding_bwd.go).
//
// Macros: WG (threads per group), VEC (elements per thread per step), TPG
// (tokens per group), DTYPE. Buffers: ids [tokens] int, dY [tokens, D] T,
// dW [vocab, D] f32 (zeroed by the plan's zero_dW dispatch); scalars
// (tokens, D) at buffer(3). Grid (ceil(tokens/TPG), 1, 1), group (WG, 1, 1).
// No threadgroup memory.
#include "mltop_common.h"

static_assert(WG % 32 == 0 && WG <= 1024, "WG must be a multiple of 32, at most 1024");

struct EmbeddingBwdParams {
  int tokens;
  int D;
};

[[kernel, max_total_threads_per_threadgroup(WG)]] void embedding_bwd(
    const device int* ids [[buffer(0)]],
    const device mltop_t* dY [[buffer(1)]],
    device atomic_float* dW [[buffer(2)]],
    constant EmbeddingBwdParams& p [[buffer(3)]],
    uint grp [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  const int nv = p.D / VEC;
  for (int tt = 0; tt < TPG; ++tt) {
    const int t = int(grp) * TPG + tt;
    if (t >= p.tokens) {
      return;
    }
    const size_t row = size_t(ids[t]) * size_t(p.D);
    const device mltop_t* g = dY + size_t(t) * size_t(p.D);
    for (int i = int(tid); i < nv; i += WG) {
      for (int k = 0; k < VEC; ++k) {
        atomic_fetch_add_explicit(&dW[row + size_t(i * VEC + k)], mltop_to_f32(g[i * VEC + k]), memory_order_relaxed);
      }
    }
  }
}
