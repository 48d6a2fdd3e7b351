package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/pyref"
)

// smallTranspose is a shape of examples/transpose that the emulation runs
// in a second (4 groups of 256 threads).
const smallTranspose = "height=64,width=48"

// exampleVariant copies examples/EXAMPLE to dir/sub with the kernel
// renamed to name (test_…: a test registers it, and `mltop list`'s golden
// must not see it), each old→new replacement made in file (all must be
// found), and returns the folder.
func exampleVariant(t *testing.T, example, dir, sub, name, file string, edits ...string) string {
	t.Helper()
	from := filepath.Join("examples", example)
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, sub)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if e.Name() == "kernel.yaml" {
			text = regexp.MustCompile(`(?m)^name: \S+`).ReplaceAllString(text, "name: "+name)
		}
		for i := 0; e.Name() == file && i+1 < len(edits); i += 2 {
			if !strings.Contains(text, edits[i]) {
				t.Fatalf("%s has no %q", file, edits[i])
			}
			text = strings.Replace(text, edits[i], edits[i+1], 1)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// transposeVariant is exampleVariant of examples/transpose, edits made in
// its Metal source.
// Its manifest names the Metal source only: the tests that use it are
// about the MSL emulation (the CUDA one has its own, and would compile
// the CUDA twin at every run).
func transposeVariant(t *testing.T, dir, sub, name string, edits ...string) string {
	t.Helper()
	out := exampleVariant(t, "transpose", dir, sub, name, "transpose.metal", edits...)
	y := filepath.Join(out, "kernel.yaml")
	b, err := os.ReadFile(y)
	if err != nil {
		t.Fatal(err)
	}
	metalOnly := strings.Replace(string(b), "sources: {cuda: transpose.cu, metal: transpose.metal}", "sources: {metal: transpose.metal}", 1)
	if metalOnly == string(b) {
		t.Fatal("examples/transpose/kernel.yaml: its sources: line changed; update transposeVariant")
	}
	if err := os.WriteFile(y, []byte(metalOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// needGxx skips a test that runs the emulation where g++ is missing.
func needGxx(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found: check --run needs it for the MSL emulation")
	}
}

// quietTools points NVRTC and Python at nothing, so that check does only
// what the test is about (the emulation), quickly.
func quietTools(t *testing.T) {
	t.Setenv(pyref.PythonEnv, filepath.Join(t.TempDir(), "no-python"))
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
}

// check --run: a right Metal kernel runs on the emulation and passes; an
// off-by-one and a wrong scale are mismatches naming the buffer and the
// worst element; a compile error does not run (exit 1, as from `check`
// alone: a failed check, not a run that could not start).
func TestCheckRunMetalOnEmulator(t *testing.T) {
	needGxx(t)
	quietTools(t)
	dir := t.TempDir()
	cases := []struct {
		name  string
		path  string
		code  int
		wants []string
	}{
		{"right", transposeVariant(t, dir, "right", "test_transpose_right"), 0, []string{
			"=> ran on the MSL emulation (test_transpose_right f32 TILE=32 ROWS=8 | height=64 width=48): ok (worst err 0 of bound 0; 3072 elements checked"}},
		{"off by one", transposeVariant(t, dir, "off_by_one", "test_transpose_off_by_one", "if (x < w && y < h)", "if (x < w - 1 && y < h)"), 1, []string{
			"=> ran on the MSL emulation (test_transpose_off_by_one f32 TILE=32 ROWS=8 | height=64 width=48): mismatch: 64 of 3072 checked elements outside their bound",
			"worst dst[47,"}},
		{"wrong scale", transposeVariant(t, dir, "scaled", "test_transpose_scaled", "T(tile[tx][j])", "T(2.0f * tile[tx][j])"), 1, []string{
			"mismatch: ", "of 3072 checked elements outside their bound atol 0 + rtol 0·|ref|", "worst dst["}},
		{"compile error", transposeVariant(t, dir, "typo", "test_transpose_typo", "const int h = p.h,", "const int h = p.height,"), 1, []string{
			"error   [compile]", "has no member named", "p.height",
			"=> not run on the MSL emulation: the checks above failed"}},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, "check", "--run", "--quiet", "--set", smallTranspose, c.path)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s\n%s", c.name, code, c.code, out, errs)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the output lacks %q:\n%s", c.name, w, out)
			}
		}
		if strings.Contains(out, "median") || strings.Contains(out, " µs") || strings.Contains(out, " ms") {
			t.Errorf("%s: an emulated time is printed as a timing:\n%s", c.name, out)
		}
	}
}

