package metal_test

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A 2-D kernel whose thread position is a uint2 (candle's copy2d) runs on
// the emulator with x and y of its grid position: a transpose-free copy
// with a row offset is checked against the same copy indexed by uint3; a
// copy that swaps x and y is a mismatch.
func TestUint2ThreadPositionOnCPUEmulator(t *testing.T) {
	const byUint3 = `kernel void copy_rows(device const float* x, device float* y, constant uint& cols,
                      uint3 p [[thread_position_in_grid]]) {
  if (p.x < cols) { y[p.y * cols + p.x] = x[p.y * cols + p.x] + float(p.y); }
}
`
	const byUint2 = `kernel void copy_rows(device const float* x, device float* y, constant uint& cols,
                      uint2 p [[thread_position_in_grid]]) {
  if (p.x < cols) { y[p.y * cols + p.x] = x[p.y * cols + p.x] + float(p.y); }
}
`
	const manifest = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {rows: {default: 5}, cols: {default: 40}}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: y, dtype: f32, shape: [rows, cols], out: true}
dispatches:
  - {entry: copy_rows, grid: ["cdiv(cols, 16)", rows], threads: [16, 1, 1], args: [x, y, cols]}
CHECK
`
	runAgainstReference(t, "copy", manifest, byUint3, map[string]int{"rows": 5, "cols": 40}, []emuVariant{
		{"uint2", byUint2, profiler.StatusOK},
		{"swapped", strings.Replace(byUint2, "float(p.y)", "float(p.x)", 1), profiler.StatusMismatch},
	})
}

// A kernel a #define writes (candle's `FILL_OP(f32, float)`), with
// Metal's select and a bfloat copy under `#if __METAL_VERSION__ >= 310`,
// is found by its name and runs on the emulator; a broken select (the
// branches swapped) is a mismatch against the same math written out.
func TestMacroDefinedKernelOnCPUEmulator(t *testing.T) {
	const written = `kernel void leaky_f32(device const float* x, device float* y, constant float& a, constant uint& n,
                      uint i [[thread_position_in_grid]]) {
  if (i < n) { y[i] = x[i] > 0 ? x[i] : a * x[i]; }
}
`
	const byMacro = `#include <metal_stdlib>
using namespace metal;
#define LEAKY_OP(NAME, T)                                                          \
kernel void leaky_##NAME(device const T* x, device T* y, constant T& a, constant uint& n, \
                         uint i [[thread_position_in_grid]]) {                      \
  if (i < n) { y[i] = select(T(a * x[i]), x[i], x[i] > 0); }                          \
}
LEAKY_OP(u8, uchar)
LEAKY_OP(f32, float)
#if __METAL_VERSION__ >= 310
LEAKY_OP(bf16, bfloat)
#endif
`
	const manifest = `name: NAME
sources: {metal: k.metal}
dtypes: [f32]
dims: {count: {default: 300}}
values: {a: 0.25}
buffers:
  - {name: x, dtype: f32, shape: [count]}
  - {name: y, dtype: f32, shape: [count], out: true}
dispatches:
  - {entry: leaky_f32, grid: ["cdiv(count, 64)"], threads: 64, args: [x, y, a, count]}
CHECK
`
	runAgainstReference(t, "leaky", manifest, written, map[string]int{"count": 300}, []emuVariant{
		{"macro", byMacro, profiler.StatusOK},
		{"swapped", strings.Replace(byMacro, "select(T(a * x[i]), x[i],", "select(x[i], T(a * x[i]),", 1), profiler.StatusMismatch},
	})
}
