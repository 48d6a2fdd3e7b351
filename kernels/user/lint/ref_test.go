package lint

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// fakePython stands in for the interpreter: run as `py driver.py DIR`, it
// runs body with $d the exchange folder and $src a folder of prepared
// .npy files.
func fakePython(t *testing.T, body string, arrays map[string][]int) string {
	t.Helper()
	dir := t.TempDir()
	for name, shape := range arrays {
		n := 1
		for _, x := range shape {
			n *= x
		}
		var b bytes.Buffer
		if err := pyref.WriteNPY(&b, shape, make([]float64, n)); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "out_"+name+".npy"), b.Bytes(), 0o644)
	}
	p := filepath.Join(dir, "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nd=\"$2\"\nsrc=\""+dir+"\"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func pythonManifest(t *testing.T, name string) string {
	m := strings.Replace(usertest.Manifest(name), "check: none", "check: {python: ref.py}", 1)
	return usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source, "ref.py": "import numpy as np\ndef reference(inputs, dims):\n    return {'Y': inputs['X'] * 2}\n"})
}

// The reference runs on a tiny shape; what it returns is checked against
// the output buffers.
func TestReferenceFindings(t *testing.T) {
	cases := []struct {
		name, body string
		arrays     map[string][]int
		level      Level
		want       []string
	}{
		{"ok", `cp "$src/out_Y.npy" "$d/"; echo '["Y"]' > "$d/outputs.json"`, map[string][]int{"Y": {2, 4}}, Note,
			[]string{"note    [reference] ", "ref.py: ran at f32 on a tiny shape (rows=8→2, cols=16→4) with ", "returned Y [2 4] <f8"}},
		{"import fails", `echo 'Traceback (most recent call last):' >&2; echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 5`, nil, Error,
			[]string{"error   [reference] ", "ref.py: on a tiny shape (rows=8→2, cols=16→4): check: python: ", "raised an exception", "No module named 'torch'"}},
		{"wrong name", `cp "$src/out_Z.npy" "$d/"; echo '["Z"]' > "$d/outputs.json"`, map[string][]int{"Z": {1, 4}}, Error,
			[]string{"error   [reference] ", "returned no Y (it returned Z): return a dict with every output buffer", "warning [reference] ", "returned Z, which is not an output buffer (outputs: Y)"}},
		{"wrong shape", `cp "$src/out_Y.npy" "$d/"; echo '["Y"]' > "$d/outputs.json"`, map[string][]int{"Y": {4}}, Error,
			[]string{"error   [reference] ", "returned Y with shape [4], but the buffer's shape is [2 4]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := pythonManifest(t, "ref_k")
			opt := noTools(t)
			opt.Python = fakePython(t, c.body, c.arrays)
			rep := Check(path, opt)
			r := rep.Manifests[0]
			mustContain(t, c.name, findingsOf(r), c.want...)
			wantExit := map[Level]int{Note: 0, Error: 1}[c.level]
			if rep.ExitCode() != wantExit || r.Broken() {
				t.Errorf("exit %d, want %d; broken %v", rep.ExitCode(), wantExit, r.Broken())
			}
		})
	}
}

// ctrl-C while the check runs: what it cut short says the check was
// stopped, and the reference is not run (no error blames it).
func TestReferenceTimeout(t *testing.T) {
	path := pythonManifest(t, "slow_ref")
	opt := noTools(t)
	opt.Python = fakePython(t, "exec sleep 30", nil)
	ctx, cancel := context.WithCancel(context.Background())
	opt.Context = ctx
	opt.CompileCUDA = func(profiler.Program, string) (cuda.CompileReport, error) {
		cancel() // ctrl-C while the check runs
		return cuda.CompileReport{Lowered: "k"}, nil
	}
	rep := Check(path, opt)
	if len(rep.Manifests) == 1 {
		got := findingsOf(rep.Manifests[0])
		mustContain(t, "cancelled", got, "the check was stopped (cancelled by user) before it finished")
		if strings.Contains(got, "error ") || strings.Contains(got, "context canceled") {
			t.Errorf("a cancelled check reports an error:\n%s", got)
		}
	}
}

