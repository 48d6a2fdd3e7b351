package sink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A ctrl-C'd sweep's file: spec WG=64 done, WG=32 cancelled, and a row of
// WG=128 cut short by the kill.
func interruptedFile(t *testing.T) (path string, done, cancelled, cut profiler.Result) {
	t.Helper()
	done, cancelled, cut = richResult(), richResult(), richResult()
	cancelled.Spec.Knobs = map[string]int{"WG": 32}
	cancelled.Status, cancelled.Stats = profiler.StatusCancelled, profiler.Stats{}
	cut.Spec.Knobs = map[string]int{"WG": 128}
	text := csvText(testCols.Header(), testCols.Row(done), testCols.Row(cancelled)) + strings.Join(testCols.Row(cut)[:9], ",")
	return writeFile(t, "sweep.csv", text), done, cancelled, cut
}

// statusesByKey reads path and lists each spec's rows' statuses.
func statusesByKey(t *testing.T, path string) map[string][]profiler.Status {
	t.Helper()
	rows, err := ReadCSV(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, mustRead(t, path))
	}
	m := map[string][]profiler.Status{}
	for _, r := range rows {
		m[r.Spec.Key()] = append(m[r.Spec.Key()], r.Status)
	}
	return m
}

// After --resume reruns the cancelled and the cut spec, the file holds
// exactly one row per spec.
func TestResumeLeavesOneRowPerSpec(t *testing.T) {
	path, done, cancelled, cut := interruptedFile(t)
	skip, err := ReadDone(path, testCols)
	if err != nil || !skip[done.Spec.Key()] || skip[cancelled.Spec.Key()] || skip[cut.Spec.Key()] {
		t.Fatalf("done %v, %v", skip, err)
	}
	s, err := OpenCSV(path, testCols, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []profiler.Result{cancelled, cut} {
		r.Status, r.Stats = profiler.StatusOK, done.Stats
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	got := statusesByKey(t, path)
	for _, r := range []profiler.Result{done, cancelled, cut} {
		if st := got[r.Spec.Key()]; len(st) != 1 {
			t.Errorf("%s: rows %v, want one", r.Spec.Key(), st)
		}
	}
	if len(got) != 3 {
		t.Errorf("specs %v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A file with nothing to drop is not rewritten (same inode, same bytes).
func TestResumeLeavesAFinishedFileAlone(t *testing.T) {
	path := writeFile(t, "f.csv", csvText(testCols.Header(), testCols.Row(richResult())))
	before, _ := os.Stat(path)
	crashAt = func(step string) error { t.Errorf("rewrote at %s", step); return nil }
	defer func() { crashAt = func(string) error { return nil } }()
	s, err := OpenCSV(path, testCols, true)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("the file was replaced")
	}
}

var errKilled = errors.New("killed")

// A kill between any two steps of the rewrite leaves the file as it was
// or as it is to be, never in between; the next --resume then goes on
// (and removes the killed rewrite's temporary file).
func TestResumeRewriteSurvivesAKillAtEveryStep(t *testing.T) {
	defer func() { crashAt = func(string) error { return nil } }()
	// the content the rewrite is to leave
	ref, _, _, _ := interruptedFile(t)
	old := string(mustRead(t, ref))
	if err := rewriteForResume(ref, testCols, ResumeOn{}); err != nil {
		t.Fatal(err)
	}
	want := string(mustRead(t, ref))
	if want == old {
		t.Fatal("the rewrite changed nothing")
	}
	for _, step := range []string{stepTempWritten, stepTempSynced, stepRenamed} {
		path, done, cancelled, _ := interruptedFile(t)
		// at every step, whether killed there or not, the file is whole
		crashAt = func(at string) error {
			if got := string(mustRead(t, path)); got != old && got != want {
				t.Errorf("at %s the file is neither the old nor the new one:\n%s", at, got)
			}
			if at == step {
				return errKilled
			}
			return nil
		}
		if _, err := OpenCSV(path, testCols, true); !errors.Is(err, errKilled) {
			t.Fatalf("kill at %s: %v", step, err)
		}
		if got := string(mustRead(t, path)); got != old && got != want {
			t.Errorf("killed at %s: the file is neither the old nor the new one:\n%s", step, got)
		}
		crashAt = func(string) error { return nil }
		s, err := OpenCSV(path, testCols, true)
		if err != nil {
			t.Fatalf("resume after a kill at %s: %v", step, err)
		}
		c := cancelled
		c.Status, c.Stats = profiler.StatusOK, done.Stats
		s.Write(c)
		s.Close()
		if got := statusesByKey(t, path); len(got[cancelled.Spec.Key()]) != 1 || len(got[done.Spec.Key()]) != 1 {
			t.Errorf("after a kill at %s and a resume: %v", step, got)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
			t.Errorf("after a kill at %s: temporary files left: %v", step, left)
		}
	}
}

// The rewrite keeps the file's permissions.
func TestResumeRewriteKeepsMode(t *testing.T) {
	path, _, _, _ := interruptedFile(t)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := rewriteForResume(path, testCols, ResumeOn{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after the rewrite", st.Mode().Perm())
	}
}

// Resuming where the file was written (or nowhere known), only a
// cancelled row is run again; every other outcome stays done. Resuming on
// another backend or device also runs again the rows the first could not
// run (invalid, error, compile_error), never a measured or crashed one.
func TestRunsAgain(t *testing.T) {
	for _, st := range knownStatuses {
		for _, on := range []ResumeOn{{}, {Backend: "cpu", Device: "AMD EPYC"}, {Backend: "cpu"}} {
			if got, want := on.RunsAgain(DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: st}), st == profiler.StatusCancelled; got != want {
				t.Errorf("%+v.RunsAgain(%s on the same cpu) = %v", on, st, got)
			}
		}
	}
	h100 := ResumeOn{Backend: "cuda", Device: "NVIDIA H100 80GB HBM3"}
	for _, c := range []struct {
		on   ResumeOn
		row  DoneRow
		want bool
	}{
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusInvalid}, true},
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusError}, true},
		{h100, DoneRow{Backend: "metal", Device: "Apple M2", Status: profiler.StatusCompileError}, true},
		{h100, DoneRow{Backend: "cuda", Device: "NVIDIA GeForce RTX 4090", Status: profiler.StatusInvalid}, true},
		{h100, DoneRow{Backend: "cuda", Device: "NVIDIA H100 80GB HBM3", Status: profiler.StatusInvalid}, false},
		{ResumeOn{Backend: "cuda"}, DoneRow{Backend: "cuda", Device: "NVIDIA GeForce RTX 4090", Status: profiler.StatusInvalid}, false}, // several devices: by backend
		{h100, DoneRow{Backend: "cuda", Status: profiler.StatusInvalid}, false},
		{h100, DoneRow{Status: profiler.StatusInvalid}, false}, // an older file without backend and device
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusOK}, false},
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusMismatch}, false},
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusCrashed}, false},
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusTimeout}, false},
		{h100, DoneRow{Backend: "cpu", Device: "AMD EPYC", Status: profiler.StatusUnchecked}, false},
	} {
		if got := c.on.RunsAgain(c.row); got != c.want {
			t.Errorf("%+v.RunsAgain(%+v) = %v, want %v", c.on, c.row, got, c.want)
		}
	}
}
