package metal_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels" // transpose, the built-in family the example is checked against
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The Metal kernels' source text, compiled with g++ against a CPU
// emulation of the MSL subset they use (testdata/mslemu), driven through
// the real run.Runner: the family's Plan, this package's scalar
// packing and source assembly, the seeded inputs and the float64
// reference. It proves the tile logic, masks, buffer order, scalar layout
// and macros on Linux; it cannot prove the Metal compiler accepts the text
// or the hardware's fragment layout (see mltop_common.h).

func TestMetalKernelsOnCPUEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	opt := mslemu.Options()
	type tc struct {
		name   string
		spec   profiler.Spec
		native bool // bf16 through the __HAVE_BFLOAT__ branch
	}
	attn := func(dt profiler.DType, causal bool, bq, bk, wm, wn, lq, lk, d, h, hkv int) profiler.Spec {
		return profiler.Spec{Kernel: "attn_fwd", DType: dt,
			Knobs: map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn},
			Dims:  map[string]int{"B": 1, "H": h, "Hkv": hkv, "Lq": lq, "Lk": lk, "D": d},
			Flags: map[string]bool{"causal": causal}}
	}
	cases := []tc{
		{"attn f32 GQA ragged WN=1", attn(profiler.F32, false, 16, 16, 2, 1, 40, 56, 64, 2, 1), false},
		{"attn f16 causal WN=2", attn(profiler.F16, true, 32, 16, 2, 2, 24, 40, 64, 2, 2), false},
		{"attn bf16 causal Lq>Lk masked rows D=96", attn(profiler.BF16, true, 16, 16, 1, 2, 40, 24, 96, 1, 1), false},
		{"attn bf16 native bfloat WN=2", attn(profiler.BF16, false, 16, 16, 2, 2, 33, 47, 64, 2, 1), true},
		{"attn f16 WN=4 D=128", attn(profiler.F16, false, 8, 32, 1, 4, 20, 70, 128, 3, 3), false},
		{"attn f32 WM=8 causal Lq>Lk", attn(profiler.F32, true, 64, 16, 8, 1, 70, 33, 64, 1, 1), false},
		{"softmax_bwd f32 WG=64", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 5, "cols": 300}}, false},
		{"softmax_bwd bf16 WG=256", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 3, "cols": 1000}}, false},
		{"softmax_bwd bf16 native WG=32", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 4, "cols": 77}}, true},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eb.NativeBF16 = c.native
			// A runner per case: its kernel cache does not know about NativeBF16.
			mslemu.Check(t, run.NewRunner(eb), c.spec, opt)
		})
	}
}

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
