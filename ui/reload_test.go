package ui

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// The user kernel of the reload tests is usertest's: the fake executor
// plans it through the registry (the family the watcher installed) and
// "compiles" its source (fakeCompile): "// cost N" slows it by N µs,
// #error fails.
func reloadCU(cost string) string {
	return "// cost " + cost + "\n" + usertest.Source + "\n"
}

// reloadSession writes a user kernel named name into a temporary folder,
// watches it as `mltop --kernel DIR` does and starts a session on it with
// the fake executor. It returns the folder and the name (a suffix keeps it
// unique when the test runs again in the same process: -count).
func reloadSession(t *testing.T, name string, exec *fakeExec) (*harness, string, string) {
	t.Helper()
	opts, dir, name := userKernelOptions(t, name)
	return startEditing(t, exec, opts, 120, 40), dir, name
}

// userKernelOptions writes and watches the user kernel of reloadSession
// and returns the session's options with it selected.
func userKernelOptions(t *testing.T, name string) (Options, string, string) {
	t.Helper()
	for i := 2; ; i++ {
		if _, err := profiler.Lookup(name); err != nil {
			break
		}
		name = strings.TrimRight(strings.TrimRight(name, "0123456789"), "_") + "_" + itoa(i)
	}
	dir := filepath.Dir(usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest(name), "k.cu": reloadCU("10")}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events, fams, err := WatchKernels(ctx, []string{dir}, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != 1 || fams[0].Name() != name {
		t.Fatalf("WatchKernels loaded %v", fams)
	}
	f, err := profiler.Lookup(name)
	if err != nil {
		t.Fatalf("WatchKernels did not install %s: %v", name, err)
	}
	attn, _ := profiler.Lookup("attn_fwd")
	opts := testOptions()
	opts.Families = []profiler.Family{attn, f} // the user kernel second: Select picks it
	opts.Select = name
	opts.Events = events
	return opts, dir, name
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runAtWG128 sets the user kernel's WG to 128 (off its default) in the
// editor and runs it once: a reload must keep that value.
func runAtWG128(hs *harness) {
	hs.t.Helper()
	hs.keys("right")
	hs.waitFor("WG=128", func(m Model) bool { return m.spec().Knobs["WG"] == 128 })
	hs.keys("r")
	hs.waitFor("run 1", runs(1))
}

// runs is a condition: the session is idle with n runs in its history.
func runs(n int) func(Model) bool {
	return func(m Model) bool { return !m.running() && m.hist.len() == n }
}

// TestReloadRerunsOnSave: saving the source reloads the family, reruns the
// spec in the editor through the executor (which plans from the new
// definition), and the timing panel compares the rerun with the previous
// run and the pinned baseline; the history says the run came from a
// reload. The time from the save to the result is logged.
func TestReloadRerunsOnSave(t *testing.T) {
	exec := &fakeExec{}
	hs, dir, name := reloadSession(t, "test_reload_save", exec)
	hs.keys("r")
	hs.waitFor("run 1", runs(1)) // WG=64 + cost 10: 174 µs
	hs.keys("tab", "tab", "p", "shift+tab", "shift+tab")
	hs.waitFor("pinned, back in the editor", func(m Model) bool { return m.hist.base == 1 && m.focus == paneEditor })

	src := filepath.Join(dir, "k.cu")
	write(t, src, reloadCU("30")) // 194 µs
	saved := fileTime(t, src)
	var took time.Duration
	frame := hs.waitFor("rerun on save", func(m Model) bool {
		if runs(2)(m) {
			took = time.Since(saved)
			return true
		}
		return false
	})
	t.Logf("save → result with the fake executor: %s (debounce 30 ms)", took.Round(time.Millisecond))
	for _, want := range []string{
		name + " reloaded (k.cu saved) · run #2: ok · ",
		" after save · median 194 µs (+11.5% [+",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("status line lacks %q:\n%s", want, frame)
		}
	}
	// 194 µs against 174 µs: +11.5% time, 174/194 − 1 = −10.3% throughput.
	if !regexp.MustCompile(`◆#1 \+11\.5% slower ✓`).MatchString(frame) {
		t.Errorf("the timing panel does not compare the rerun with the baseline:\n%s", frame)
	}
	if !regexp.MustCompile(`2 reload +test_reload`).MatchString(frame) || !regexp.MustCompile(`◆1 r +test_reload`).MatchString(frame) {
		t.Errorf("the history does not say where each run came from:\n%s", frame)
	}

	write(t, src, reloadCU("20")) // 184 µs: faster than #2, slower than the baseline
	frame = hs.waitFor("second rerun", runs(3))
	if !regexp.MustCompile(`#2 -5\.2% faster ✓`).MatchString(frame) || !regexp.MustCompile(`◆#1 \+5\.7% slower ✓`).MatchString(frame) {
		t.Errorf("the timing panel lacks Δ against the previous run and the baseline:\n%s", frame)
	}
	exec.mu.Lock()
	n := len(exec.calls)
	exec.mu.Unlock()
	if n != 3 {
		t.Errorf("the executor ran %d specs, want 3", n)
	}
}

// TestReloadErrors: a manifest that no longer parses keeps the old family
// (still selectable and runnable) and shows the error with file:line; a
// source that does not compile shows the compiler's first error with the
// user's file:line, and the status line says what to do.
func TestReloadErrors(t *testing.T) {
	exec := &fakeExec{}
	hs, dir, name := reloadSession(t, "test_reload_broken", exec)
	hs.keys("r")
	hs.waitFor("run 1", runs(1))
	manifest := filepath.Join(dir, "kernel.yaml")
	good := usertest.Manifest(name)
	write(t, manifest, strings.Replace(good, "grid: [rows]", "grid: [rowz]", 1))
	frame := hs.waitFor("reload error", func(m Model) bool { return m.loadErr != nil })
	for _, want := range []string{
		"✗ reload failed · kernel.yaml:14",
		"unknown name 'rowz'",
		"the kernel as loaded before stays",
		"manifest error in kernel.yaml:14 — fix and save to reload",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen lacks %q:\n%s", want, frame)
		}
	}
	if !strings.Contains(frame, manifest+":14:") {
		t.Errorf("the error panel does not name the manifest's full path and line:\n%s", frame)
	}
	// The old family is still there: it runs.
	hs.keys("r")
	frame = hs.waitFor("run of the old family", runs(2))
	if !strings.Contains(frame, "run #2 "+name+": ok") {
		t.Errorf("the old family did not run after a broken save:\n%s", frame)
	}

	write(t, manifest, good) // fixed: the error goes, the spec reruns
	hs.waitFor("fixed", func(m Model) bool { return m.loadErr == nil && runs(3)(m) })

	src := filepath.Join(dir, "k.cu")
	write(t, src, "// a typo\n#error expected a ';'\n"+reloadCU("10"))
	frame = hs.waitFor("compile error", runs(4))
	for _, want := range []string{
		"run #4: compile error in k.cu:2 — fix and save to rerun",
		"✗ compile_error · run #4 · k.cu:2",
		src + "(2): error: expected a ';'",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen lacks %q:\n%s", want, frame)
		}
	}
	write(t, src, reloadCU("10"))
	frame = hs.waitFor("fixed source", runs(5))
	if !strings.Contains(frame, "run #5: ok") {
		t.Errorf("the fixed source did not rerun:\n%s", frame)
	}
}

