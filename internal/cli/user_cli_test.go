package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// The user-kernel CLI on the CPU backend: everything that needs no GPU.

const cliKernel = `// a scale kernel
#include "mltop_user.cuh"
extern "C" __global__ void scale(const T* __restrict__ x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = from_f32<T>(2.0f * to_f32(x[i]));
}
`

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUserKernelCLI(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "scale.cu")
	os.WriteFile(src, []byte(cliKernel), 0o644)
	code, out, errs := runCLI(t, "new", "cli_scale", "--from", src, "--entry", "scale")
	if code != 0 || !strings.Contains(out, "wrote "+filepath.Join(dir, "kernel.yaml")) || !strings.Contains(errs, "guessed grid") {
		t.Fatalf("new: %d\n%s\n%s", code, out, errs)
	}
	manifest := filepath.Join(dir, "kernel.yaml")
	code, _, errs = runCLI(t, "new", "cli_scale", "--from", src, "--entry", "scale")
	if code != 2 || !strings.Contains(errs, "exists") {
		t.Errorf("new over an existing manifest: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "new", "x", "--from", src, "--entry", "nope")
	if code != 2 || !strings.Contains(errs, `has no kernel "nope" (kernels found: scale)`) {
		t.Errorf("new with a wrong entry: %d %s", code, errs)
	}
	code, out, errs = runCLI(t, "list", "--kernel", dir)
	if code != 0 || !strings.Contains(out, "cli_scale — TODO one line") || !strings.Contains(out, "n ") {
		t.Fatalf("list --kernel: %d\n%s\n%s", code, out, errs)
	}
	for _, isolate := range []string{"off", "on"} {
		code, out, errs = runCLI(t, "run", manifest, "--backend", "cpu", "--isolate", isolate, "--set", "n=4096,WG=128", "--quiet")
		if code != 2 || !strings.Contains(errs, "invalid spec: the CPU backend cannot run user kernel cli_scale") || !strings.Contains(out, "threadgroup memory") {
			t.Errorf("run on the CPU (isolate %s): %d\n%s\n%s", isolate, code, out, errs)
		}
		// The reason only: not the runner's "compiling NAME (ENTRY): " nor
		// ErrCannotRun's text, on stderr or in the result block.
		if strings.Contains(errs+out, "compiling ") || strings.Contains(errs+out, profiler.ErrCannotRun.Error()) {
			t.Errorf("run on the CPU (isolate %s): the reason carries the runner's wrapping:\n%s\n%s", isolate, out, errs)
		}
	}
	code, _, errs = runCLI(t, "run", manifest, "--backend", "cpu", "--set", "WG=100")
	if code != 2 || !strings.Contains(errs, "WG=100 is not allowed") {
		t.Errorf("bad knob: %d %s", code, errs)
	}
	// a sweep over the user kernel: an invalid row on the CPU, exit 0
	sweep := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(sweep, []byte("backend: cpu\nsweeps:\n  - kernel: cli_scale\n    knobs: {WG: [64, 128]}\n    dims: {n: 1000}\n"), 0o644)
	csvPath := filepath.Join(dir, "out.csv")
	code, _, errs = runCLI(t, "--config", sweep, "--kernel", manifest, "--csv", csvPath, "--quiet", "--isolate", "off")
	b, _ := os.ReadFile(csvPath)
	if code != 2 || strings.Count(string(b), "invalid") != 2 || !strings.Contains(string(b), ",WG,dim.n,n,") {
		t.Errorf("sweep: %d %s\n%s", code, errs, b)
	}
	// a broken manifest: exit 2 naming file:line:col
	os.WriteFile(manifest, []byte("name: cli_scale\nsourcez: {}\n"), 0o644)
	code, _, errs = runCLI(t, "run", manifest, "--backend", "cpu")
	if code != 2 || !strings.Contains(errs, manifest+":2:1") || !strings.Contains(errs, "sourcez") {
		t.Errorf("broken manifest: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "list", "--kernel", filepath.Join(dir, "missing"))
	if code != 2 || !strings.Contains(errs, "missing") {
		t.Errorf("missing path: %d %s", code, errs)
	}
}

// The examples load, plan and validate without a GPU.
func TestExamplesList(t *testing.T) {
	code, out, errs := runCLI(t, "list", "--kernel", "examples")
	if code != 0 {
		t.Fatalf("list --kernel examples: %d %s", code, errs)
	}
	for _, n := range []string{"user_softmax", "user_softmax_naive", "user_matmul", "user_transpose"} {
		if !strings.Contains(out, n+" — ") {
			t.Errorf("list lacks %s", n)
		}
	}
}

// scaffoldKernel makes a folder with k/scale.cu (cliKernel) and the user
// kernel name that `mltop new` scaffolds from it in k/kernel.yaml, and an
// empty sweeps/ for sweep files that name it by a relative path. It
// returns the folder.
func scaffoldKernel(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "k"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sweeps"), 0o755)
	src := filepath.Join(dir, "k", "scale.cu")
	os.WriteFile(src, []byte(cliKernel), 0o644)
	if code, out, errs := runCLI(t, "new", name, "--from", src, "--entry", "scale"); code != 0 {
		t.Fatalf("new: %d %s %s", code, out, errs)
	}
	return dir
}

// A sweep file names a user kernel by a path relative to itself; workers
// get it too (an isolated run finds the kernel: the row is the CPU
// backend's refusal, not an unknown kernel).
func TestSweepKernelPath(t *testing.T) {
	dir := scaffoldKernel(t, "sweep_scale")
	sweep := filepath.Join(dir, "sweeps", "s.yaml")
	os.WriteFile(sweep, []byte("backend: cpu\nsweeps:\n  - kernel: ../k/kernel.yaml\n    knobs: {WG: [64, 128]}\n    dims: {n: 1000}\n    where: [\"n % WG != 0 && sizeof(T) == 4\"]\n"), 0o644)
	csvPath := filepath.Join(dir, "out.csv")
	code, _, errs := runCLI(t, "--config", sweep, "--csv", csvPath, "--quiet", "--isolate", "on")
	b, _ := os.ReadFile(csvPath)
	if code != 2 || strings.Count(string(b), "invalid") != 2 || !strings.Contains(string(b), "cannot run user kernel sweep_scale") {
		t.Errorf("sweep with a kernel path: %d %s\n%s", code, errs, b)
	}
	// The worker got the kernel on its command line, not through the
	// environment it inherits (MLTOP_KERNELS, the old hand-over).
	if v := os.Getenv("MLTOP_KERNELS"); v != "" {
		t.Errorf("MLTOP_KERNELS=%q: the sweep's kernel went into the environment", v)
	}
	// a broken manifest: the sweep's file:line:col and the manifest's own error
	os.WriteFile(sweep, []byte("sweeps:\n  - kernel: ../k/broken.yaml\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "k", "broken.yaml"), []byte("name: sweep_broken\nsourcez: {}\n"), 0o644)
	code, _, errs = runCLI(t, "--config", sweep, "--backend", "cpu")
	if code != 2 || !strings.Contains(errs, sweep+":2:13: sweeps[0].kernel: cannot load the user kernel ../k/broken.yaml") || !strings.Contains(errs, "broken.yaml:2:1") || !strings.Contains(errs, "sourcez") {
		t.Errorf("broken manifest in a sweep: %d %s", code, errs)
	}
}

// A user kernel loaded after the worker started (a sweep file opened in the
// interactive session) reaches it: the pool starts a fresh worker when the
// environment changed, so the row is the CPU backend's refusal of the
// kernel, not "unknown kernel".
func TestWorkerSeesKernelsLoadedLater(t *testing.T) {
	s := newTestSession(io.Discard, io.Discard)
	exec, err := s.openExecutor(t.Context(), "cpu", "on")
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	dir := t.TempDir()
	src := filepath.Join(dir, "scale.cu")
	os.WriteFile(src, []byte(cliKernel), 0o644)
	if code, out, errs := runCLI(t, "new", "late_scale", "--from", src, "--entry", "scale"); code != 0 {
		t.Fatalf("new: %d %s %s", code, out, errs)
	}
	name, err := s.resolveSweepKernel(dir)
	if err != nil || name != "late_scale" {
		t.Fatalf("resolve: %q %v", name, err)
	}
	res := exec.Run(context.Background(), profiler.Spec{Kernel: "late_scale", DType: profiler.F32}, profiler.DefaultOptions(), nil)
	if res.Status != profiler.StatusInvalid || !strings.Contains(res.Error, "cannot run user kernel late_scale") {
		t.Errorf("%s: %s", res.Status, res.Error)
	}
}

// TestMergeUserKernels: merge --config loads a sweep of user kernels as the
// sweep did: kernel: ./path entries relative to the sweep file, names
// with --kernel PATH; without it the error says how.
func TestMergeUserKernels(t *testing.T) {
	dir := scaffoldKernel(t, "merge_scale")
	// Before anything registered merge_scale in this process.
	csvPath := filepath.Join(dir, "out.csv")
	byName := filepath.Join(dir, "sweeps", "name.yaml")
	os.WriteFile(byName, []byte("backend: cpu\nsweeps:\n  - kernel: merge_scale\n    knobs: {WG: [64, 128]}\n    dims: {n: 1000}\n"), 0o644)
	code, _, errs := runCLI(t, "merge", csvPath, "-o", filepath.Join(dir, "m2.csv"), "--config", byName)
	if code != 2 || !strings.Contains(errs, `unknown kernel "merge_scale"`) || !strings.Contains(errs, "add --kernel PATH or write kernel: ./path/kernel.yaml in the sweep file") {
		t.Errorf("merge without --kernel: %d %s", code, errs)
	}
	byPath := filepath.Join(dir, "sweeps", "path.yaml")
	os.WriteFile(byPath, []byte("backend: cpu\nsweeps:\n  - kernel: ../k/kernel.yaml\n    knobs: {WG: [64, 128]}\n    dims: {n: 1000}\n"), 0o644)
	if code, _, errs := runCLI(t, "--config", byPath, "--csv", csvPath, "--quiet", "--isolate", "off"); code != 2 {
		t.Fatalf("sweep: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "merge", csvPath, "-o", filepath.Join(dir, "m1.csv"), "--config", byPath)
	if code != 0 || !strings.Contains(errs, "every spec of") {
		t.Errorf("merge --config with kernel: ../k/kernel.yaml: %d %s", code, errs)
	}
	// The scaffolded dim n (the source's int n) is the column dim.n beside
	// the sample count n: merge wrote it back, and --resume reads it.
	if b, _ := os.ReadFile(filepath.Join(dir, "m1.csv")); !strings.Contains(string(b), ",WG,dim.n,n,") || strings.Count(string(b), "\n") != 3 {
		t.Errorf("merged CSV:\n%s", b)
	}
	if code, _, errs := runCLI(t, "--config", byPath, "--resume", csvPath, "--isolate", "off"); code != 0 || !strings.Contains(errs, "2 skipped: already in the --resume file") {
		t.Errorf("--resume: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "merge", csvPath, "-o", filepath.Join(dir, "m3.csv"), "--config", byName, "--kernel", filepath.Join(dir, "k"))
	if code != 0 || !strings.Contains(errs, "every spec of") {
		t.Errorf("merge --kernel: %d %s", code, errs)
	}
}

// run on the CPU backend refuses a user kernel saying exactly what runs
// it: a Metal-only manifest is not sent to CUDA, and check --run on the
// MSL emulation is named with its folder; a CUDA-only one names CUDA
// and check --run on the CUDA emulation; one with both sources names both
// and the emulation.
func TestRunUserKernelOnCPUSaysWhatRunsIt(t *testing.T) {
	dir := t.TempDir()
	metal := exampleVariant(t, "metal_constants", dir, "metal", "test_cpu_metal_only", "")
	cudaOnly := exampleVariant(t, "row_sum", dir, "cuda", "test_cpu_cuda_only", "")
	for _, c := range []struct {
		name, path string
		want       string
		not        string
	}{
		{"Metal only", metal, "test_cpu_metal_only: it runs only built-in families' Go code; its only source is Metal: --backend metal runs it on a Mac; without one, `mltop check --run " + metal + " --set …` (a small shape) runs it on the MSL emulation; CUDA cannot run it", "--backend cuda"},
		{"CUDA only", cudaOnly, "test_cpu_cuda_only: it runs only built-in families' Go code; its only source is CUDA: --backend cuda runs it on an NVIDIA GPU; without one, `mltop check --run " + cudaOnly + " --set …` (a small shape) runs it on the CUDA emulation", "metal"},
		{"both", exampleVariant(t, "softmax", dir, "both", "test_cpu_both", ""), "test_cpu_both: it runs only built-in families' Go code; use --backend cuda (an NVIDIA GPU) or metal (a Mac); without either, `mltop check --run ", "\x00"},
	} {
		code, out, errs := runCLI(t, "run", "--backend", "cpu", c.path)
		line, _, _ := strings.Cut(errs, "\n")
		if code != exitBadInput || !strings.Contains(line, c.want) || strings.Contains(line, c.not) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s\n%s", c.name, code, c.want, out, errs)
		}
	}
}
