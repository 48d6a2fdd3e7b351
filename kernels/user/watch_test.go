package user

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

func next(t *testing.T, w *Watcher) Reload {
	t.Helper()
	select {
	case r, ok := <-w.Events():
		if !ok {
			t.Fatal("watcher closed")
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reload within 10 s")
	}
	return Reload{}
}

func TestWatcher(t *testing.T) {
	y := strings.Replace(goodYAML, "name: t_kernel", "name: test_watch_kernel", 1)
	path := writeKernel(t, map[string]string{"kernel.yaml": y, "k.cu": goodCU})
	dir := filepath.Dir(path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, f, err := Watch(ctx, path, WatchOptions{Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "test_watch_kernel" || len(w.Files()) != 2 {
		t.Fatalf("first load %s, files %v", f.Name(), w.Files())
	}
	if got, err := profiler.Lookup("test_watch_kernel"); err != nil || got != profiler.Family(f) {
		t.Fatalf("not installed: %v", err)
	}

	// 1. the source is written in place (several writes: one reload)
	src := filepath.Join(dir, "k.cu")
	for i := range 3 {
		os.WriteFile(src, []byte(goodCU+strings.Repeat("\n", i+1)), 0o644)
	}
	r := next(t, w)
	if r.Err != nil || r.Family == nil || len(r.Changed) != 1 || r.Changed[0] != src {
		t.Fatalf("in-place save: %+v", r)
	}
	if got, _ := profiler.Lookup("test_watch_kernel"); got != profiler.Family(r.Family) {
		t.Error("the reloaded family did not replace the old one")
	}

	// 2. an editor that saves by rename
	tmp := filepath.Join(dir, ".k.cu.swp")
	os.WriteFile(tmp, []byte("// new\n"+goodCU), 0o644)
	if err := os.Rename(tmp, src); err != nil {
		t.Fatal(err)
	}
	r = next(t, w)
	if r.Err != nil || !strings.HasPrefix(r.Family.src["cuda"].code, "// new") {
		t.Fatalf("rename save: %+v", r)
	}

	// 3. a broken manifest: an error naming file:line, the old family stays
	os.WriteFile(path, []byte(strings.Replace(y, "grid: [rows]", "grid: [rowz]", 1)), 0o644)
	r = next(t, w)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "unknown name 'rowz'") || !strings.Contains(r.Err.Error(), path+":14:") {
		t.Fatalf("broken manifest: %+v", r)
	}
	if got, _ := profiler.Lookup("test_watch_kernel"); got == nil {
		t.Error("the old family was dropped")
	}

	// 4. fixed, with a new knob: the schema follows
	os.WriteFile(path, []byte(strings.Replace(y, "knobs:\n", "knobs:\n  UNROLL: {values: [1, 2, 4], default: 2}\n", 1)), 0o644)
	r = next(t, w)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if _, ok := r.Family.Schema().Knob("UNROLL"); !ok {
		t.Error("the new knob is missing")
	}
	got, _ := profiler.Lookup("test_watch_kernel")
	if _, ok := got.Schema().Knob("UNROLL"); !ok {
		t.Error("the registry has the old schema")
	}

	// 5. unrelated files in the folder do not trigger a reload
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	select {
	case r := <-w.Events():
		t.Errorf("reload for an unrelated file: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	for range w.Events() {
	}
}

func TestWatchFirstLoadError(t *testing.T) {
	path := writeKernel(t, map[string]string{"kernel.yaml": "name: x\nbogus: 1\n"})
	_, _, err := Watch(context.Background(), path, WatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("first load error: %v", err)
	}
}

func TestVersionFollowsFiles(t *testing.T) {
	y := strings.Replace(goodYAML, "check: none", "check: {python: ref.py}", 1)
	path := writeKernel(t, map[string]string{"kernel.yaml": y, "k.cu": goodCU, "ref.py": "def reference(i, d):\n    return {}\n"})
	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Load(path)
	if a.Version() == "" || a.Version() != b.Version() {
		t.Fatalf("versions %q %q", a.Version(), b.Version())
	}
	os.WriteFile(filepath.Join(filepath.Dir(path), "ref.py"), []byte("def reference(i, d):\n    return {'Y': 1}\n"), 0o644)
	c, _ := Load(path)
	if c.Version() == a.Version() {
		t.Error("editing ref.py kept the version")
	}
}
