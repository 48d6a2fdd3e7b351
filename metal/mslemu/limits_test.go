package mslemu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// limitsKernel uses what candle's reduce.metal and MLX's utils.h take from
// Metal's stdlib: numeric_limits<T> (lowest, max) also of half, a
// source's own _numeric_limits_impl specialization at global scope,
// vec_elements, clz, and fast::divide.
const limitsKernel = `#include <metal_stdlib>
#include <metal_limits>
using namespace metal;

struct pair_t { float v; int i; };
template <>
struct _numeric_limits_impl<pair_t> {
  static constexpr pair_t lowest() { return pair_t{-1e30f, -1}; }
};

kernel void limits(device const float* x, device float* y, uint i [[thread_position_in_grid]]) {
  float m = numeric_limits<float>::lowest();
  m = max(m, x[i]);
  const float h = float(numeric_limits<half>::max());              // 65504
  const float e = float(vec_elements<float4>::value + vec_elements<float>::value);  // 4
  const float c = float(clz(uint(1)));                              // 31
  const float l = numeric_limits<pair_t>::lowest().v < -1e29f ? 1.0f : 0.0f;
  y[i] = fast::divide(m, 2.0f) + h + e + c + l;
}
`

const limitsYAML = `name: t_emu_limits
sources: {metal: k.metal}
dtypes: [f32]
dims: {N: {default: 64}}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: limits, grid: [2], threads: [32], args: [x, y]}
check: {python: ref.py}
`

const limitsRef = `def reference(inputs, dims):
    return {"y": inputs["x"] / 2 + 65504 + 4 + 31 + 1}
`

// numeric_limits, vec_elements, clz and divide compile and run on the
// emulation; without them candle's reduce.metal stopped at its first lines.
func TestNumericLimitsAndIntegerBuiltins(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	res := runFiles(t, eb, map[string]string{"kernel.yaml": limitsYAML, "k.metal": limitsKernel, "ref.py": limitsRef})
	if res.Status != profiler.StatusOK {
		t.Fatalf("status %s, want ok: %s", res.Status, strings.TrimSpace(res.Error))
	}
}
