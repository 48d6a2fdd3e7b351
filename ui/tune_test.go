package ui

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/tune"
)

func tuning(m Model) *tuneRun {
	if m.batch == nil {
		return nil
	}
	return m.batch.tune
}

// tuneOver: the search has ended and its batch is closed.
func tuneOver(m Model) bool {
	t := tuning(m)
	return t != nil && t.ended && !m.running()
}

// withCI gives every measurement a 95% interval of the median of ±frac,
// so the driver's verdict is known in advance.
func withCI(frac float64) func(*profiler.Result) {
	return func(r *profiler.Result) {
		r.Stats.CILo, r.Stats.CIHi = r.Stats.Median*(1-frac), r.Stats.Median*(1+frac)
	}
}

// bestLineRows reads the tune chart's plot in a frame: for each column
// of the plot, the screen rows holding the best-so-far mark.
func bestLineRows(frame string) map[int][]int {
	out := map[int][]int{}
	for r, line := range strings.Split(frame, "\n") {
		_, plot, ok := strings.Cut(line, "┤")
		if !ok {
			continue
		}
		cells := []rune(plot)
		if n := len(cells); n > 0 && cells[n-1] == '│' { // the chart's right border
			cells = cells[:n-1]
		}
		for c, x := range cells {
			if x == tuneMarkBest {
				out[c] = append(out[c], r)
			}
		}
	}
	return out
}

// checkMonotone fails unless the best-so-far line of a minimised
// objective never rises: one mark per column, rows going down or level.
func checkMonotone(t *testing.T, frame string, minCols int) {
	t.Helper()
	rows := bestLineRows(frame)
	if len(rows) < minCols {
		t.Fatalf("the best-so-far line spans %d columns, want at least %d:\n%s", len(rows), minCols, frame)
	}
	prev := -1
	for _, c := range slices.Sorted(maps.Keys(rows)) {
		rs := rows[c]
		if len(rs) != 1 {
			t.Fatalf("column %d of the plot has the best-so-far mark on rows %v, want one:\n%s", c, rs, frame)
		}
		if rs[0] < prev {
			t.Fatalf("the best-so-far line rises at column %d (row %d after %d): a smaller median must never be followed by a larger best:\n%s", c, rs[0], prev, frame)
		}
		prev = rs[0]
	}
}

func TestTunePrompt(t *testing.T) {
	exec := &fakeExec{}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("f") // BQ (the cursor's knob) fixed at 32
	hs.waitFor("BQ fixed", func(m Model) bool { return m.editor.isFixed("BQ") })
	hs.keys("T")
	frame := hs.waitFor("the tune prompt", func(m Model) bool { return m.prompt.kind == promptTune })
	checkFrame(t, frame, 120, 40)
	for _, want := range []string{"tune BK WM WN (fixed BQ) · ", "configs allowed", "refused", "budget strategy: 12 tpe", "▸ BQ      ◂ 32 ▸             fixed"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the prompt's frame lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	if len(exec.calls) != 0 {
		t.Errorf("the prompt ran %d specs before enter", len(exec.calls))
	}
	hs.keys("esc")
	hs.waitFor("prompt closed", func(m Model) bool {
		return m.prompt.kind == promptNone && m.msg == "tune not started" && m.tuneAsk == nil
	})
}

// TestTuneChartMidRun stops the fake GPU after nine evaluations and looks
// at the chart: every evaluation a point, the best so far a line that
// only goes down, the status line the strategy, count and best.
func TestTuneChartMidRun(t *testing.T) {
	exec := &fakeExec{blockFrom: 9}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("T", "enter")
	frame := hs.waitFor("nine evaluations", func(m Model) bool {
		tr := tuning(m)
		return tr != nil && len(tr.points) == 9 && m.batch.progress.Phase == "measure"
	})
	checkFrame(t, frame, 120, 40)
	for _, want := range []string{"tune BQ BK WM WN · median_us (µs) vs evaluation · tpe", "• evaluation · ─ best so far", "▶ tune tpe 9/24 · best ", "evaluation"} {
		if !strings.Contains(frame, want) {
			t.Errorf("mid-run frame lacks %q", want)
		}
	}
	if n := strings.Count(frame, string(tuneMarkPoint)); n < 2 {
		t.Errorf("mid-run frame has %d evaluation points, want several", n)
	}
	checkMonotone(t, frame, 5)
	golden.RequireEqual(t, frame)
}

