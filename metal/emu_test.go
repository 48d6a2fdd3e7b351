package metal_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels/all" // transpose, the built-in family the example is checked against
	"github.com/mltop/mltop/kernels/user"
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
	hasNumPy := exec.Command(pythonForTests(), "-c", "import numpy").Run() == nil
	if hasNumPy {
		t.Setenv(user.PythonEnv, pythonForTests())
	}
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.python && !hasNumPy {
				t.Skip("no python3 with NumPy: apt install python3-numpy (or set MLTOP_PYTHON)")
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

func pythonForTests() string {
	if p := os.Getenv(user.PythonEnv); p != "" {
		return p
	}
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	return "python3"
}
