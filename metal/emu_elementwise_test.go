package metal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A 2-D kernel whose thread position is a uint2 (candle's copy2d) runs on
// the emulator with x and y of its grid position: a transpose-free copy
// with a row offset is checked against the same copy indexed by uint3; a
// copy that swaps x and y is a mismatch.
func TestUint2ThreadPositionOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
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
	root := t.TempDir()
	write := func(dir, name, src, check string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.NewReplacer("NAME", name, "CHECK", check).Replace(manifest)
		if err := os.WriteFile(filepath.Join(root, dir, "kernel.yaml"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "k.metal"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("uint3", "copy_uint3", byUint3, "check: none")
	against := "check: {kernel: ../uint3/kernel.yaml}"
	write("uint2", "copy_uint2", byUint2, against)
	write("swapped", "copy_uint2_swapped", strings.Replace(byUint2, "float(p.y)", "float(p.x)", 1), against)
	for _, c := range []struct {
		dir  string
		want profiler.Status
	}{{"uint2", profiler.StatusOK}, {"swapped", profiler.StatusMismatch}} {
		t.Run(c.dir, func(t *testing.T) {
			fams, err := user.Register(filepath.Join(root, c.dir))
			if err != nil {
				t.Fatal(err)
			}
			spec := profiler.Spec{Kernel: fams[0].Name(), DType: profiler.F32, Dims: map[string]int{"rows": 5, "cols": 40}}
			res := run.NewRunner(eb).Run(context.Background(), spec, mslemu.Options(), nil)
			if res.Status != c.want {
				t.Errorf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

// A kernel a #define writes (candle's `FILL_OP(f32, float)`), with
// Metal's select and a bfloat copy under `#if __METAL_VERSION__ >= 310`,
// is found by its name and runs on the emulator; a broken select (the
// branches swapped) is a mismatch against the same math written out.
func TestMacroDefinedKernelOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
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
	root := t.TempDir()
	write := func(dir, name, src, check string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.NewReplacer("NAME", name, "CHECK", check).Replace(manifest)
		if err := os.WriteFile(filepath.Join(root, dir, "kernel.yaml"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "k.metal"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("written", "leaky_written", written, "check: none")
	against := "check: {kernel: ../written/kernel.yaml}"
	write("macro", "leaky_macro", byMacro, against)
	write("swapped", "leaky_swapped", strings.Replace(byMacro, "select(T(a * x[i]), x[i],", "select(x[i], T(a * x[i]),", 1), against)
	for _, c := range []struct {
		dir  string
		want profiler.Status
	}{{"macro", profiler.StatusOK}, {"swapped", profiler.StatusMismatch}} {
		t.Run(c.dir, func(t *testing.T) {
			fams, err := user.Register(filepath.Join(root, c.dir))
			if err != nil {
				t.Fatal(err)
			}
			spec := profiler.Spec{Kernel: fams[0].Name(), DType: profiler.F32, Dims: map[string]int{"count": 300}}
			res := run.NewRunner(eb).Run(context.Background(), spec, mslemu.Options(), nil)
			if res.Status != c.want {
				t.Errorf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
