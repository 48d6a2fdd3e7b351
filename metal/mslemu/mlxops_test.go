package mslemu_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// mlxOps has the constructs of MLX's binary_ops.h and softmax.h, written
// anew: a member template specialized inside its struct (`template <>`
// at class scope, which g++ rejects), a bfloat overload in
// metal::precise that must not hide the float one, metal::isnan, fmod on
// half, a global log1p(float) called with a half, and an integer divided
// by a bfloat assigned to a bfloat.
const mlxOps = `#include <metal_stdlib>
using namespace metal;

struct Op {
  template <typename T>
  T operator()(T x, T y) { return x + y; }
  template <>
  float operator()(float x, float y) { return x - y; }
};

namespace metal {
namespace precise {
inline bfloat atan2(bfloat y, bfloat x) { return bfloat(std::atan2(float(y), float(x))); }
} // namespace precise
} // namespace metal

inline float log1p(float x) { return x == 0 ? 0 : ::metal::log(1 + x) * x / ((1 + x) - 1); }

kernel void k(device const float* a, device const float* b, device float* c, uint i [[thread_position_in_grid]]) {
  float x = a[i], y = b[i];
  bfloat q = 1 / bfloat(4.0f);
  half h = fmod(half(7.0f), half(4.0f));
  float l = log1p(half(0.0f));
  float n = metal::isnan(x) ? 100.0f : 0.0f;
  c[i] = Op()(x, y) + metal::precise::atan2(y, 2.0f) + float(q) + float(h) + l + n;
}
`

const mlxOpsYAML = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {len: {default: 64}}
buffers:
  - {name: a, dtype: f32, shape: [len]}
  - {name: b, dtype: f32, shape: [len]}
  - {name: c, dtype: f32, shape: [len], out: true}
dispatches:
  - {entry: k, grid: ["len / 32"], threads: [32], args: [a, b, c]}
check: {python: ref.py}
`

const mlxOpsRef = `import numpy as np

def reference(inputs, dims):
    a, b = inputs["a"], inputs["b"]
    return {"c": a - b + np.arctan2(b, 2.0) + 0.25 + 3.0}
`

// It runs right on the emulation (the specialization, not the template,
// serves floats); its broken twin (the specialization adding) mismatches.
func TestMLXOpsOnEmulator(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../testdata/mslemu", emuDev)
	eb.NativeBF16 = true
	runVariants(t, eb, "t_emu_mlxops_", mlxOpsYAML, mlxOps, mlxOpsRef, []variant{
		{"ok", "", "", profiler.StatusOK},
		{"specialization_adds", "return x - y;", "return x + y;", profiler.StatusMismatch},
	})
}