// With a real Python that has NumPy, ref.py runs.
func TestReferenceRealPython(t *testing.T) {
	st := pyref.Probe(context.Background())
	if !st.OK() {
		t.Skip(st.Err)
	}
	path := pythonManifest(t, "real_ref")
	rep := Check(path, Options{Static: false, Python: st.Path, CompileCUDA: noTools(t).CompileCUDA, CompileMetal: noTools(t).CompileMetal})
	mustContain(t, "real python", findingsOf(rep.Manifests[0]), "returned Y [2 4] <f8")
}

// The report of one manifest, as `mltop check` prints it.
func TestReportGolden(t *testing.T) {
	path := pythonManifest(t, "golden_k")
	dir := filepath.Dir(path)
	opt := noTools(t)
	opt.Python = fakePython(t, `cp "$src/out_Y.npy" "$d/"; echo '["Y"]' > "$d/outputs.json"`, map[string][]int{"Y": {2, 4}})
	opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
		return cuda.CompileReport{Arch: "sm_90", Compiler: "NVRTC 13.0 from /cuda/lib/libnvrtc.so", Lowered: "k", StaticShared: 0}, nil
	}
	var b strings.Builder
	rep := Check(path, opt)
	rep.Write(&b, Note)
	got := strings.ReplaceAll(strings.ReplaceAll(b.String(), opt.Python, "PYTHON"), dir, "DIR")
	golden := filepath.Join("testdata", "report.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (go test -update):\n%s", golden, got)
	}
}

// The tiny shape keeps dims distinct, so a reference that transposes its
// result or reduces over the wrong axis returns the wrong shape.
func TestReferenceShapeErrorsAreCaught(t *testing.T) {
	st := pyref.Probe(context.Background())
	if !st.OK() {
		t.Skip(st.Err)
	}
	rowMean := strings.Replace(usertest.Manifest("mean_k"), "check: none", "check: {python: ref.py}", 1)
	rowMean = strings.Replace(rowMean, "{name: Y, dtype: T, shape: [rows, cols]", "{name: Y, dtype: T, shape: [rows]", 1)
	for _, c := range []struct{ name, manifest, ref, want string }{
		{"transposed", pythonManifestText("tr_k"), "    return {'Y': (inputs['X'] * 2).T}\n", "returned Y with shape [4 2], but the buffer's shape is [2 4]"},
		{"wrong axis", rowMean, "    return {'Y': inputs['X'].mean(axis=0)}\n", "returned Y with shape [4], but the buffer's shape is [2]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": c.manifest, "k.cu": usertest.Source,
				"ref.py": "import numpy as np\ndef reference(inputs, dims):\n" + c.ref})
			opt := noTools(t)
			opt.Python = st.Path
			rep := Check(path, opt)
			mustContain(t, c.name, findingsOf(rep.Manifests[0]), "error   [reference] ", c.want)
			if rep.ExitCode() != 1 {
				t.Errorf("exit %d, want 1", rep.ExitCode())
			}
		})
	}
}

func pythonManifestText(name string) string {
	return strings.Replace(usertest.Manifest(name), "check: none", "check: {python: ref.py}", 1)
}

// A reference that returns NaN or Inf from finite inputs is said: check
// cannot see the kernel, and a run passes only where the kernel returns
// the same non-finite values. A finite reference gets no such warning.
func TestReferenceNonFiniteIsSaid(t *testing.T) {
	st := pyref.Probe(context.Background())
	if !st.OK() {
		t.Skip(st.Err)
	}
	for _, c := range []struct {
		name, ref string
		warned    bool
	}{
		{"NaN", "    return {'Y': inputs['X'] * np.nan}\n", true},
		{"Inf in one place", "    y = inputs['X'] * 2\n    y.flat[0] = -np.inf\n    return {'Y': y}\n", true},
		{"finite", "    return {'Y': inputs['X'] * 2}\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": pythonManifestText("nan_k"), "k.cu": usertest.Source,
				"ref.py": "import numpy as np\ndef reference(inputs, dims):\n" + c.ref})
			opt := noTools(t)
			opt.Python = st.Path
			got := findingsOf(Check(path, opt).Manifests[0])
			if warned := strings.Contains(got, "NaN or Inf of"); warned != c.warned {
				t.Errorf("warned %v, want %v:\n%s", warned, c.warned, got)
			}
			if c.warned {
				mustContain(t, c.name, got, "warning [reference] ", "returned Y with ", "from finite inputs")
			}
		})
	}
}
