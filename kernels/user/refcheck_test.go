package user

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// mltop check's reference step counts inout buffers among the outputs a
// reference returns: the AdamW example returns params, m and v and gets
// no "not an output buffer" warning.
func TestCheckReferenceCountsInOut(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/adamw_inplace/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.TinySpec(profiler.F32)
	if err != nil {
		t.Fatal(err)
	}
	got, problems, err := f.CheckReference(context.Background(), "", s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("returned %v, want params, m and v", got)
	}
	for _, p := range problems {
		t.Errorf("problem: %s", p.Msg)
	}
}

// TinySpec lowers dims to small distinct values ≥ 2 the schema and rules
// allow, falling back to a taken value and then to 1.
func TestTinySpecDistinctDims(t *testing.T) {
	cases := []struct {
		name, dims, rules, want string
	}{
		{"distinct", "  M: {default: 4096}\n  N: {default: 4096}\n  K: {default: 64}\n", "", "M=2 N=3 K=4"},
		{"multiple", "  M: {default: 4096, multiple: 4}\n  N: {default: 4096, multiple: 4}\n", "", "M=4 N=8"},
		{"values", "  M: {values: [1, 8, 64], default: 64}\n  N: {values: [1, 8, 64], default: 64}\n", "", "M=8 N=8"},
		{"min", "  M: {default: 100, min: 10}\n  N: {default: 3}\n", "", "M=10 N=2"},
		{"rule forces equal", "  M: {default: 64}\n  N: {default: 64}\n", `rules: ["M == N"]`, "M=64 N=64"},
		{"only 1 below", "  M: {values: [1, 4096], default: 4096}\n  N: {default: 3}\n", "", "M=1 N=2"},
		{"default 2", "  M: {default: 2}\n  N: {default: 2}\n", "", "M=2 N=2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := "name: tiny_" + strings.ReplaceAll(c.name, " ", "_") + "\nsources: {cuda: k.cu}\ndtypes: [f32]\ndims:\n" + c.dims + c.rules +
				"\nbuffers:\n  - {name: Y, dtype: T, shape: [M, N], out: true}\ndispatches:\n  - {entry: k, grid: [M], threads: [32], args: [Y]}\ncheck: none\n"
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "kernel.yaml"), []byte(m), 0o644)
			os.WriteFile(filepath.Join(dir, "k.cu"), []byte(`extern "C" __global__ void k(float* Y) {}`), 0o644)
			f, err := Load(filepath.Join(dir, "kernel.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := f.TinySpec(profiler.F32)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range f.Schema().Dims {
				got = append(got, fmt.Sprintf("%s=%d", p.Name, s.Dims[p.Name]))
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("tiny spec %s, want %s", g, c.want)
			}
		})
	}
}

