package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

const workerReloadYAML = `name: test_worker_reload
sources: {cuda: k.cu}
dtypes: [f32]
knobs:
  WG: {values: [64, 128], default: 64}
dims:
  rows: {default: 8}
  cols: {default: 16}
buffers:
  - {name: X, dtype: T, shape: [rows, cols]}
  - {name: Y, dtype: T, shape: [rows, cols], out: true}
dispatches:
  - {entry: k, grid: [rows], threads: [WG], args: [X, Y, rows, cols]}
work: {flops: "FACTOR * rows * cols"}
check: none
`

// TestWorkerRunsReloadedKernel: after the session reloads a user kernel,
// the worker subprocess (which loaded the manifest at its start) plans the
// NEW definition: each request carries the family's version and a worker
// with another one registers its manifests again. The CPU backend cannot
// run a user source, but it plans it first: the FLOP count the result
// reports comes from the manifest the worker used.
func TestWorkerRunsReloadedKernel(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "kernel.yaml")
	save := func(factor string) {
		t.Helper()
		if err := os.WriteFile(manifest, []byte(strings.Replace(workerReloadYAML, "FACTOR", factor, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	save("1")
	os.WriteFile(filepath.Join(dir, "k.cu"), []byte(`extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {}`), 0o644)
	t.Setenv(user.PathsEnv, "")
	if _, err := user.Register(dir); err != nil {
		t.Fatal(err)
	}
	user.AddToEnv(dir)
	pool, err := run.NewWorkerPool([]string{os.Args[0], "worker", "--backend", "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	spec := profiler.Spec{Kernel: "test_worker_reload", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 8, "cols": 16}}
	opt := profiler.DefaultOptions()
	if r := pool.Run(context.Background(), spec, opt, nil); r.FLOPs != 128 {
		t.Fatalf("first run: %v FLOPs (want 128), %s %s", r.FLOPs, r.Status, r.Error)
	}
	save("3") // what the watcher does on save: reload and install
	if _, err := user.Register(dir); err != nil {
		t.Fatal(err)
	}
	r := pool.Run(context.Background(), spec, opt, nil)
	if r.FLOPs != 384 {
		t.Errorf("after the reload the worker planned %v FLOPs, want 384 (the old kernel ran): %s %s", r.FLOPs, r.Status, r.Error)
	}
	if strings.Contains(r.Error, "the worker") {
		t.Errorf("the worker reported a reload problem: %s", r.Error)
	}
}