// A folder with a right and a wrong kernel: both run and are reported,
// the mismatch decides the exit code.
func TestCheckRunFolderReportsEach(t *testing.T) {
	needGxx(t)
	quietTools(t)
	dir := t.TempDir()
	transposeVariant(t, dir, "good", "test_transpose_good")
	transposeVariant(t, dir, "bad", "test_transpose_bad", "T(tile[tx][j])", "T(tile[tx][j] + 1.0f)")
	code, out, errs := runCLI(t, "check", "--run", "--quiet", "--set", smallTranspose, dir)
	if code != 1 || !strings.Contains(errs, "a kernel ran wrong (a mismatch, a crash or an error)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"(test_transpose_good)", "(test_transpose_bad)", "(test_transpose_good f32 TILE=32 ROWS=8 | height=64 width=48): ok (", "     only TILE=32,ROWS=8 ran: each value you ship needs its run (--set TILE=…)\n", "(test_transpose_bad f32 TILE=32 ROWS=8 | height=64 width=48): mismatch: 3072 of 3072"} {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

// What --run refuses: a shape given with --set too large to emulate
// (naming --set; a default one runs at the reference's small dims), no g++ (naming it), --set without --run, a --set name the
// kernel lacks, a Python reference without Python. A CUDA-only manifest is skipped, exit 0.
func TestCheckRunRefusals(t *testing.T) {
	quietTools(t)
	transpose := transposeVariant(t, t.TempDir(), "transpose", "test_transpose_refused")
	cases := []struct {
		name string
		args []string
		path string // "" keeps PATH
		code int
		want string
	}{
		{"default shape", []string{"--run", transpose}, "", 0,
			"=> test_transpose_refused f32 TILE=32 ROWS=8 | height=8192 width=8192 at its default dims is more than the MSL emulation runs: running at height=8192→2, width=8192→3 instead (--set gives another shape)\n  => ran on the MSL emulation (test_transpose_refused f32 TILE=32 ROWS=8 | height=2 width=3): ok"},
		{"a shape too large, given", []string{"--run", "--set", "height=8192,width=8192", transpose}, "", 2,
			"=> not run on the MSL emulation: test_transpose_refused f32 TILE=32 ROWS=8 | height=8192 width=8192 launches 16777216 threads, more than the 65536 the emulation runs (one OS thread per GPU thread): pick a smaller shape with --set (now height=8192,width=8192)"},
		{"no g++", []string{"--run", "--set", smallTranspose, transpose}, t.TempDir(), 2,
			"=> not run on the MSL emulation: g++ not found on PATH"},
		{"--set without --run", []string{"--set", smallTranspose, transpose}, "", 2,
			"--set and --dtype pick the spec that --run runs: add --run"},
		{"unknown dim", []string{"--run", "--set", "rows=64", transpose}, "", 2,
			"=> not run on the MSL emulation: --set"},
		{"no Python", []string{"--run", "--set", "rows=16,cols=64", exampleVariant(t, "metal_constants", t.TempDir(), "bias", "test_bias_act_no_python", "")}, "", 2,
			"=> not run on the MSL emulation: reference not run (no Python): the outputs would have nothing to be compared with; install Python 3 with NumPy, or set MLTOP_PYTHON"},
		{"CUDA without Python", []string{"--run", "--set", "rows=64,cols=256", exampleVariant(t, "row_sum", t.TempDir(), "row_sum", "test_row_sum_no_gpu", "")}, "", 2,
			"=> not run on the CUDA emulation: reference not run (no Python): the outputs would have nothing to be compared with"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.path != "" {
				t.Setenv("PATH", c.path)
			} else if c.code == 2 && c.name != "--set without --run" || c.code == 0 {
				needGxx(t)
			}
			code, out, errs := runCLI(t, append([]string{"check", "--quiet"}, c.args...)...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, c.code, c.want, out, errs)
			}
		})
	}
}

// Without a GPU, --run runs a CUDA manifest on the CUDA emulation: the
// right row sum passes, the one that skips the last column is a mismatch,
// and one with inline PTX is not run, naming the line (exit 0: a GPU runs
// it, the source is not wrong).
func TestCheckRunCUDAOnEmulation(t *testing.T) {
	needGxx(t)
	if ok, _ := cuda.Available(); ok {
		t.Skip("a CUDA GPU is here: --run runs CUDA on it (TestCheckRunCUDAOnGPU)")
	}
	if st := pyref.Probe(t.Context()); !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	dir := t.TempDir() // row_sum_broken reads ../row_sum/ref.py
	right := exampleVariant(t, "row_sum", dir, "row_sum", "test_row_sum_emu", "")
	broken := exampleVariant(t, "row_sum_broken", dir, "row_sum_broken", "test_row_sum_broken_emu", "")
	ptx := exampleVariant(t, "row_sum", dir, "row_sum_ptx", "test_row_sum_ptx", "row_sum.cu",
		"    partial[threadIdx.x] = acc;", "    asm volatile(\"membar.cta;\");\n    partial[threadIdx.x] = acc;")
	cases := []struct {
		name, path string
		code       int
		want       string
	}{
		{"right", right, 0, "=> ran on the CUDA emulation (no NVIDIA GPU here) (test_row_sum_emu f32 WG=256 | rows=64 cols=1000): ok (worst err "},
		{"broken", broken, 1, "=> ran on the CUDA emulation (no NVIDIA GPU here) (test_row_sum_broken_emu f32 WG=256 | rows=64 cols=1000): mismatch: 64 of 64 checked elements outside their bound"},
		{"inline PTX", ptx, 0, "=> CUDA not run: no NVIDIA GPU is found here (`mltop list` says why), and the emulation cannot run this kernel: inline PTX `asm(...)` at " +
			filepath.Join(dir, "row_sum_ptx", "row_sum.cu") + ":9: the CUDA emulation cannot run it; run `mltop check --run` on a machine with an NVIDIA GPU"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, "check", "--run", "--quiet", "--set", "rows=64,cols=1000", c.path)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s\n%s", c.name, code, c.code, c.want, out, errs)
		}
	}
}

