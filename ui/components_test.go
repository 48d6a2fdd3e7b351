package ui

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/mltop/mltop/profiler"
)

// column cuts the cells [from, to) out of every line of a plain frame.
func column(frame string, from, to int) []string {
	var out []string
	for _, l := range strings.Split(frame, "\n") {
		out = append(out, ansi.Cut(l, from, to))
	}
	return out
}

// boxCorners is where the frame's boxes start: the row and cell of every
// "╭", a fingerprint of the layout.
func boxCorners(frame string) [][2]int {
	var out [][2]int
	for i, l := range strings.Split(frame, "\n") {
		for j := 0; j < ansi.StringWidth(l); j++ {
			if ansi.Cut(l, j, j+1) == "╭" {
				out = append(out, [2]int{i, j})
			}
		}
	}
	return out
}

func familiesOpts(names ...string) Options {
	opts := testOptions()
	opts.Families = nil
	for _, n := range names {
		f, err := profiler.Lookup(n)
		if err != nil {
			panic(err)
		}
		opts.Families = append(opts.Families, f)
	}
	return opts
}

// TestLayoutStableAcrossKernels: moving between kernels with different
// numbers of fields keeps every box where it was, and the chart area is
// always drawn with its empty-state text.
func TestLayoutStableAcrossKernels(t *testing.T) {
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(itoa(sz[0])+"x"+itoa(sz[1]), func(t *testing.T) {
			hs := start(t, &fakeExec{}, familiesOpts("attn_fwd", "softmax_bwd", "attn_bwd", "transpose"), sz[0], sz[1])
			first := hs.waitFor("attn_fwd", func(m Model) bool { return m.family().Name() == "attn_fwd" && m.width == sz[0] })
			want := boxCorners(first)
			for i, name := range []string{"softmax_bwd", "attn_bwd", "transpose"} {
				hs.keys("down")
				frame := hs.waitFor(name, func(m Model) bool { return m.family().Name() == name })
				checkFrame(t, frame, sz[0], sz[1])
				if got := boxCorners(frame); !slices.Equal(got, want) {
					t.Errorf("step %d (%s): boxes at %v, want %v as for attn_fwd:\n%s", i, name, got, want, frame)
				}
				if !strings.Contains(frame, "─ "+name+" ") || !strings.Contains(frame, "no runs yet") {
					t.Errorf("%s: the chart area or its empty state is missing:\n%s", name, frame)
				}
			}
		})
	}
}

// TestKernelListScrollMarks: a list longer than its box says how many
// kernels are hidden above and below.
func TestKernelListScrollMarks(t *testing.T) {
	opts := testOptions()
	opts.Families = profiler.Families(false)
	n := len(opts.Families)
	hs := start(t, &fakeExec{}, opts, 80, 24)
	frame := hs.waitFor("first frame", func(m Model) bool { return m.width == 80 })
	list := strings.Join(column(frame, 0, 16), "\n")
	if !strings.Contains(list, "↓ ") || !strings.Contains(list, " more") || strings.Contains(list, "↑ ") {
		t.Fatalf("a list of %d kernels at 80×24 should say how many are below, none above:\n%s", n, list)
	}
	for range n {
		hs.keys("down")
	}
	frame = hs.waitFor("last kernel", func(m Model) bool { return m.list.cur == n-1 })
	rows := column(frame, 0, 16)
	list = strings.Join(rows[:len(rows)-2], "\n") // the box, not the status and help lines
	if !strings.Contains(list, "↑ ") || strings.Contains(list, "↓ ") {
		t.Errorf("at the end of the list only an ↑ mark belongs:\n%s", list)
	}
	if last := opts.Families[n-1].Name(); !strings.Contains(list, last[:min(len(last), 12)]) {
		t.Errorf("the last kernel %s is not visible:\n%s", last, list)
	}
}

