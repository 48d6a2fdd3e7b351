package pyref

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakePython writes an executable that stands in for the interpreter: it
// is run as `py driver.py DIR` and does what body says in DIR ($2).
func fakePython(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakepython")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nd=\"$2\"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunExchange: inputs reach the script as .npy files (ints as int64),
// the names and arrays it returns come back.
func TestRunExchange(t *testing.T) {
	py := fakePython(t, `cp "$d/in_X.npy" "$d/out_Y.npy"; cp "$d/in_ids.npy" "$d/out_I.npy"; echo '["Y", "I"]' > "$d/outputs.json"`)
	outs, err := Run(py, "/w/ref.py", map[string]any{"rows": 2}, []Input{
		{Name: "X", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4.5}},
		{Name: "ids", Shape: []int{3}, Data: []float32{-1, 0, 7}, Int: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer outs.Close()
	if !slices.Equal(outs.Names, []string{"Y", "I"}) {
		t.Errorf("names %v", outs.Names)
	}
	y, err := outs.Read("Y")
	if err != nil || y.Descr != "<f8" || !slices.Equal(y.Shape, []int{2, 2}) || !slices.Equal(y.Data, []float64{1, 2, 3, 4.5}) {
		t.Errorf("Y: %+v, %v", y, err)
	}
	ids, err := outs.Read("I")
	if err != nil || ids.Descr != "<i8" || !slices.Equal(ids.Data, []float64{-1, 0, 7}) {
		t.Errorf("ids: %+v, %v", ids, err)
	}
	if _, err := outs.Read("Z"); err == nil {
		t.Error("reading an output that is not there succeeded")
	}
}

func TestRunErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no numpy", `echo MLTOP_NO_NUMPY >&2; exit 3`, "has no NumPy"},
		{"exception", `echo "Traceback: boom" >&2; exit 5`, "/w/ref.py raised an exception:\nTraceback: boom"},
		{"other failure", `echo "bad return" >&2; exit 4`, "/w/ref.py failed (exit status 4):\nbad return"},
		{"no outputs.json", `exit 0`, "reading what /w/ref.py returned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(fakePython(t, c.body), "/w/ref.py", nil, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestInterpreter(t *testing.T) {
	t.Setenv(PythonEnv, "/nonexistent/python3")
	if _, err := Interpreter(); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing interpreter: %v", err)
	}
	py := fakePython(t, "exit 0")
	t.Setenv(PythonEnv, py)
	if got, err := Interpreter(); err != nil || got != py {
		t.Errorf("Interpreter() = %q, %v; want %q", got, err, py)
	}
}

// TestRunDimsKeyError: a reference that reads a key dims lacks gets,
// after its traceback, the keys dims has and the nearest one; a KeyError
// on another dict gets no such line.
func TestRunDimsKeyError(t *testing.T) {
	py, err := Interpreter()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		name, body string
		want, not  []string
	}{
		{"dims", "def reference(inputs, dims):\n    return {'Y': inputs['X'] * dims['epsilon']}\n",
			[]string{"KeyError: 'epsilon'", "dims has no key 'epsilon': did you mean 'eps'? its keys are N, dtype, eps"}, nil},
		{"another dict", "def reference(inputs, dims):\n    return {'Y': {'a': 1}['epsilon']}\n",
			[]string{"KeyError: 'epsilon'"}, []string{"dims has no key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref := filepath.Join(t.TempDir(), "ref.py")
			if err := os.WriteFile(ref, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(py, ref, map[string]any{"N": 4, "eps": 1e-6, "dtype": "f32"}, []Input{{Name: "X", Shape: []int{4}, Data: []float32{1, 2, 3, 4}}})
			if err == nil {
				t.Fatal("ran")
			}
			if strings.Contains(err.Error(), "has no NumPy") {
				t.Skip(err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q holds %q", err, w)
				}
			}
		})
	}
}

// A kernel without input buffers (an arange) sends an empty list of
// inputs, which the driver iterates, not null.
func TestRunNoInputs(t *testing.T) {
	py := fakePython(t, `grep -q '"inputs":\[\]' "$d/meta.json" || { echo "inputs not []: $(cat "$d/meta.json")" >&2; exit 1; }; echo '[]' > "$d/outputs.json"`)
	outs, err := Run(py, "/w/ref.py", map[string]any{"N": 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	outs.Close()
}
