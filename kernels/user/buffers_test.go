package user

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

const xLine = "  - {name: X, dtype: T, shape: [rows, cols]}"
const yLine = "  - {name: Y, dtype: T, shape: [rows, cols], out: true, tol: {atol: 1e-3}}"

// withBuffers is the test manifest with its X and Y lines replaced.
func withBuffers(t *testing.T, x, y string) string {
	t.Helper()
	if !strings.Contains(goodYAML, xLine) || !strings.Contains(goodYAML, yLine) {
		t.Fatal("test setup: the buffer lines moved")
	}
	return strings.Replace(strings.Replace(goodYAML, xLine, x, 1), yLine, y, 1)
}

func npyFile(t *testing.T, shape []int, vals []float64) string {
	t.Helper()
	var b bytes.Buffer
	if err := pyref.WriteNPY(&b, shape, vals); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestBadBuffers(t *testing.T) {
	for _, c := range []struct {
		name, x, y string
		want       []string
	}{
		{"inout without init", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], inout: true}", []string{"buffers[Y].init", "Y is inout", "needs initial values"}},
		{"inout poison", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], inout: true, init: poison}", []string{"Y is inout: poison"}},
		{"inout and out", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], inout: true, out: true, init: zeros}", []string{"buffers[Y].inout", "drop `out: true`"}},
		{"outliers without scale", "  - {name: X, dtype: T, shape: [rows, cols], init: \"normal(0, 1, outliers=0.01)\"}", yLine, []string{"buffers[X].init", "outliers= and scale= together"}},
		{"outliers fraction", "  - {name: X, dtype: T, shape: [rows, cols], init: \"normal(0, 1, outliers=2, scale=5)\"}", yLine, []string{"outliers=2", "0 ≤ outliers < 1"}},
		{"unknown keyword", "  - {name: X, dtype: T, shape: [rows, cols], init: \"normal(0, 1, spikes=0.1)\"}", yLine, []string{"unknown keyword spikes"}},
		{"keyword on uniform", "  - {name: X, dtype: T, shape: [rows, cols], init: \"uniform(0, 1, scale=3)\"}", yLine, []string{"only normal takes keyword"}},
		{"unknown name in an argument", "  - {name: X, dtype: T, shape: [rows, cols], init: \"normal(0, one)\"}", yLine, []string{"buffers[X].init", "unknown name 'one'", "init normal(0, one)"}},
		{"npy missing", "  - {name: X, dtype: T, shape: [rows, cols], init: \"npy:nope.npy\"}", yLine, []string{"npy:nope.npy", "cannot read", "relative to the manifest"}},
		{"npy not npy", "  - {name: X, dtype: T, shape: [rows, cols], init: \"npy:w.txt\"}", yLine, []string{"name a .npy file"}},
		{"terms on input", "  - {name: X, dtype: T, shape: [rows, cols], terms: cols}", yLine, []string{"buffers[X].terms", "X is an input"}},
		{"terms unknown name", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], out: true, terms: colz}", []string{"unknown name 'colz' in buffers[Y].terms"}},
		{"magnitude without terms", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], out: true, magnitude: want}", []string{"add `terms:"}},
		{"bad magnitude", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], out: true, terms: cols, magnitude: max}", []string{"buffers[Y].magnitude", "\"max\"", "squares", "want"}},
		{"bad accumulate", xLine, "  - {name: Y, dtype: T, shape: [rows, cols], out: true, terms: cols, accumulate: f64}", []string{"buffers[Y].accumulate", "\"f64\""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": withBuffers(t, c.x, c.y), "k.cu": usertest.Source, "w.txt": "x"}))
			errorSays(t, err, c.want)
		})
	}
}

// The inits a plan carries: outliers, npy data (checked against the
// buffer's shape at plan time, rounded to its dtype by the fill), inout.
func TestBufferInitsPlan(t *testing.T) {
	y := withBuffers(t, "  - {name: X, dtype: bf16, shape: [rows, cols], init: \"npy:data/x.npy\"}\n  - {name: Z, dtype: T, shape: [cols], init: \"normal(1, 2, outliers=0.01, scale=50)\"}",
		"  - {name: Y, dtype: T, shape: [rows, cols], inout: true, init: zeros}")
	vals := make([]float64, 8*16)
	for i := range vals {
		vals[i] = 1 + float64(i)/256 // not all representable in bf16
	}
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source, "data/x.npy": npyFile(t, []int{8, 16}, vals)})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if files := f.Files(); !strings.HasSuffix(files[len(files)-1], "x.npy") {
		t.Errorf("files %v: the .npy is watched and versioned", files)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	x, z, yb := p.Buffers[0], p.Buffers[1], p.Buffers[2]
	if x.Init != profiler.InitData || len(x.Data) != 128 {
		t.Fatalf("X %+v", x.Init)
	}
	got := profiler.Fill(x, 1)
	for i, v := range vals {
		if want := profiler.BF16.Round(float32(v)); got[i] != want {
			t.Fatalf("X[%d] = %v, want %v (rounded to bf16)", i, got[i], want)
		}
	}
	if z.Init != profiler.InitNormal || z.Mean != 1 || z.Scale != 2 || z.Outliers != 0.01 || z.OutlierScale != 50 {
		t.Errorf("Z %+v", z)
	}
	if yb.Role != profiler.InOut || yb.Init != profiler.InitZero {
		t.Errorf("Y %+v", yb)
	}
	s.Dims["rows"] = 4
	_, err = f.Plan(s, cudaDev)
	if err == nil || !strings.Contains(err.Error(), "shape [8 16]") || !strings.Contains(err.Error(), "is [4 16] for rows=4, cols=16") {
		t.Errorf("shape mismatch: %v", err)
	}
}

// An inout buffer reaches the Python reference with its initial values,
// and what the reference returns for it is compared.
func TestInOutPythonReference(t *testing.T) {
	usePython(t)
	y := withBuffers(t, xLine, "  - {name: Y, dtype: T, shape: [rows, cols], inout: true, init: \"uniform(0, 1)\"}")
	y = strings.Replace(y, "check: none", "check: {python: ref.py}", 1)
	ref := "def reference(inputs, dims):\n    return {'Y': inputs['Y'] + inputs['X']}\n"
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source, "ref.py": ref}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	x, y0 := make([]float32, 128), make([]float32, 128)
	for i := range x {
		x[i], y0[i] = float32(i), 1000
	}
	r, err := f.Reference(s, profiler.Inputs{"X": x, "Y": y0}, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || r.Checks[0].Buffer != "Y" {
		t.Fatalf("checks %+v", r.Checks)
	}
	for k, i := range r.Checks[0].Index {
		if r.Checks[0].Want[k] != float64(i)+1000 {
			t.Fatalf("Y[%d] want %g, the reference was not given Y's initial values", i, r.Checks[0].Want[k])
		}
	}
}
