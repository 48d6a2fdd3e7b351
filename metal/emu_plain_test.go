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

// A Metal kernel as tutorials write it: `kernel void`, no #include, no
// [[buffer(n)]] on its parameters (Apple's compiler numbers them in order,
// skipping indices written out), a `constant uint&` count. It is checked
// against the same math written with every index explicit and
// <metal_stdlib>; a broken copy is a mismatch.
func TestPlainMetalKernelOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	opt := mslemu.Options()
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
	root := t.TempDir()
	write := func(dir, name, src, check string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.NewReplacer("NAME", name, "CHECK", check).Replace(manifest)
		os.WriteFile(filepath.Join(root, dir, "kernel.yaml"), []byte(m), 0o644)
		os.WriteFile(filepath.Join(root, dir, "k.metal"), []byte(src), 0o644)
	}
	write("explicit", "scale_explicit", explicit, "check: none")
	against := "check: {kernel: ../explicit/kernel.yaml}"
	write("plain", "scale_plain", plain, against)
	write("broken", "scale_plain_broken", strings.Replace(plain, "+ 1.0f", "+ 2.0f", 1), against)
	for _, c := range []struct {
		dir  string
		want profiler.Status
	}{{"plain", profiler.StatusOK}, {"broken", profiler.StatusMismatch}} {
		t.Run(c.dir, func(t *testing.T) {
			fams, err := user.Register(filepath.Join(root, c.dir))
			if err != nil {
				t.Fatal(err)
			}
			res := run.NewRunner(eb).Run(context.Background(), profiler.Spec{Kernel: fams[0].Name(), DType: profiler.F32, Dims: map[string]int{"count": 300}}, opt, nil)
			if res.Status != c.want {
				t.Errorf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