// TestReloadManifestRebuildsEditor: a knob added to the manifest appears in
// the editor, values the new schema still allows are kept, a removed knob
// goes, and the history stays.
func TestReloadManifestRebuildsEditor(t *testing.T) {
	hs, dir, name := reloadSession(t, "test_reload_knobs", &fakeExec{})
	runAtWG128(hs)
	manifest := filepath.Join(dir, "kernel.yaml")
	good := usertest.Manifest(name)
	write(t, manifest, strings.Replace(good, "knobs:\n", "knobs:\n  UNROLL: {values: [1, 2, 4], default: 2, doc: loop unroll}\n", 1))
	frame := hs.waitFor("new knob", func(m Model) bool { return runs(2)(m) && len(m.editor.fields) == 5 })
	if !regexp.MustCompile(`UNROLL +2 +knob`).MatchString(frame) || !regexp.MustCompile(`WG +◂? ?128`).MatchString(frame) {
		t.Errorf("the editor does not show the new knob with WG kept at 128:\n%s", frame)
	}
	if !strings.Contains(frame, "UNROLL=2 WG=128") {
		t.Errorf("the rerun did not use the new knob:\n%s", frame)
	}
	// WG's values shrink to {64} and UNROLL goes: WG falls back to its default.
	write(t, manifest, strings.Replace(good, "values: [64, 128], default: 64", "values: [64], default: 64", 1))
	frame = hs.waitFor("knob removed", func(m Model) bool { return runs(3)(m) && len(m.editor.fields) == 4 })
	if strings.Contains(frame, "UNROLL  ") || !strings.Contains(frame, "history · 3 runs") {
		t.Errorf("the removed knob is still shown, or history was lost:\n%s", frame)
	}
	hs.waitFor("WG=64", func(m Model) bool { return m.spec().Knobs["WG"] == 64 })
}

