package user

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// usePython skips unless the interpreter the product would use (pyref.Rule:
// MLTOP_PYTHON, else python3 on the PATH) has NumPy.
func usePython(t *testing.T) {
	t.Helper()
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("the Python reference tests need NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
}

func pyKernel(t *testing.T, ref string) *Family {
	t.Helper()
	y := strings.Replace(goodYAML, "check: none", "check: {python: ref.py}", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source, "ref.py": ref}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPythonReference(t *testing.T) {
	usePython(t)
	f := pyKernel(t, "import numpy as np\ndef reference(inputs, dims):\n    assert inputs['X'].dtype == np.float64\n    return {'Y': inputs['X'] * 2 + dims['WG']}\n")
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	x := make([]float32, 8*16)
	for i := range x {
		x[i] = float32(i)
	}
	ref, err := f.Reference(s, profiler.Inputs{"X": x}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Checks) != 1 || ref.Checks[0].Buffer != "Y" || ref.RowsChecked != 3 || ref.RowsTotal != 8 {
		t.Fatalf("ref %+v", ref)
	}
	c := ref.Checks[0]
	if !slices.Equal(c.Dims, []int{8, 16}) { // a mismatch names Y[i,j] by the shape
		t.Errorf("check dims %v, want Y's shape [8 16]", c.Dims)
	}
	for k, i := range c.Index {
		if want := float64(i)*2 + 64; math.Abs(c.Want[k]-want) > 0 {
			t.Fatalf("Y[%d] = %g, want %g", i, c.Want[k], want)
		}
	}
	if c.Tol == nil || c.Tol.ATol != 1e-3 || c.Tol.RTol != profiler.DefaultTolerances[profiler.F32].RTol {
		t.Errorf("per-buffer tolerance %+v", c.Tol)
	}
}

func TestPythonReferenceErrors(t *testing.T) {
	usePython(t)
	s := func(f *Family) profiler.Spec { return profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()) }
	in := profiler.Inputs{"X": make([]float32, 8*16)}
	for _, c := range []struct {
		name, ref string
		want      []string
	}{
		{"wrong shape", "import numpy as np\ndef reference(i, d):\n    return {'Y': np.zeros((16, 8))}\n", []string{"returned Y with shape [16 8] (dtype <f8), but the buffer's shape is [8 16]"}},
		{"wrong dtype", "import numpy as np\ndef reference(i, d):\n    return {'Y': np.zeros((8, 16), dtype=complex)}\n", []string{"Y with dtype complex128"}},
		{"strings", "import numpy as np\ndef reference(i, d):\n    return {'Y': np.array(['a'])}\n", []string{"dtype <U1"}},
		{"missing output", "def reference(i, d):\n    return {'Z': i['X']}\n", []string{"returned no Y (it returned Z)"}},
		{"not a dict", "def reference(i, d):\n    return 3\n", []string{"returned int, not a dict"}},
		{"exception", "def reference(i, d):\n    return helper(i)\n\ndef helper(i):\n    raise ValueError('boom here')\n", []string{"raised an exception", "Traceback", "ValueError: boom here", "line 5, in helper"}},
		{"no function", "x = 1\n", []string{"defines no function reference"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := pyKernel(t, c.ref)
			_, err := f.Reference(s(f), in, 4, 1)
			errorSays(t, err, c.want)
		})
	}
}

func TestPythonMissing(t *testing.T) {
	f := pyKernel(t, "def reference(i, d):\n    return {}\n")
	t.Setenv(pyref.PythonEnv, "/nonexistent/python3")
	_, err := f.Reference(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), profiler.Inputs{}, 4, 1)
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "install Python 3 with NumPy") {
		t.Errorf("missing python: %v", err)
	}
	// An interpreter without NumPy: a shell script standing in for one.
	dir := t.TempDir()
	fake := dir + "/python3"
	os.WriteFile(fake, []byte("#!/bin/sh\necho MLTOP_NO_NUMPY >&2\nexit 3\n"), 0o755)
	t.Setenv(pyref.PythonEnv, fake)
	_, err = f.Reference(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), profiler.Inputs{}, 4, 1)
	if err == nil || !strings.Contains(err.Error(), "has no NumPy: install it") {
		t.Errorf("missing numpy: %v", err)
	}
}

func TestSoftmaxExampleReference(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/softmax/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32, Dims: map[string]int{"rows": 4, "cols": 5}}.WithDefaults(f.Schema())
	x := []float32{0, 0, 0, 0, 0, 1, 2, 3, 4, 5, -1, 0, 1, 0, -1, 9, 9, 9, 9, 9}
	ref, err := f.Reference(s, profiler.Inputs{"X": x}, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range ref.Checks[0].Index {
		r := i / 5
		m, sum := math.Inf(-1), 0.0
		for c := range 5 {
			m = math.Max(m, float64(x[r*5+c]))
		}
		for c := range 5 {
			sum += math.Exp(float64(x[r*5+c]) - m)
		}
		want := math.Exp(float64(x[i])-m) / sum
		if math.Abs(ref.Checks[0].Want[k]-want) > 1e-15 {
			t.Errorf("Y[%d] = %g, want %g", i, ref.Checks[0].Want[k], want)
		}
	}
}
