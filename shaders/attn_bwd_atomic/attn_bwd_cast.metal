// attn_bwd_cast: dK, dV = the f32 atomic scratch rounded to the storage
// type (last dispatch of attn_bwd_atomic). Macro DTYPE. 256 threads per
// group, one element of each per thread; scalars at buffer(4).
#include "mltop_common.h"

struct CastParams {
  int n;
};

[[kernel, max_total_threads_per_threadgroup(256)]] void attn_bwd_cast(
    const device float* dKa [[buffer(0)]],
    const device float* dVa [[buffer(1)]],
    device mltop_t* dK [[buffer(2)]],
    device mltop_t* dV [[buffer(3)]],
    constant CastParams& p [[buffer(4)]],
    uint3 tg [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]]) {
  const int i = int(tg.x) * 256 + int(tid);
  if (i < p.n) {
    dK[i] = mltop_from_f32(dKa[i]);
    dV[i] = mltop_from_f32(dVa[i]);
  }
}