// TestBudgetShowsEveryDispatch: attn_bwd's budget names the delta, dQ and
// dKV kernels, and stepping a dKV knob changes what is on screen.
func TestBudgetShowsEveryDispatch(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, familiesOpts("attn_bwd"), 120, 40)
	before := hs.waitFor("attn_bwd", func(m Model) bool { return m.family().Name() == "attn_bwd" })
	budget := strings.Join(column(before, 0, 30), "\n")
	for _, want := range []string{"no TGM delta", "/32.0K dq", "/32.0K dkv", "─ dq ─"} {
		if !strings.Contains(budget, want) {
			t.Errorf("budget lacks %q:\n%s", want, budget)
		}
	}
	if !strings.Contains(budget, "↓ ") {
		t.Errorf("a budget longer than its panel must say how much is below:\n%s", budget)
	}
	// Step BQ_dkv (the fourth knob): the dKV total on screen changes.
	hs.keys("down", "down", "down")
	hs.waitFor("BQ_dkv", func(m Model) bool { f, _ := m.editor.field(); return f.name == "BQ_dkv" })
	hs.keys("right")
	after := hs.waitFor("BQ_dkv stepped", func(m Model) bool { return m.spec().Knobs["BQ_dkv"] == 32 })
	dkv := func(frame string) string {
		for _, l := range column(frame, 0, 30) {
			if strings.HasSuffix(strings.TrimRight(l, " │"), " dkv") {
				return l
			}
		}
		return ""
	}
	if dkv(before) == "" || dkv(before) == dkv(after) {
		t.Errorf("stepping BQ_dkv did not change the dkv line: %q → %q\n%s", dkv(before), dkv(after), after)
	}
	// The panel scrolls: tab to it (editor → history → budget) and go down.
	hs.keys("tab", "tab")
	hs.waitFor("budget focused", func(m Model) bool { return m.focus == paneBudget })
	hs.keys("down", "down", "down")
	frame := hs.waitFor("scrolled", func(m Model) bool { return m.budget.off == 3 })
	budget = strings.Join(column(frame, 0, 30), "\n")
	if !strings.Contains(budget, "↑ 3 more · dq") || !strings.Contains(budget, "▸TGM budget") || !strings.Contains(budget, "Q_smem") {
		t.Errorf("a scrolled budget should say how much is above:\n%s", budget)
	}
}

// TestBudgetFollowsPickedRun: picking a history row shows that run's
// budget, not the editor's.
func TestBudgetFollowsPickedRun(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("right", "r") // BQ=64: Q_smem 18 KiB
	hs.waitFor("run 2", idle(2))
	hs.keys("right")       // the editor moves on to BQ=128; the picked run decides
	hs.keys("tab", "down") // history row 2 is run #1 (BQ=32, Q_smem 9 KiB)
	frame := hs.waitFor("run #1 picked", func(m Model) bool { return m.focus == paneHistory && m.hist.cur == 1 })
	if !strings.Contains(frame, "TGM budget #1") || !strings.Contains(frame, "Q_smem               9.0 KiB") {
		t.Errorf("budget does not follow the picked run #1:\n%s", frame)
	}
	hs.keys("up")
	frame = hs.waitFor("run #2 picked", func(m Model) bool { return m.hist.cur == 0 })
	if !strings.Contains(frame, "TGM budget #2") || !strings.Contains(frame, "Q_smem              18.0 KiB") || !strings.Contains(frame, "compiler: 27.0 KiB static") {
		t.Errorf("budget does not follow the picked run #2:\n%s", frame)
	}
	hs.keys("tab") // to the budget itself: it still describes the picked run
	frame = hs.waitFor("budget focused", func(m Model) bool { return m.focus == paneBudget })
	if !strings.Contains(frame, "▸TGM budget #2") || !strings.Contains(frame, "correctness #2") {
		t.Errorf("focusing the budget lost the picked run:\n%s", frame)
	}
	hs.keys("tab", "tab") // kernel list → editor: back to the editor's plan (BQ=128, invalid)
	frame = hs.waitFor("editor", func(m Model) bool { return m.focus == paneEditor })
	if strings.Contains(frame, "TGM budget #") || !strings.Contains(frame, "45.0/32.0 KiB ✗") || !strings.Contains(frame, "1 group/core") {
		t.Errorf("back in the editor the budget should show its plan:\n%s", frame)
	}
}