// A Metal manifest checked against its ref.py: the right kernel passes,
// a wrong scale of the bias is a mismatch naming y's worst element.
func TestCheckRunMetalAgainstPython(t *testing.T) {
	needGxx(t)
	if st := pyref.Probe(t.Context()); !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	dir := t.TempDir()
	right := exampleVariant(t, "metal_constants", dir, "right", "test_bias_act", "")
	scaled := exampleVariant(t, "metal_constants", dir, "scaled", "test_bias_act_scaled", "bias_act.metal", "float(bias[c])", "0.5f * float(bias[c])")
	code, out, errs := runCLI(t, "check", "--run", "--quiet", "--set", "rows=16,cols=256", "--dtype", "f16", right)
	if code != 0 || !strings.Contains(out, "=> ran on the MSL emulation (test_bias_act f16 relu UNROLL=4 WG=128 | rows=16 cols=256): ok (worst err ") {
		t.Errorf("right kernel: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "check", "--run", "--quiet", "--set", "rows=16,cols=256", scaled)
	if code != 1 || !strings.Contains(out, "(test_bias_act_scaled f32 relu UNROLL=4 WG=128 | rows=16 cols=256): mismatch: ") || !strings.Contains(out, "; worst y[") {
		t.Errorf("wrong scale: exit %d\n%s\n%s", code, out, errs)
	}
}

// A reference that returns the wrong shape fails the check: exit 1 from
// `check` and from `check --run` alike (the run is not made), with the
// same closing line.
func TestCheckRunFailedCheckExitsAsCheck(t *testing.T) {
	needGxx(t)
	if st := pyref.Probe(t.Context()); !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	shape := exampleVariant(t, "metal_constants", t.TempDir(), "shape", "test_bias_act_shape", "ref.py", `return {"y": v}`, `return {"y": v[:, :-1]}`)
	for _, args := range [][]string{{"check", "--quiet"}, {"check", "--quiet", "--run", "--set", "rows=16,cols=256"}} {
		code, out, errs := runCLI(t, append(args, shape)...)
		if code != 1 || !strings.Contains(out, "error   [reference]") || !strings.Contains(errs, "a check failed: see the errors above") {
			t.Errorf("%v: exit %d, want 1 and \"a check failed\"\n%s\n%s", args, code, out, errs)
		}
	}
}

// ctrl-C during --run: the emulated run stops and says cancelled (exit 1),
// and the command says it was cancelled.
func TestCheckRunCancelled(t *testing.T) {
	needGxx(t)
	quietTools(t)
	transpose := transposeVariant(t, t.TempDir(), "transpose", "test_transpose_cancelled")
	m := lint.Check(transpose, lint.Options{}).Manifests[0]
	var out, errs bytes.Buffer
	s := newTestSession(&out, &errs)
	a := &checkArgs{arch: cuda.DefaultCheckArch, run: true, sets: []string{smallTranspose}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &checkRunner{s: s, a: a}
	defer r.close()
	if code := r.runMetal(ctx, &out, m); code != exitFailed || !strings.Contains(out.String(), "): cancelled: ") {
		t.Errorf("a cancelled run: exit %d\n%s", code, out.String())
	}
	err := runCheck(ctx, s, a, []string{transpose})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(ee.msg, "cancelled (ctrl-C or SIGTERM)") {
		t.Errorf("check --run cancelled: %v", err)
	}
}

// On a CUDA GPU, --run runs a CUDA manifest there through a worker: the
// right row sum passes, the one that skips the last column is a mismatch.
func TestCheckRunCUDAOnGPU(t *testing.T) {
	if ok, why := cuda.Available(); !ok {
		t.Skip("no CUDA here: " + why)
	}
	if st := pyref.Probe(t.Context()); !st.OK() {
		t.Skipf("needs NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	dir := t.TempDir() // row_sum_broken reads ../row_sum/ref.py
	right := exampleVariant(t, "row_sum", dir, "row_sum", "test_row_sum_gpu", "")
	broken := exampleVariant(t, "row_sum_broken", dir, "row_sum_broken", "test_row_sum_broken_gpu", "")
	code, out, errs := runCLI(t, "check", "--run", "--quiet", "--set", "rows=256,cols=1000", right)
	if code != 0 || !strings.Contains(out, "=> ran on the GPU (") || !strings.Contains(out, "): ok (worst err ") {
		t.Errorf("row_sum: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "check", "--run", "--quiet", "--set", "rows=256,cols=1000", broken)
	if code != 1 || !strings.Contains(out, "): mismatch: ") || !strings.Contains(out, "worst Y[") {
		t.Errorf("row_sum_broken: exit %d\n%s\n%s", code, out, errs)
	}
}