func fileTime(t *testing.T, path string) time.Time {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

// TestCarrySpec: a new schema keeps the values it still allows.
func TestCarrySpec(t *testing.T) {
	old := profiler.Spec{Kernel: "k", DType: profiler.F16, Knobs: map[string]int{"WG": 128, "GONE": 3}, Dims: map[string]int{"rows": 9}, Flags: map[string]bool{"causal": true}}
	sc := profiler.Schema{
		Knobs:  []profiler.Param{{Name: "WG", Values: []int{64, 256}, Default: 64}, {Name: "NEW", Values: []int{1, 2}, Default: 2}},
		Dims:   []profiler.Param{{Name: "rows", Min: 1, Max: 100, Default: 8}},
		Flags:  []profiler.FlagParam{{Name: "causal"}},
		DTypes: []profiler.DType{profiler.F32, profiler.F16},
	}
	s := carrySpec(old, sc)
	if s.Knobs["WG"] != 64 || s.Knobs["NEW"] != 2 || s.Dims["rows"] != 9 || !s.Flags["causal"] || s.DType != profiler.F16 {
		t.Errorf("carried %v", s)
	}
	if _, ok := s.Knobs["GONE"]; ok {
		t.Error("a knob the schema dropped was kept")
	}
}

// TestStepMovesTiedDim: stepping H with ←/→ moves a tied Hkv along (Hkv
// follows H), as Spec.Set does for --set; once untied, Hkv stays.
func TestStepMovesTiedDim(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("down", "down", "down", "down", "down", "down") // BQ BK WM WN dtype B → H
	hs.waitFor("cursor on H", func(m Model) bool { f, _ := m.editor.field(); return f.name == "H" })
	hs.keys("right")
	var h, hkv int
	hs.waitFor("H stepped", func(m Model) bool {
		h, hkv = m.spec().Dims["H"], m.spec().Dims["Hkv"]
		return h != 8
	})
	if hkv != h {
		t.Fatalf("H stepped to %d but the tied Hkv stayed at %d", h, hkv)
	}
	hs.keys("down", "left") // Hkv down one step: untied
	hs.waitFor("Hkv untied", func(m Model) bool {
		hkv = m.spec().Dims["Hkv"]
		return hkv < h
	})
	hs.keys("up", "right")
	hs.waitFor("H steps again", func(m Model) bool {
		if m.spec().Dims["H"] == h {
			return false
		}
		if got := m.spec().Dims["Hkv"]; got != hkv {
			t.Errorf("an untied Hkv moved with H: %d → %d", hkv, got)
		}
		return true
	})
}

// TestReloadDuringRerun: a save while the previous save's rerun is still
// measuring reruns once more when it ends, with the newest files.
func TestReloadDuringRerun(t *testing.T) {
	exec := &fakeExec{block: true, release: make(chan struct{})}
	hs, dir, _ := reloadSession(t, "test_reload_twice", exec)
	src := filepath.Join(dir, "k.cu")
	write(t, src, reloadCU("30"))
	hs.waitFor("reload run measuring", func(m Model) bool {
		return m.running() && m.batch.origin == originReload && m.batch.progress.Phase == "measure"
	})
	write(t, src, reloadCU("40"))
	frame := hs.waitFor("second save noted", func(m Model) bool { return m.pendingReload != nil })
	if !strings.Contains(frame, "reruns when the run in flight ends") {
		t.Errorf("the status line does not say the save will rerun:\n%s", frame)
	}
	close(exec.release)
	frame = hs.waitFor("rerun after the first", runs(2))
	// WG=64 + cost 40: 204 µs, the newest source.
	if !strings.Contains(frame, "run #2: ok") || !strings.Contains(frame, "median 204 µs") {
		t.Errorf("the second save did not rerun with the newest source:\n%s", frame)
	}
}

// listed are the names in the session's kernel list.
func listed(m Model) []string {
	var out []string
	for _, f := range m.list.fams {
		out = append(out, f.Name())
	}
	return out
}

// TestReloadRename: a manifest saved with another name replaces the old
// entry of the list (the old name is not listed beside the new one, and
// is not registered), keeps the editor's values, and reruns under the new
// name; a rename onto a built-in family's name is a load error that keeps
// the kernel under its previous name, listed and runnable.
func TestReloadRename(t *testing.T) {
	exec := &fakeExec{}
	hs, dir, name := reloadSession(t, "test_reload_rename", exec)
	runAtWG128(hs)
	manifest := filepath.Join(dir, "kernel.yaml")
	good := usertest.Manifest(name)
	renamed := name + "_v2"
	write(t, manifest, strings.Replace(good, "name: "+name, "name: "+renamed, 1))
	frame := hs.waitFor("rerun under the new name", runs(2))
	var m Model
	hs.waitFor("model", func(mm Model) bool { m = mm; return true })
	if got := listed(m); !slices.Equal(got, []string{"attn_fwd", renamed}) {
		t.Errorf("the list holds %v, want [attn_fwd %s]", got, renamed)
	}
	if m.family() == nil || m.family().Name() != renamed || m.spec().Kernel != renamed || m.spec().Knobs["WG"] != 128 {
		t.Errorf("the editor has %v with %v, want %s with WG=128 kept", m.family(), m.spec(), renamed)
	}
	if _, err := profiler.Lookup(name); err == nil {
		t.Errorf("%s is still registered after the rename", name)
	}
	exec.mu.Lock()
	last := exec.calls[len(exec.calls)-1]
	exec.mu.Unlock()
	if last.Kernel != renamed {
		t.Errorf("the rerun ran %s, want %s", last.Kernel, renamed)
	}
	if !strings.Contains(frame, name+" reloaded as "+renamed+" (kernel.yaml saved)") {
		t.Errorf("the status line does not say the kernel was renamed:\n%s", frame)
	}

	write(t, manifest, strings.Replace(good, "name: "+name, "name: attn_fwd", 1))
	frame = hs.waitFor("refused", func(m Model) bool { return m.loadErr != nil })
	hs.waitFor("model", func(mm Model) bool { m = mm; return true })
	if !strings.Contains(m.loadErr.text, "kernel.yaml:1:7: name: attn_fwd is a built-in family: pick another name (the kernel stays registered as "+renamed) ||
		!strings.Contains(frame, "manifest error in kernel.yaml:1") {
		t.Errorf("the refused rename is not shown with its line (%q):\n%s", m.loadErr.text, frame)
	}
	if got := listed(m); !slices.Equal(got, []string{"attn_fwd", renamed}) {
		t.Errorf("after the refused rename the list holds %v, want [attn_fwd %s]", got, renamed)
	}
	if f, _ := profiler.Lookup("attn_fwd"); f == nil || f.Doc() == "" || strings.Contains(f.Doc(), "user kernel") {
		t.Errorf("attn_fwd is no longer the built-in family: %v", f)
	}
	hs.keys("r")
	frame = hs.waitFor("the kept kernel runs", runs(3))
	if !strings.Contains(frame, "run #3 "+renamed+": ok") {
		t.Errorf("the kernel as loaded before did not run:\n%s", frame)
	}
}