// TestHistoryCursorStaysOnItsRun: a result that arrives while the user
// browses the history does not move the cursor to another run.
func TestHistoryCursorStaysOnItsRun(t *testing.T) {
	exec := &fakeExec{}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("r")
	hs.waitFor("run 2", idle(2))
	exec.mu.Lock()
	exec.block, exec.release = true, make(chan struct{})
	exec.mu.Unlock()
	hs.keys("r")
	hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
	hs.keys("tab", "down") // run #1 (newest first: #2, #1)
	hs.waitFor("run 1 picked", func(m Model) bool { e, _ := m.hist.current(); return e.id == 1 })
	close(exec.release)
	frame := hs.waitFor("run 3", idle(3))
	var cur int
	hs.waitFor("cursor", func(m Model) bool { e, _ := m.hist.current(); cur = e.id; return true })
	if cur != 1 || !strings.Contains(frame, "correctness #1") {
		t.Errorf("the cursor moved to run #%d when run #3 arrived:\n%s", cur, frame)
	}
}

// TestEditorErrorIsWrappedNotCut: the reason for a red value is shown in
// full, even when it takes more than three lines of the editor.
func TestEditorErrorIsWrappedNotCut(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 80, 24)
	hs.keys("right", "right") // BQ=128: over the TGM limit
	var reason string
	frame := hs.waitFor("BQ=128", func(m Model) bool {
		if m.editor.preview.Err != nil {
			reason = m.editor.preview.Err.Error()
		}
		return m.spec().Knobs["BQ"] == 128 && reason != ""
	})
	l := makeLayout(80, 21, 11)
	ed := column(frame, l.listW+1, l.listW+l.edW-1)
	text := strings.Join(strings.Fields(strings.Join(ed, " ")), " ")
	if lines := len(wrap("✗ "+reason, l.edW-2)); lines <= 3 {
		t.Fatalf("the reason takes %d lines: the test needs more than 3", lines)
	}
	if !strings.Contains(text, strings.Join(strings.Fields(reason), " ")) {
		t.Errorf("the editor cuts the reason %q:\n%s", reason, strings.Join(ed, "\n"))
	}
	if !strings.Contains(text, "BQ ◂ 128 ▸ ✗") {
		t.Errorf("the red value itself is not visible:\n%s", strings.Join(ed, "\n"))
	}
}

// TestRunKeysDuringRunSayWhy: r and s during a run say why they cannot
// act, and the message survives the progress updates.
func TestRunKeysDuringRunSayWhy(t *testing.T) {
	for _, k := range []string{"r", "s"} {
		t.Run(k, func(t *testing.T) {
			exec := &fakeExec{block: true}
			hs := start(t, exec, testOptions(), 120, 40)
			hs.keys("r")
			hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
			hs.keys(k)
			frame := hs.waitFor("refusal", func(m Model) bool { return m.msg != "" })
			if !strings.Contains(frame, "a run is in flight: esc cancels it, or wait") {
				t.Errorf("%s during a run should say why it does nothing:\n%s", k, frame)
			}
			hs.tm.Send(runEventMsg{batch: -1, done: true}) // an event from the loop: the message stays
			frame = hs.waitFor("after an event", func(m Model) bool { return m.running() })
			if !strings.Contains(frame, "a run is in flight: esc cancels it, or wait  │ ▶ run 1/1") {
				t.Errorf("the message must stay until the next key, progress after it:\n%s", frame)
			}
			hs.keys("down") // the next key clears it; progress alone again
			frame = hs.waitFor("message cleared", func(m Model) bool { return m.msg == "" })
			if strings.Contains(frame, "a run is in flight") || !strings.Contains(frame, "▶ run 1/1") {
				t.Errorf("progress not back after the next key:\n%s", frame)
			}
			if len(exec.calls) != 1 {
				t.Errorf("%s during a run started %d runs", k, len(exec.calls))
			}
		})
	}
}

