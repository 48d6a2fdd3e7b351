package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// reloadManifest is usertest's manifest called name, with factor·rows·cols
// FLOPs: a run's FLOP count says which definition planned it.
func reloadManifest(name, factor string) string {
	return strings.Replace(usertest.Manifest(name), `flops: "rows * cols"`, `flops: "`+factor+` * rows * cols"`, 1)
}

// writeReloadKernel writes reloadManifest(name, factor) and its source
// into a new temporary folder and returns the folder.
func writeReloadKernel(t *testing.T, name, factor string) string {
	t.Helper()
	return filepath.Dir(usertest.Write(t, map[string]string{"kernel.yaml": reloadManifest(name, factor), "k.cu": usertest.Source}))
}

// startWatch runs `mltop watch` with args in the background: next returns
// its next stdout line (failing the test when it ended), done its exit
// code, errb its stderr.
func startWatch(t *testing.T, args ...string) (next func() string, done <-chan int, errb *bytes.Buffer) {
	t.Helper()
	pr, pw := io.Pipe()
	errb = &bytes.Buffer{}
	d := make(chan int, 1)
	go func() {
		d <- Main(append([]string{"watch"}, args...), pw, errb)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	next = func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("watch ended early; stderr:\n%s", errb.String())
		}
		t.Log(lines.Text())
		return lines.Text()
	}
	return next, d, errb
}

// TestWorkerRunsReloadedKernel: after the session reloads a user kernel,
// the worker subprocess (which loaded the manifest at its start) plans the
// NEW definition: each request carries the family's version and a worker
// with another one registers its manifests again. The CPU backend cannot
// run a user source, but it plans it first: the FLOP count the result
// reports comes from the manifest the worker used.
func TestWorkerRunsReloadedKernel(t *testing.T) {
	dir := writeReloadKernel(t, "test_worker_reload", "1")
	manifest := filepath.Join(dir, "kernel.yaml")
	save := func(factor string) {
		t.Helper()
		if err := os.WriteFile(manifest, []byte(reloadManifest("test_worker_reload", factor)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := user.Register(dir); err != nil {
		t.Fatal(err)
	}
	pool, err := run.NewWorkerPool([]string{os.Args[0], "worker", "--backend", "cpu", "--kernel", dir}, nil)
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

// TestWatchCommand: `mltop watch DIR` runs the spec, then reruns it on each
// save and prints one line per run with the time from the save; a broken
// manifest prints a reload error naming file:line and keeps watching;
// --count stops after that many saves. The CPU backend plans a user
// kernel but cannot run its source: each run is `invalid` saying so.
func TestWatchCommand(t *testing.T) {
	dir := writeReloadKernel(t, "test_watch_cmd", "1")
	manifest := filepath.Join(dir, "kernel.yaml")
	good := reloadManifest("test_watch_cmd", "1")
	src := filepath.Join(dir, "k.cu")
	next, done, errb := startWatch(t, dir, "--backend", "cpu", "--isolate", "off", "--set", "WG=128", "--count", "2")
	l := next()
	if !strings.HasPrefix(l, "#1  start  invalid  the CPU backend cannot run user kernel test_watch_cmd") || strings.Contains(l, profiler.ErrCannotRun.Error()) || !strings.Contains(l, "after_start=") {
		t.Errorf("first run: %q", l)
	}
	os.WriteFile(src, []byte("// faster\n"+usertest.Source), 0o644)
	if l = next(); !strings.HasPrefix(l, "#2  k.cu saved  invalid  (the same reason as #1)") || strings.Contains(l, "cannot run") || !strings.Contains(l, "after_save=") {
		t.Errorf("rerun on save (the CPU's reason said once, then referred to): %q", l)
	}
	os.WriteFile(manifest, []byte(strings.Replace(good, "grid: [rows]", "grid: [rowz]", 1)), 0o644)
	if l = next(); !strings.HasPrefix(l, "#3  kernel.yaml saved  reload error") || !strings.Contains(l, manifest+":") || !strings.Contains(l, "rowz") {
		t.Errorf("broken manifest: %q", l)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d after --count 2; stderr:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "every run here is invalid; each save still re-checks the manifest") || !strings.Contains(errb.String(), "To measure, watch with --backend cuda\n") {
		t.Errorf("stderr does not say what watching on the CPU does:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "the kernel as loaded before stays") {
		t.Errorf("stderr lacks what to do:\n%s", errb.String())
	}
	if code, _, errs := runCLI(t, "watch", "attn_fwd"); code != 2 || !strings.Contains(errs, "built-in kernels do not change") {
		t.Errorf("watch of a built-in: %d %s", code, errs)
	}
}

// TestWorkerDropsRenamedKernel: after a user kernel's manifest renames it,
// the old name does not run the stale kernel in a worker that loaded it
// before: it is an unknown kernel (invalid), and the new name runs the new
// definition.
func TestWorkerDropsRenamedKernel(t *testing.T) {
	dir := writeReloadKernel(t, "test_worker_old", "1")
	manifest := filepath.Join(dir, "kernel.yaml")
	save := func(name, factor string) {
		t.Helper()
		if err := os.WriteFile(manifest, []byte(reloadManifest(name, factor)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := user.Register(dir); err != nil { // what the watcher does on save
			t.Fatal(err)
		}
	}
	save("test_worker_old", "1")
	pool, err := run.NewWorkerPool([]string{os.Args[0], "worker", "--backend", "cpu", "--kernel", dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	spec := func(name string) profiler.Spec {
		return profiler.Spec{Kernel: name, DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 8, "cols": 16}}
	}
	opt := profiler.DefaultOptions()
	if r := pool.Run(context.Background(), spec("test_worker_old"), opt, nil); r.FLOPs != 128 {
		t.Fatalf("first run: %v FLOPs (want 128), %s %s", r.FLOPs, r.Status, r.Error)
	}
	save("test_worker_new", "3")
	if r := pool.Run(context.Background(), spec("test_worker_old"), opt, nil); r.Status != profiler.StatusInvalid || !strings.Contains(r.Error, `unknown kernel "test_worker_old"`) {
		t.Errorf("the old name after the rename: %s, %v FLOPs, %q; want invalid: unknown kernel", r.Status, r.FLOPs, r.Error)
	}
	if r := pool.Run(context.Background(), spec("test_worker_new"), opt, nil); r.FLOPs != 384 {
		t.Errorf("the new name planned %v FLOPs, want 384: %s %s", r.FLOPs, r.Status, r.Error)
	}
}

// TestWatchCommandRename: `mltop watch` follows a rename in the manifest:
// the rerun is of the new name (the old one is no longer registered), and
// its line says so.
func TestWatchCommandRename(t *testing.T) {
	dir := writeReloadKernel(t, "test_watch_old", "1")
	manifest := filepath.Join(dir, "kernel.yaml")
	next, done, errb := startWatch(t, dir, "--backend", "cpu", "--isolate", "off", "--count", "1")
	if l := next(); !strings.Contains(l, "user kernel test_watch_old") {
		t.Errorf("first run: %q", l)
	}
	os.WriteFile(manifest, []byte(reloadManifest("test_watch_new", "1")), 0o644)
	if l := next(); !strings.HasPrefix(l, "#2  kernel.yaml saved (renamed test_watch_old → test_watch_new)  invalid") || !strings.Contains(l, "user kernel test_watch_new") {
		t.Errorf("rerun after the rename: %q", l)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, errb.String())
	}
	if _, err := profiler.Lookup("test_watch_old"); err == nil {
		t.Error("test_watch_old is still registered")
	}
}
