#include <metal_stdlib>
using namespace metal;

// Set when the pipeline is made, not compiled in (manifest constants:).
constant bool use_relu [[function_constant(0)]];
constant int UNROLL [[function_constant(1)]];
// A constant the pipeline may leave unset: 4 then.
constant int unroll = is_function_constant_defined(UNROLL) ? UNROLL : 4;

// One threadgroup per row; each thread takes unroll consecutive columns per
// step. E is the element type; T (mltop's dtype macro) instantiates it.
template <typename E>
[[kernel]] void bias_act_impl(const device E* x [[buffer(0)]], const device E* bias [[buffer(1)]],
                              device E* y [[buffer(2)]], constant int& rows [[buffer(3)]],
                              constant int& cols [[buffer(4)]],
                              uint3 group [[threadgroup_position_in_grid]],
                              uint lane [[thread_index_in_threadgroup]],
                              uint3 width [[threads_per_threadgroup]]) {
  if (int(group.x) >= rows) {
    return;
  }
  const device E* xr = x + size_t(group.x) * size_t(cols);
  device E* yr = y + size_t(group.x) * size_t(cols);
  for (int c0 = int(lane) * unroll; c0 < cols; c0 += int(width.x) * unroll) {
    for (int u = 0; u < unroll; u++) {
      const int c = c0 + u;
      if (c < cols) {
        float v = float(xr[c]) + float(bias[c]);
        if (use_relu) {
          v = max(v, 0.0f);
        }
        yr[c] = E(v);
      }
    }
  }
}

#define instantiate_bias_act(name, type) \
  template [[host_name(#name)]] [[kernel]] decltype(bias_act_impl<type>) bias_act_impl<type>;
instantiate_bias_act(bias_act, T)