// TestPathTypedDuringRunIsNotCommands: e during the first run opens the
// path prompt; the typed path never opens the filter or quits; enter
// explains that nothing has finished to export.
func TestPathTypedDuringRunIsNotCommands(t *testing.T) {
	var wrote []string
	opts := testOptions()
	opts.WriteCSV = func(path string, _ []profiler.Result) error { wrote = append(wrote, path); return nil }
	opts.LoadSweep = quickSweep
	exec := &fakeExec{block: true, release: make(chan struct{})}
	hs := startEditing(t, exec, opts, 120, 40)
	hs.keys("r")
	hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
	hs.keys("e", "ctrl+u")
	hs.typeText("/sys/out.csv")
	frame := hs.waitFor("path typed", func(m Model) bool { return m.prompt.input.Value() == "/sys/out.csv" })
	if !strings.Contains(frame, "export CSV (no runs yet) to: /sys/out.csv") {
		t.Errorf("the export prompt does not show the typed path:\n%s", frame)
	}
	hs.keys("enter")
	frame = hs.waitFor("answer", func(m Model) bool { return !m.prompt.active() && m.msg != "" })
	if !strings.Contains(frame, "nothing exported to /sys/out.csv: no run has finished yet") {
		t.Errorf("enter with no finished run should say so:\n%s", frame)
	}
	hs.waitFor("no filter, still running", func(m Model) bool { return m.list.filter == "" && m.running() && m.focus == paneEditor })
	if len(wrote) != 0 {
		t.Errorf("wrote %v with no runs", wrote)
	}
	// L during a run: the path goes to the prompt; the sweep is checked at
	// once and starts when the run in flight ends.
	hs.keys("L")
	hs.typeText("/q/quick.yaml")
	hs.keys("enter")
	frame = hs.waitFor("L answer", func(m Model) bool { return !m.prompt.active() && m.msg != "" })
	if !strings.Contains(frame, "quick.yaml (2 specs) starts when the run in flight ends; esc cancels both") {
		t.Errorf("L during a run should queue the sweep and say so:\n%s", frame)
	}
	hs.waitFor("still running, no filter", func(m Model) bool { return m.list.filter == "" && m.running() && m.queued != nil })
	close(exec.release)
	frame = hs.waitFor("run and queued sweep done", idle(3))
	if !strings.Contains(frame, "quick.yaml done: 2 runs: 2 ok") || !strings.Contains(frame, "WG=128") {
		t.Errorf("the queued sweep did not run after the run in flight:\n%s", frame)
	}
}

// quickSweep is a LoadSweep that knows one file, quick.yaml (any folder).
func quickSweep(path string) ([]profiler.Spec, profiler.Options, error) {
	if !strings.HasSuffix(path, "quick.yaml") {
		return nil, profiler.Options{}, errors.New(path + ": no such file")
	}
	return []profiler.Spec{
		{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 64, "cols": 256}},
		{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 64, "cols": 256}},
	}, profiler.DefaultOptions(), nil
}

// TestEscDropsQueuedSweep: esc cancels the run in flight and the sweep
// queued behind it, and says so.
func TestEscDropsQueuedSweep(t *testing.T) {
	opts := testOptions()
	opts.LoadSweep = quickSweep
	exec := &fakeExec{block: true}
	hs := start(t, exec, opts, 120, 40)
	hs.keys("r")
	hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
	hs.keys("L")
	hs.typeText("quick.yaml")
	hs.keys("enter")
	hs.waitFor("queued", func(m Model) bool { return m.queued != nil })
	hs.keys("esc")
	frame := hs.waitFor("cancelled", idle(1))
	if !strings.Contains(frame, "run cancelled after 1 of 1 spec; quick.yaml was not started") {
		t.Errorf("esc should say the queued sweep was dropped:\n%s", frame)
	}
	if len(exec.calls) != 1 {
		t.Errorf("%d runs, want only the cancelled one", len(exec.calls))
	}
}