func TestTuneCancelKeepsRowsAndEditor(t *testing.T) {
	exec := &fakeExec{blockFrom: 5}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("T", "enter")
	hs.waitFor("five evaluations", func(m Model) bool {
		tr := tuning(m)
		return tr != nil && len(tr.points) == 5 && m.batch.progress.Phase == "measure"
	})
	hs.keys("esc")
	frame := hs.waitFor("cancelled", tuneOver)
	checkFrame(t, frame, 120, 40)
	for _, want := range []string{"tune cancelled after 5 evaluations; best ", "the editor is unchanged", "history · 6 runs", "cancelled"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame after cancel lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	m := hs.model()
	want := map[string]int{"BQ": 32, "BK": 16, "WM": 4, "WN": 1}
	if got := m.spec().Knobs; !maps.Equal(got, want) {
		t.Errorf("a cancelled tune changed the editor's knobs to %v, want %v", got, want)
	}
	for _, e := range m.hist.entries {
		if e.via != originTune {
			t.Errorf("run #%d came from %q, want %q (a cancelled tune re-measures nothing)", e.id, e.via, originTune)
		}
	}
}

// TestTuneLoadsWinner runs a whole search: the best are re-measured, the
// verdict is shown and the winner's knobs go to the editor, so the next
// r runs the winner.
func TestTuneLoadsWinner(t *testing.T) {
	exec := &fakeExec{tweak: withCI(0.001)}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("T", "enter")
	frame := hs.waitFor("the end of the search", tuneOver)
	checkFrame(t, frame, 120, 40)
	m := hs.model()
	tr := tuning(m)
	if tr.err != nil || tr.outcome == nil || len(tr.outcome.Finalists) != 3 {
		t.Fatalf("the search ended with %v and %+v, want 3 finalists", tr.err, tr.outcome)
	}
	win := tr.outcome.Winner().Spec.Knobs
	if got := m.spec().Knobs; !maps.Equal(got, win) {
		t.Errorf("editor knobs %v after the tune, want the winner's %v", got, win)
	}
	for _, p := range tr.points {
		if p.ok && sum(p.knobs) < sum(win) {
			t.Errorf("evaluation #%d (%v) was faster than the winner %v", p.id, p.knobs, win)
		}
	}
	winText := tune.KnobText(win, []string{"BQ", "BK", "WM", "WN"})
	for _, want := range []string{"★ " + winText + " in the editor (r runs it)", "the 95% intervals of the medians do not overlap",
		"tune done (24 evaluations): " + winText + " loaded into the editor", "final", "history · 27 runs"} {
		if !strings.Contains(frame, want) {
			t.Errorf("end frame lacks %q", want)
		}
	}
	checkMonotone(t, frame, 20)
	golden.RequireEqual(t, frame)
	// On 80×24 the verdict gives way to the plot, the winner line stays.
	hs.tm.Send(resize(80, 24))
	small := hs.waitFor("80×24", func(m Model) bool { return m.width == 80 })
	checkFrame(t, small, 80, 24)
	if !strings.Contains(small, "★ "+winText) || !strings.Contains(small, "┤") {
		t.Errorf("80×24 after the tune lacks the plot or the winner:\n%s", small)
	}
	n := len(exec.calls)
	hs.keys("r")
	hs.waitFor("the run after the tune", idle(28))
	if got := exec.calls[n].Knobs; !maps.Equal(got, win) {
		t.Errorf("r after the tune ran %v, want the winner %v", got, win)
	}
}

func sum(knobs map[string]int) int {
	s := 0
	for _, v := range knobs {
		s += v
	}
	return s
}

// TestTuneVerdict: the winner against the runner-up, from the driver's
// confidence intervals (softmax_bwd's six WG values: the default budget
// measures all of them).
func TestTuneVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		ci   float64
		want string
	}{
		{"apart", 0.01, "vs runner-up WG=64"},
		{"tied", 0.5, "tied within noise: winner WG=32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec := &fakeExec{tweak: withCI(tc.ci)}
			hs := start(t, exec, testOptions(), 120, 40)
			hs.keys("down", "enter", "T")
			hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptTune && m.tuneAsk.size == 6 })
			hs.keys("enter")
			frame := hs.waitFor("the end", tuneOver)
			m := hs.model()
			if !strings.Contains(frame, "★ WG=32 in the editor") || !strings.Contains(m.msg, tc.want) {
				t.Errorf("verdict lacks %q:\nmessage %s\n%s", tc.want, m.msg, frame)
			}
			if got := m.spec().Knobs["WG"]; got != 32 {
				t.Errorf("editor WG=%d after the tune, want the winner 32", got)
			}
		})
	}
}

