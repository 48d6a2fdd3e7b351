package metal_test

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A Metal kernel as tutorials write it: `kernel void`, no #include, no
// [[buffer(n)]] on its parameters (Apple's compiler numbers them in order,
// skipping indices written out), a `constant uint&` count. It is checked
// against the same math written with every index explicit and
// <metal_stdlib>; a broken copy is a mismatch.
func TestPlainMetalKernelOnCPUEmulator(t *testing.T) {
	const explicit = `#include <metal_stdlib>
using namespace metal;
kernel void scale_shift(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        constant float& alpha [[buffer(2)]], constant uint& n [[buffer(3)]],
                        uint i [[thread_position_in_grid]]) {
  if (i < n) { y[i] = alpha * x[i] + 1.0f; }
}
`
	const plain = `kernel void scale_shift(device const float* x, device float* y [[buffer(1)]],
                        constant float& alpha, constant uint& n,
                        uint3 gid [[thread_position_in_grid]]) {
  if (gid.x < n) { y[gid.x] = alpha * x[gid.x] + 1.0f; }
}
`
	const manifest = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {count: {default: 300}}
values: {alpha: 0.5}
buffers:
  - {name: x, dtype: f32, shape: [count]}
  - {name: y, dtype: f32, shape: [count], out: true}
dispatches:
  - {entry: scale_shift, grid: ["cdiv(count, 64)"], threads: 64, args: [x, y, alpha, count]}
CHECK
`
	runAgainstReference(t, "scale", manifest, explicit, map[string]int{"count": 300}, []emuVariant{
		{"plain", plain, profiler.StatusOK},
		{"broken", strings.Replace(plain, "+ 1.0f", "+ 2.0f", 1), profiler.StatusMismatch},
	})
}