// TestSweepUsesJobLoopAndPrefetches: a sweep runs through the engine's job
// loop, which asks the executor to prepare the next spec ahead.
func TestSweepUsesJobLoopAndPrefetches(t *testing.T) {
	exec := &fakeExec{}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("s")
	hs.waitFor("sweep done", idle(2))
	exec.mu.Lock()
	defer exec.mu.Unlock()
	if len(exec.prefetched) != 1 || exec.prefetched[0].Knobs["BQ"] != 64 {
		var got []int
		for _, s := range exec.prefetched {
			got = append(got, s.Knobs["BQ"])
		}
		t.Errorf("prefetched BQ=%v, want [64] (the second spec, while the first runs)", got)
	}
}

// TestSweepChartPlotsOnlyTheSweep: runs before the sweep are not plotted
// under "throughput vs BQ".
func TestSweepChartPlotsOnlyTheSweep(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("s")
	frame := hs.waitFor("sweep done", idle(3))
	if !strings.Contains(frame, "throughput vs BQ") || !strings.Contains(frame, "throughput vs BQ · GFLOP/s · runs #2–#3") {
		t.Errorf("the sweep chart should plot runs #2–#3 only:\n%s", frame)
	}
	if strings.Contains(frame, "runs #1–") {
		t.Errorf("the sweep chart plots run #1, which was not part of the sweep:\n%s", frame)
	}
}

// TestExternalEventReruns: Events from outside (a file watcher) show their
// text; one with Rerun runs the spec in the editor again, and the timing
// panel compares the rerun with the previous run.
func TestExternalEventReruns(t *testing.T) {
	exec := &fakeExec{}
	events := make(chan Event, 4)
	opts := testOptions()
	opts.Events = events
	hs := startEditing(t, exec, opts, 120, 40)
	events <- Event{Text: "attn_fwd reloaded", Rerun: true}
	frame := hs.waitFor("rerun", idle(1))
	if !strings.Contains(frame, "attn_fwd reloaded · run #1 attn_fwd: ok") {
		t.Errorf("the event's text is not shown with the run's outcome:\n%s", frame)
	}
	events <- Event{Text: "compile error at attn_fwd.cu:12", Bad: true}
	frame = hs.waitFor("error event", func(m Model) bool { return m.msgBad })
	if !strings.Contains(frame, "compile error at attn_fwd.cu:12") || len(exec.calls) != 1 {
		t.Errorf("an event without Rerun must only show its text (%d runs):\n%s", len(exec.calls), frame)
	}
	hs.keys("right") // BQ=64: the rerun is slower than run #1
	hs.waitFor("BQ=64", func(m Model) bool { return m.spec().Knobs["BQ"] == 64 })
	events <- Event{Text: "attn_fwd reloaded", Rerun: true}
	frame = hs.waitFor("second rerun", idle(2))
	// BQ=64 (185 µs) against BQ=32 (153 µs): +20.9% time, −17.3% throughput.
	if !regexp.MustCompile(`#1 \+20\.9% slower ✓`).MatchString(frame) {
		t.Errorf("the timing panel does not compare the rerun with the previous run:\n%s", frame)
	}
	if !regexp.MustCompile(`2 event +attn_fwd`).MatchString(frame) {
		t.Errorf("the history does not say the rerun came from an event:\n%s", frame)
	}
	exec.mu.Lock()
	exec.block = true
	exec.mu.Unlock()
	hs.keys("r")
	hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
	events <- Event{Text: "attn_fwd reloaded", Rerun: true}
	frame = hs.waitFor("event during a run", func(m Model) bool { return strings.Contains(m.msg, "reloaded") })
	if !strings.Contains(frame, "attn_fwd reloaded · not rerun: a run is in flight") {
		t.Errorf("a rerun event during a run should say it did not rerun:\n%s", frame)
	}
	hs.keys("esc")
	hs.waitFor("cancelled", idle(3))
	exec.mu.Lock()
	exec.block = false
	exec.mu.Unlock()
	close(events)
	hs.keys("r") // the session goes on after the channel closes
	hs.waitFor("run after close", idle(4))
}