// An empty interpreter means the one every reference runs with: with
// $MLTOP_PYTHON unset, python3 found on the PATH (here a link to an
// interpreter that has NumPy), not an exec of "".
func TestCheckReferenceEmptyInterpreterFindsPython3(t *testing.T) {
	st := pyref.Probe(context.Background())
	if !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	// a script, not a link: a virtual environment's interpreter finds its
	// packages only when started by its own path
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte("#!/bin/sh\nexec '"+st.Path+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(pyref.PythonEnv, "")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	f, err := Load("../../examples/adamw_inplace/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.TinySpec(profiler.F32)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.CheckReference(context.Background(), "", s); err != nil {
		t.Fatalf("CheckReference with no interpreter named: %v", err)
	}
}

// A dequantizing GEMV of our own: int8 weights, a half scale and zero
// point by value, as weight-only quantized kernels take them.
const dequantGEMV = `#include <cuda_fp16.h>
#include <stdint.h>
__global__ void dequant_gemv(const int8_t* w, const __half* x, __half* y, int n, __half scale, __half zero) {
    int row = blockIdx.x;
    float s = 0.f;
    for (int j = threadIdx.x; j < n; j += 32) s += __half2float(x[j]) * ((float)w[row * n + j] - __half2float(zero));
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    if (threadIdx.x == 0) y[row] = __float2half(s * __half2float(scale));
}
`

const dequantYAML = `name: t_dequant_gemv
sources: {cuda: k.cu}
dtypes: [f16]
dims: {M: {default: 64}, N: {default: 512}}
values: {scale: 0.0125, zero: 3}
buffers:
  - {name: w, dtype: i8, shape: [M, N], init: "randint(-128, 128)"}
  - {name: x, dtype: f16, shape: [N]}
  - {name: y, dtype: f16, shape: [M], out: true}
dispatches:
  - {entry: dequant_gemv, grid: [M], threads: [32], args: [w, x, y, N, scale, zero]}
check: {python: ref.py}
`

// NumPy computes on the int8 array a reference gets in int8: w - zero
// wraps below -128 + zero, where the kernel (C) computes in float. mltop
// check runs the reference again with the int8 input at its init's ends,
// as int8 and as int64, and warns, naming the output element, the input
// and the widening to do, even at the tiny shape (M=2, N=3), where the
// random weights need not reach the wrap; a reference that widens first,
// or that insists on int8 (fails with int64 inputs), gets no warning.
func TestCheckReferenceWarnsOfInt8Wrap(t *testing.T) {
	usePython(t)
	for _, c := range []struct {
		name, body string
		warn       bool
	}{
		{"wraps in int8", `w = inputs["w"]`, true},
		{"widened", `w = inputs["w"].astype(np.float64)`, false},
		{"widened to int64", `w = inputs["w"].astype(np.int64)`, false},
		{"insists on int8", "w = inputs[\"w\"]\n    assert w.dtype == np.int8, w.dtype\n    w = w.astype(np.float64)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref := "import numpy as np\ndef reference(inputs, dims):\n    " + c.body + "\n    return {\"y\": dims[\"scale\"] * ((w - dims[\"zero\"]) @ inputs[\"x\"])}\n"
			f, s := dequantTiny(t, ref)
			_, problems, err := f.CheckReference(context.Background(), "", s)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, p := range problems {
				msgs = append(msgs, p.Msg)
			}
			got := strings.Join(msgs, "\n")
			if !c.warn {
				if got != "" {
					t.Errorf("problems %q, want none", got)
				}
				return
			}
			for _, want := range []string{"ref.py's y changes when its integer inputs w (int8) come as int64: with each at its ends (w: -128, 127), y[", "wraps (int8 -127 - 3 is 126)", `inputs["w"].astype(np.int64)`} {
				if !strings.Contains(got, want) {
					t.Errorf("problems %q, want one saying %q", got, want)
				}
			}
			if len(problems) != 1 || problems[0].Error {
				t.Errorf("problems %+v, want one warning", problems)
			}
		})
	}
}

// The wrap probe's inputs at their ends can make a reference whose work
// follows index values loop far longer than on the real inputs (a range
// per tile, each then the whole list): the probe is left unfinished after
// a few times the first run, and check goes on without a problem.
func TestCheckReferenceBoundsWrapProbe(t *testing.T) {
	usePython(t)
	defer func(f time.Duration) { wrapProbeFloor = f }(wrapProbeFloor)
	wrapProbeFloor = 500 * time.Millisecond
	ref := "import numpy as np, time\ndef reference(inputs, dims):\n    w = inputs[\"w\"].astype(np.float64)\n" +
		"    if (inputs[\"w\"] == -128).sum() + (inputs[\"w\"] == 127).sum() == inputs[\"w\"].size: time.sleep(60)\n" +
		"    return {\"y\": dims[\"scale\"] * ((w - dims[\"zero\"]) @ inputs[\"x\"])}\n"
	f, s := dequantTiny(t, ref)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	start := time.Now()
	_, problems, err := f.CheckReference(ctx, "", s)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("CheckReference took %v: the wrap probe was not bounded", d)
	}
	if len(problems) != 0 {
		t.Errorf("problems %+v, want none", problems)
	}
}

// dequantTiny loads the dequantising GEMV with ref as its ref.py and
// gives its tiny spec at f16.
func dequantTiny(t *testing.T, ref string) (*Family, profiler.Spec) {
	t.Helper()
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": dequantYAML, "k.cu": dequantGEMV, "ref.py": ref}))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.TinySpec(profiler.F16)
	if err != nil {
		t.Fatal(err)
	}
	return f, s
}
