package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
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

// goodYAML is the shared manifest of a valid kernel, called t_kernel.
var goodYAML = usertest.Manifest("t_kernel")

func TestWatcher(t *testing.T) {
	y := strings.Replace(goodYAML, "name: t_kernel", "name: test_watch_kernel", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source})
	dir := filepath.Dir(path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, f, err := Start(ctx, path, Options{Debounce: 50 * time.Millisecond})
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
		os.WriteFile(src, []byte(usertest.Source+strings.Repeat("\n", i+1)), 0o644)
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
	os.WriteFile(tmp, []byte("// new\n"+usertest.Source), 0o644)
	if err := os.Rename(tmp, src); err != nil {
		t.Fatal(err)
	}
	r = next(t, w)
	if r.Err != nil || !strings.HasPrefix(r.Family.Source("cuda"), "// new") {
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
	path := usertest.Write(t, map[string]string{"kernel.yaml": "name: x\nbogus: 1\n"})
	_, _, err := Start(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("first load error: %v", err)
	}
}

// registered lists the registered families whose name starts with prefix.
func registered(prefix string) []string {
	var out []string
	for _, f := range profiler.Families(true) {
		if strings.HasPrefix(f.Name(), prefix) {
			out = append(out, f.Name())
		}
	}
	return out
}

// TestWatchRename: a manifest edited to give its kernel another name
// leaves exactly the new name registered (the old one no longer runs the
// stale kernel), and the reload says which name it had; a rename onto a
// built-in family's name is refused at the manifest's name line, and the
// kernel stays registered under its previous name.
func TestWatchRename(t *testing.T) {
	enginetest.Register() // test_scale: a family that is not a user kernel
	y := strings.Replace(goodYAML, "name: t_kernel", "name: test_rename_a", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, _, err := Start(ctx, path, Options{Debounce: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := registered("test_rename_"); !slices.Equal(got, []string{"test_rename_a"}) {
		t.Fatalf("registered after the first load: %v", got)
	}

	os.WriteFile(path, []byte(strings.Replace(y, "test_rename_a", "test_rename_b", 1)), 0o644)
	r := next(t, w)
	if r.Err != nil || r.Family.Name() != "test_rename_b" || r.Renamed != "test_rename_a" {
		t.Fatalf("rename: family %v, renamed %q, err %v; want test_rename_b renamed from test_rename_a", r.Family, r.Renamed, r.Err)
	}
	if got := registered("test_rename_"); !slices.Equal(got, []string{"test_rename_b"}) {
		t.Errorf("registered after the rename: %v, want only test_rename_b", got)
	}
	if f, err := profiler.Lookup("test_rename_b"); err != nil || f != profiler.Family(r.Family) {
		t.Errorf("test_rename_b is not the reloaded family: %v", err)
	}

	// onto a built-in family's name: refused, test_rename_b stays
	os.WriteFile(path, []byte(strings.Replace(y, "test_rename_a", "test_scale", 1)), 0o644)
	r = next(t, w)
	if r.Err == nil || !user.IsError(r.Err) {
		t.Fatalf("rename onto test_scale: %+v, want a manifest error", r)
	}
	for _, want := range []string{path + ":1:", "name: test_scale is a built-in family: pick another name", "stays registered as test_rename_b"} {
		if !strings.Contains(r.Err.Error(), want) {
			t.Errorf("error %q lacks %q", r.Err, want)
		}
	}
	if got := registered("test_rename_"); !slices.Equal(got, []string{"test_rename_b"}) {
		t.Errorf("registered after the refused rename: %v, want test_rename_b still", got)
	}
	if f, _ := profiler.Lookup("test_scale"); f == nil {
		t.Error("test_scale was unregistered")
	} else if _, isUser := f.(*user.Family); isUser {
		t.Error("the manifest replaced the built-in test_scale")
	}

	// renamed back: the failed attempt left nothing behind
	os.WriteFile(path, []byte(y), 0o644)
	r = next(t, w)
	if r.Err != nil || r.Renamed != "test_rename_b" {
		t.Fatalf("rename back: renamed %q, err %v; want from test_rename_b", r.Renamed, r.Err)
	}
	if got := registered("test_rename_"); !slices.Equal(got, []string{"test_rename_a"}) {
		t.Errorf("registered after renaming back: %v, want only test_rename_a", got)
	}
	cancel()
	for range w.Events() {
	}
}

// TestWatchTouch: a touch (or a save of the same bytes) moves only the
// modification time and reloads; a chmod alone does not.
func TestWatchTouch(t *testing.T) {
	y := strings.Replace(goodYAML, "name: t_kernel", "name: test_watch_touch", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source})
	src := filepath.Join(filepath.Dir(path), "k.cu")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, _, err := Start(ctx, path, Options{Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A chmod of the source, then a write of the manifest: the reload
	// names the manifest only.
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(y), 0o644)
	if r := next(t, w); r.Err != nil || !slices.Equal(r.Changed, []string{path}) {
		t.Fatalf("chmod then a manifest save: changed %v (err %v), want only the manifest", r.Changed, r.Err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	if r := next(t, w); r.Err != nil || !slices.Equal(r.Changed, []string{src}) {
		t.Fatalf("touch: changed %v (err %v), want the source", r.Changed, r.Err)
	}
}