// TestPinBaseline: p in the history pins a run; every other run of the
// kernel shows its throughput change against it.
func TestPinBaseline(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("right", "r")
	hs.waitFor("run 2", idle(2))
	hs.keys("tab", "down", "p") // pin run #1
	frame := hs.waitFor("pinned", func(m Model) bool { return m.hist.base == 1 })
	// BQ does not change the work, so run #2 (185 µs) against run #1
	// (153 µs) is 153/185 − 1 = −17.3% in throughput.
	for _, want := range []string{"baseline #1", "Δthr base", "◆1", "base", "-17.3%"} {
		if !strings.Contains(frame, want) {
			t.Errorf("pinned history lacks %q", want)
		}
	}
	hs.keys("up") // run #2: the timing panel compares it with the baseline
	frame = hs.waitFor("run 2 picked", func(m Model) bool { return m.hist.cur == 0 })
	if !regexp.MustCompile(`◆#1 \+20\.9% slower ✓`).MatchString(frame) || !regexp.MustCompile(`95% CI \[\+2\d\.\d, \+2\d\.\d\]`).MatchString(frame) {
		t.Errorf("timing panel lacks the change against the baseline:\n%s", frame)
	}
	golden.RequireEqual(t, frame)
	hs.keys("down", "p")
	hs.waitFor("unpinned", func(m Model) bool { return m.hist.base == 0 })
}

// TestPlural: one run is "1 run".
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 runs", 1: "1 run", 2: "2 runs"} {
		if got := plural(n, "run"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestChartAxisHasNoNegativeZero: the lowest label of a plot from 0 reads
// "0", not "-0" (SI labels).
func TestChartAxisHasNoNegativeZero(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 100, 32)
	hs.keys("r")
	hs.waitFor("run", idle(1))
	hs.keys("s")
	frame := hs.waitFor("sweep", idle(3))
	if strings.Contains(frame, "-0 ") || !strings.Contains(frame, " 0 ┤") {
		t.Errorf("the axis should end at 0:\n%s", frame)
	}
}

// TestPanelsNameAnotherKernel: after a run of attn_fwd, picking
// softmax_bwd in the list puts its plan in the budget while correctness
// and timing still show run #1: their titles name attn_fwd, and picking
// the run in the history names it in the budget and occupancy too.
func TestPanelsNameAnotherKernel(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("shift+tab", "down") // kernel list: attn_fwd → softmax_bwd
	frame := hs.waitFor("softmax_bwd", func(m Model) bool { return m.family().Name() == "softmax_bwd" })
	for _, want := range []string{"correctness #1 attn_fwd", "timing #1 attn_fwd", "TGM budget ─"} {
		if !strings.Contains(frame, want) {
			t.Errorf("with softmax_bwd in the editor the panels lack %q:\n%s", want, frame)
		}
	}
	hs.keys("tab", "tab", "down") // the history: pick run #1
	frame = hs.waitFor("run 1 picked", func(m Model) bool { return m.picking() })
	for _, want := range []string{"TGM budget #1 attn_fwd", "#1 attn_fwd", "correctness #1 attn_fwd"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the picked run of another kernel: panels lack %q:\n%s", want, frame)
		}
	}
}

// TestDeltaNeedsSameShape: a baseline of another shape is not compared:
// the history's Δthr base shows — and the timing panel says why.
func TestDeltaNeedsSameShape(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("p") // pin run #1
	hs.waitFor("pinned", func(m Model) bool { return m.hist.base == 1 })
	var shape string
	hs.waitFor("shape", func(m Model) bool { shape = m.spec().ShapeKey(); return true })
	hs.keys("down", "down", "down", "down", "down", "right") // the first dim: another shape
	hs.waitFor("new shape", func(m Model) bool { return m.spec().ShapeKey() != shape })
	hs.keys("r")
	frame := hs.waitFor("run 2", idle(2))
	if !strings.Contains(strings.Join(strings.Fields(frame), " "), "◆#1 baseline is another") || !strings.Contains(frame, "shape") {
		t.Errorf("the timing panel should say the baseline is another shape:\n%s", frame)
	}
	if regexp.MustCompile(`[-+]\d+\.\d%`).MatchString(frame) {
		t.Errorf("a Δ against a baseline of another shape is shown:\n%s", frame)
	}
}
