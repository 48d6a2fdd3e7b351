package ui

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// TestRealCPUBackend drives a real run through the CPU backend: pick
// softmax_bwd, shrink it, run, and see status ok with a passing verdict.
func TestRealCPUBackend(t *testing.T) {
	hs := startOnCPU(t, 0.5)
	smallSoftmaxBwd(hs)
	hs.keys("r")
	frame := hs.waitFor("cpu run", idle(1))
	var res profiler.Result
	hs.waitFor("result", func(m Model) bool { res = m.hist.entries[0].res; return true })
	if res.Status != profiler.StatusOK {
		t.Fatalf("cpu run status %s: %s\n%s", res.Status, res.Error, frame)
	}
	if res.Verdict == nil || !res.Verdict.Pass || res.Stats.N < 3 {
		t.Errorf("cpu run: verdict %+v, %d samples; want a pass and at least 3 samples", res.Verdict, res.Stats.N)
	}
	if !strings.Contains(frame, "✓ PASS") || !strings.Contains(frame, "GB/s") {
		t.Errorf("cpu run results not on screen:\n%s", frame)
	}
}

// TestUserKernelOnCPUSaysWhy: a user kernel on the CPU backend, which can
// never run it. Before the run the editor says it needs a GPU backend
// instead of a green ✓; after it, at 80×24, the status line carries the
// reason and the error panel starts with it, without the runner's
// "compiling NAME (ENTRY): " prefix.
func TestUserKernelOnCPUSaysWhy(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatalf("cpu backend: %v", err)
	}
	r := run.NewRunner(be)
	defer r.Close()
	opts, _, name := userKernelOptions(t, "my_rowsum")
	hs := start(t, r, opts, 80, 24)
	frame := hs.waitFor("user kernel picked", func(m Model) bool { return m.family() != nil && m.family().Name() == name })
	if !strings.Contains(frame, "needs a GPU backend") || !strings.Contains(frame, "(--backend cuda) ·") || strings.Contains(frame, "✓ TGM") {
		t.Errorf("before the run the editor should say the kernel needs a GPU backend, not ✓:\n%s", frame)
	}
	hs.keys("r")
	frame = hs.waitFor("invalid run", idle(1))
	checkFrame(t, frame, 80, 24)
	lines := strings.Split(frame, "\n")
	status := lines[len(lines)-2]
	// its only source is CUDA: the backend named is CUDA alone
	if !strings.HasPrefix(status, "run #1 "+name+": invalid — needs a GPU backend: use --backend cuda") || strings.Contains(status, "or metal") {
		t.Errorf("the status line should carry the reason: %q", status)
	}
	if strings.Contains(frame, "compiling ") || strings.Contains(frame, "cannot run the program") {
		t.Errorf("the error panel repeats the runner's prefix or the sentinel:\n%s", frame)
	}
	if !strings.Contains(frame, "use --backend cuda") || strings.Contains(frame, "cuda or metal") {
		t.Errorf("the error panel lacks what to do:\n%s", frame)
	}
	if t.Failed() {
		t.Log(frame)
	}
}

// TestTuneOnRealCPUBackend: T through the real engine on the CPU backend:
// softmax_bwd at a small shape, all six WG values, the best re-measured
// and the winner loaded into the editor.
func TestTuneOnRealCPUBackend(t *testing.T) {
	hs := startOnCPU(t, 0.05)
	smallSoftmaxBwd(hs)
	hs.keys("T")
	hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptTune })
	hs.keys("enter")
	var tr *tuneRun
	var loaded map[string]int
	frame := hs.waitFor("the end of the search", func(m Model) bool {
		if !tuneOver(m) {
			return false
		}
		tr, loaded = tuning(m), m.spec().Knobs
		return true
	})
	if tr.err != nil || tr.outcome == nil || len(tr.outcome.Finalists) == 0 {
		t.Fatalf("the search on the CPU ended with %v:\n%s", tr.err, frame)
	}
	if len(tr.points) != 6 || tr.cfg.Strategy != "exhaustive" {
		t.Errorf("%d evaluations by %s, want all 6 WG values (exhaustive)", len(tr.points), tr.cfg.Strategy)
	}
	w := tr.outcome.Winner()
	if w.Status != profiler.StatusOK || loaded["WG"] != w.Spec.Knobs["WG"] {
		t.Errorf("winner WG=%d (%s), editor WG=%d: want an ok winner loaded", w.Spec.Knobs["WG"], w.Status, loaded["WG"])
	}
	if !strings.Contains(frame, "in the editor (r runs it)") {
		t.Errorf("the end frame lacks the winner:\n%s", frame)
	}
}

// startOnCPU starts a session on the real CPU backend with a quick stopping
// rule (each spec samples for at most maxTime seconds).
// smallSoftmaxBwd picks softmax_bwd in the session and types a small
// shape into the editor (fields: WG, dtype, rows, cols): rows=64, cols=512.
func smallSoftmaxBwd(hs *harness) {
	hs.keys("down", "enter")
	hs.waitFor("softmax_bwd", func(m Model) bool { return m.family().Name() == "softmax_bwd" && m.focus == paneEditor })
	// Fields: WG, dtype, rows, cols. Type rows=64 and cols=512.
	hs.keys("down", "down", "enter")
	hs.tm.Send(keyMsg("ctrl+u"))
	hs.typeText("64")
	hs.keys("enter", "down", "enter")
	hs.tm.Send(keyMsg("ctrl+u"))
	hs.typeText("512")
	hs.keys("enter")
	hs.waitFor("small shape", func(m Model) bool { return m.spec().Dims["rows"] == 64 && m.spec().Dims["cols"] == 512 })
}

func startOnCPU(t *testing.T, maxTime float64) *harness {
	t.Helper()
	be, err := cpu.New()
	if err != nil {
		t.Fatalf("cpu backend: %v", err)
	}
	r := run.NewRunner(be)
	t.Cleanup(func() { r.Close() })
	opts := testOptions()
	o := profiler.DefaultOptions()
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 3, MinTime: 0.001, MaxTime: maxTime}
	o.Warmup = 0.001
	opts.DefaultOptions = o
	return start(t, r, opts, 120, 40)
}