// TestTuneAllInvalidChangesNothing: with BQ fixed at a value no
// configuration can use, T says why and neither runs nor edits anything.
func TestTuneAllInvalidChangesNothing(t *testing.T) {
	exec := &fakeExec{}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("right", "right", "f", "T") // BQ=128: Q_smem alone exceeds 32 KiB
	frame := hs.waitFor("the refusal", func(m Model) bool { return strings.HasPrefix(m.msg, "nothing to tune") })
	m := hs.model()
	for _, want := range []string{"no configuration of BK WM WN is valid with BQ=128", "exceeds", "free a fixed knob (f)"} {
		if !strings.Contains(m.msg, want) {
			t.Errorf("the message lacks %q: %s", want, m.msg)
		}
	}
	if !strings.Contains(frame, "nothing to tune") {
		t.Errorf("the frame does not show the refusal:\n%s", frame)
	}
	if m.prompt.active() || m.running() || m.hist.len() != 0 || len(exec.calls) != 0 {
		t.Errorf("an all-invalid tune did something: prompt %v, running %v, %d runs, %d calls", m.prompt.active(), m.running(), m.hist.len(), len(exec.calls))
	}
	if got := m.spec().Knobs; !maps.Equal(got, map[string]int{"BQ": 128, "BK": 16, "WM": 4, "WN": 1}) {
		t.Errorf("the editor changed to %v", got)
	}
}

// TestTuneKeepsFixedKnobs: a knob fixed with f keeps its value in every
// measurement; every knob fixed leaves nothing to search.
func TestTuneKeepsFixedKnobs(t *testing.T) {
	exec := &fakeExec{}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("f", "T")
	hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptTune })
	hs.keys("ctrl+u")
	hs.typeText("6 random")
	hs.keys("enter")
	hs.waitFor("the end", tuneOver)
	if tr := tuning(hs.model()); tr.cfg.Strategy != "random" || tr.evals != 6 || len(tr.points) != 6 || slices.Contains(tr.knobs, "BQ") {
		t.Errorf("tune ran %s with %d/%d evaluations of %v; want random, 6, without BQ", tr.cfg.Strategy, len(tr.points), tr.evals, tr.knobs)
	}
	for _, s := range exec.calls {
		if s.Knobs["BQ"] != 32 {
			t.Errorf("a measurement changed the fixed BQ: %v", s.Knobs)
		}
	}
	hs.keys("down", "f", "down", "f", "down", "f", "T")
	hs.waitFor("refusal", func(m Model) bool { return strings.HasPrefix(m.msg, "every knob of attn_fwd is fixed (BQ BK WM WN)") })
	hs.keys("f")
	hs.waitFor("WN free", func(m Model) bool { return !m.editor.isFixed("WN") && m.msg == "WN is free: T searches it" })
	hs.keys("down", "f") // dtype
	hs.waitFor("f on dtype", func(m Model) bool { return strings.HasPrefix(m.msg, "f fixes a knob for T") })
}

