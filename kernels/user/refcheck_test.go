package user

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
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
	dir := t.TempDir()
	if err := os.Symlink(st.Path, filepath.Join(dir, "python3")); err != nil {
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
