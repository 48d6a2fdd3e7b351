package metal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels/all" // transpose, the built-in family the example is checked against
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The built-in families' Metal kernels run through the same emulation in
// kernels/all (TestMetalEmulation), which walks the family registry.

// The example user kernels' .metal files (examples/), through the same
// emulation, the real Runner and their own checks (Python references need
// python3 with NumPy; the transpose is checked against the built-in family).
func TestUserExamplesOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	opt := mslemu.Options()
	opt.MaxRows = 64
	// The product's rule (pyref.Rule): no fallback a user would not get.
	numpy := pyref.Probe(context.Background())
	hasNumPy := numpy.OK()
	cases := []struct {
		name   string
		dir    string
		spec   profiler.Spec
		python bool
	}{
		{"softmax f32 WG=64 ragged", "softmax", profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 5, "cols": 300}}, true},
		{"softmax f16 WG=128", "softmax", profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 3, "cols": 1000}}, true},
		{"matmul f32 ragged", "matmul", profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"BM": 32, "BN": 32, "BK": 8, "WG": 64}, Dims: map[string]int{"M": 45, "N": 37, "K": 29}}, true},
		{"matmul f16", "matmul", profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"BM": 64, "BN": 32, "BK": 16, "WG": 128}, Dims: map[string]int{"M": 64, "N": 64, "K": 40}}, true},
		{"transpose f32 ragged", "transpose", profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"TILE": 16, "ROWS": 4}, Dims: map[string]int{"height": 33, "width": 47}}, false},
		{"transpose f16 TILE=32", "transpose", profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"TILE": 32, "ROWS": 8}, Dims: map[string]int{"height": 64, "width": 40}}, false},
		{"transpose bf16 native bfloat", "transpose", profiler.Spec{DType: profiler.BF16, Knobs: map[string]int{"TILE": 16, "ROWS": 2}, Dims: map[string]int{"height": 20, "width": 17}}, false},
		{"softmax bf16 native bfloat", "softmax", profiler.Spec{DType: profiler.BF16, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 3, "cols": 200}}, true},
		{"softmax_naive f32 ragged", "softmax_naive", profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 45, "cols": 70}}, true},
		{"softmax_naive f16", "softmax_naive", profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 64, "cols": 33}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.python && !hasNumPy {
				t.Skipf("the Python references need NumPy in the interpreter of %s: %v", pyref.Rule, numpy.Err)
			}
			fams, err := user.Register("../examples/" + c.dir + "/kernel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s := c.spec
			s.Kernel = fams[0].Name()
			eb.NativeBF16 = s.DType == profiler.BF16 // user kernels use Metal 3.1's bfloat for T
			defer func() { eb.NativeBF16 = false }()
			mslemu.Check(t, run.NewRunner(eb), s, opt)
		})
	}
	// A broken copy is caught: the softmax scaled by 1.01.
	if hasNumPy {
		src, _ := os.ReadFile("../examples/softmax/softmax.metal")
		y, _ := os.ReadFile("../examples/softmax/kernel.yaml")
		ref, _ := os.ReadFile("../examples/softmax/ref.py")
		dir := t.TempDir()
		os.WriteFile(dir+"/softmax.metal", []byte(strings.Replace(string(src), "* inv);", "* inv * 1.01f);", 1)), 0o644)
		os.WriteFile(dir+"/kernel.yaml", []byte(strings.Replace(string(y), "name: user_softmax", "name: user_softmax_broken", 1)), 0o644)
		os.WriteFile(dir+"/ref.py", ref, 0o644)
		os.WriteFile(dir+"/softmax.cu", []byte("extern \"C\" __global__ void softmax_rows(const T* X, T* Y, int a, int b) {}"), 0o644)
		fams, err := user.Register(dir)
		if err != nil {
			t.Fatal(err)
		}
		res := run.NewRunner(eb).Run(context.Background(), profiler.Spec{Kernel: fams[0].Name(), DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 4, "cols": 100}}, opt, nil)
		if res.Status != profiler.StatusMismatch {
			t.Errorf("broken softmax: status %s %s", res.Status, res.Error)
		}
	}
}

// examples/softmax checked against examples/softmax_naive (check: kernel)
// instead of its Python reference: the naive kernel runs at f32 through the
// same emulated device, on the same inputs. A broken softmax is caught.
func TestUserExampleKernelCheckOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	opt := mslemu.Options()
	opt.MaxRows = 64
	naive, err := filepath.Abs("../examples/softmax_naive/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile("../examples/softmax/softmax.metal")
	y, _ := os.ReadFile("../examples/softmax/kernel.yaml")
	for _, c := range []struct {
		name, scale string
		dt          profiler.DType
		want        profiler.Status
	}{
		{"user_softmax_vs_naive", "", profiler.BF16, profiler.StatusOK},
		{"user_softmax_vs_naive_f32", "", profiler.F32, profiler.StatusOK},
		{"user_softmax_vs_naive_broken", " * 1.01f", profiler.F32, profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			manifest := strings.Replace(string(y), "name: user_softmax", "name: "+c.name, 1)
			manifest = strings.Replace(manifest, "check: {python: ref.py}", "check: {kernel: "+naive+"}", 1)
			if !strings.Contains(manifest, "\ncheck: {kernel: "+naive+"}") {
				t.Fatal("test setup: the softmax example's check changed")
			}
			os.WriteFile(dir+"/kernel.yaml", []byte(manifest), 0o644)
			os.WriteFile(dir+"/softmax.metal", []byte(strings.Replace(string(src), "* inv);", "* inv"+c.scale+");", 1)), 0o644)
			os.WriteFile(dir+"/softmax.cu", []byte("extern \"C\" __global__ void softmax_rows(const T* X, T* Y, int a, int b) {}"), 0o644)
			fams, err := user.Register(dir)
			if err != nil {
				t.Fatal(err)
			}
			eb.NativeBF16 = c.dt == profiler.BF16
			defer func() { eb.NativeBF16 = false }()
			res := run.NewRunner(eb).Run(context.Background(), profiler.Spec{Kernel: fams[0].Name(), DType: c.dt, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 37, "cols": 130}}, opt, nil)
			if res.Status != c.want || res.Verdict == nil || !strings.Contains(res.Verdict.Rows, "against user_softmax_naive at f32") {
				t.Errorf("status %s (want %s) %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