func TestParseTuneAnswer(t *testing.T) {
	def := tuneChoice{budget: search.Budget{Evals: 24}, strategy: "tpe", objective: tune.MedianUS}
	for _, tc := range []struct {
		in      string
		want    tuneChoice
		wantErr string
	}{
		{"", def, ""},
		{"24 tpe", def, ""},
		{"40 evolution", tuneChoice{search.Budget{Evals: 40}, "evolution", tune.MedianUS}, ""},
		{"gbps,10%", tuneChoice{search.Budget{Fraction: 0.1}, "tpe", tune.GBps}, ""},
		{"2m halving", tuneChoice{search.Budget{Time: 2 * time.Minute}, "halving", tune.MedianUS}, ""},
		{"40 fastest", def, `"fastest" is not a budget`},
		{"0", def, `"0" is not a budget`},
	} {
		got, err := parseTuneAnswer(tc.in, def)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("parseTuneAnswer(%q) error %v, want one saying %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("parseTuneAnswer(%q): %v", tc.in, err)
		case got != tc.want:
			t.Errorf("parseTuneAnswer(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if s := def.String(); s != "24 tpe" {
		t.Errorf("the prompt's default reads %q, want \"24 tpe\"", s)
	}
}

func TestDefaultTuneBudget(t *testing.T) {
	for _, tc := range []struct{ size, want int }{{1, 1}, {6, 6}, {24, 24}, {100, 24}, {240, 24}, {241, 25}, {1000, 100}} {
		if got := defaultTuneBudget(tc.size).Evals; got != tc.want {
			t.Errorf("defaultTuneBudget(%d) = %d evaluations, want %d", tc.size, got, tc.want)
		}
	}
}

// TestTuneChartMarks draws a made-up search: the best-so-far line steps
// down only where an evaluation beat it, points sit where their values
// are, and an invalid evaluation is a ✗ on the axis.
func TestTuneChartMarks(t *testing.T) {
	vals := []float64{150, 0, 130, 140, 110, 120}
	tr := &tuneRun{cfg: tune.Config{Objective: tune.MedianUS, Strategy: "tpe"}, knobs: []string{"WG"}, evals: len(vals), space: 10}
	for i, v := range vals {
		tr.points = append(tr.points, tunePoint{id: i + 1, value: v, ok: v > 0, knobs: map[string]int{"WG": i}})
	}
	lines := tr.chartLines(newTheme(true), 44, 12)
	frame := strings.Join(lines, "\n")
	if len(lines) > 12 {
		t.Fatalf("%d lines for a 12-line chart:\n%s", len(lines), frame)
	}
	checkMonotone(t, frame, 25)
	if n := strings.Count(frame, string(tuneMarkPoint)); n != 5+1 { // and the legend's
		t.Errorf("%d points for 5 usable evaluations:\n%s", n-1, frame)
	}
	if !strings.Contains(frame, "└") || strings.Count(frame, string(tuneMarkBad)) != 2 { // the axis and the legend
		t.Errorf("the invalid evaluation is not a ✗ on the axis and in the legend:\n%s", frame)
	}
	if !strings.Contains(frame, "150 ┤•") || !strings.Contains(frame, "110 ┤") {
		t.Errorf("the axis does not run from the worst (150) at the top to the best (110) at the bottom:\n%s", frame)
	}
	if got := tr.bestSoFar(); !slices.Equal(got, []int{0, 0, 2, 2, 4, 4}) {
		t.Errorf("bestSoFar = %v, want [0 0 2 2 4 4]", got)
	}
	tr.cfg.Objective = tune.GBps // larger is better: the best is the largest
	if got := tr.bestSoFar(); !slices.Equal(got, []int{0, 0, 0, 0, 0, 0}) {
		t.Errorf("bestSoFar (maximised) = %v, want [0 0 0 0 0 0]", got)
	}
}

// TestTuneUserKernel: a user kernel's knobs tune through the same path
// (the manifest's WG: 64 or 128; the fake GPU is faster at 64).
func TestTuneUserKernel(t *testing.T) {
	exec := &fakeExec{}
	hs, _, name := reloadSession(t, "my_tuned", exec)
	hs.keys("T")
	hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptTune && m.family().Name() == name })
	hs.keys("enter")
	var wg int
	var tr *tuneRun
	hs.waitFor("the end", func(m Model) bool {
		if !tuneOver(m) {
			return false
		}
		tr, wg = tuning(m), m.spec().Knobs["WG"]
		return true
	})
	if tr.err != nil || len(tr.points) != 2 || wg != 64 {
		t.Errorf("tune of %s: %v, %d evaluations, editor WG=%d; want 2 evaluations and WG=64", name, tr.err, len(tr.points), wg)
	}
	for _, s := range exec.calls {
		if s.Kernel != name {
			t.Errorf("the search ran %s, want only %s", s.Kernel, name)
		}
	}
}

// TestTuneUserKernelOnCPUSaysWhy: on the CPU backend a user kernel never
// runs: T says so before starting anything.
func TestTuneUserKernelOnCPUSaysWhy(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatalf("cpu backend: %v", err)
	}
	r := run.NewRunner(be)
	defer r.Close()
	opts, _, name := userKernelOptions(t, "my_cpu_tune")
	hs := start(t, r, opts, 120, 40)
	hs.waitFor("user kernel picked", func(m Model) bool { return m.family() != nil && m.family().Name() == name })
	hs.keys("T")
	hs.waitFor("the refusal", func(m Model) bool {
		return strings.HasPrefix(m.msg, "nothing to tune") && strings.Contains(m.msg, "the CPU backend cannot run user kernel") && strings.Contains(m.msg, "--backend cuda runs it on an NVIDIA GPU") && !strings.Contains(m.msg, "or metal") && !m.prompt.active() && !m.running()
	})
}
