package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/mltop/mltop/profiler"
)

// TestChartShowsOneSeries: with runs of attn_fwd and softmax_bwd in the
// history, the chart shows only the kernel in the editor at its shape,
// and says so in its title; attn_fwd's one run is a point with its
// p10–p90 bar, not a line across the chart.
func TestChartShowsOneSeries(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r") // #1 attn_fwd
	hs.waitFor("run 1", idle(1))
	hs.keys("down", "r") // #2 softmax_bwd
	hs.waitFor("run 2", idle(2))
	hs.keys("r") // #3 softmax_bwd
	frame := hs.waitFor("run 3", idle(3))
	if !regexp.MustCompile(`─ softmax_bwd f32 [^─]* · GB/s · runs #2–#3 ─`).MatchString(frame) {
		t.Errorf("the chart of softmax_bwd should name it, GB/s and runs #2–#3:\n%s", frame)
	}
	hs.keys("up")
	frame = hs.waitFor("attn_fwd", func(m Model) bool { return m.family().Name() == "attn_fwd" })
	checkFrame(t, frame, 120, 40)
	for _, want := range []string{"─ attn_fwd f32 B=1 H=8 Hkv=8 Lq=256 Lk=256 D… · GFLOP/s · run #1 ─", "●  877 GFLOP/s", "┬", "┴", "bar: p10–p90 852–895"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the chart of attn_fwd lacks %q:\n%s", want, frame)
		}
	}
	chart := strings.Join(column(frame, 52, 120)[:20], "\n")
	if strings.Contains(chart, "GB/s") || strings.Contains(chart, "runs #") || strings.Contains(chart, "────────╮") {
		t.Errorf("the chart mixes in softmax_bwd's runs or draws one run as a line:\n%s", chart)
	}
	golden.RequireEqual(t, frame)
}

// TestSILabels: axis labels stay short whatever the scale.
func TestSILabels(t *testing.T) {
	for v, want := range map[float64]string{0.00081: "810µ", 1234: "1.23k", 1200: "1.2k", 877.24: "877", 58.48: "58.5", 0: "0", 999.7: "1k", 2.5e12: "2.5T", -0.004: "-4m"} {
		if got := siTick(v, v); got != want {
			t.Errorf("siTick(%g) = %q, want %q", v, got, want)
		}
	}
	if got := siTick(-1e-12, 800); got != "0" {
		t.Errorf("siTick of a rounding residue = %q, want 0", got)
	}
}

// TestNoiseMarker: two runs of one config on a noisy machine (CV 33 %)
// differ by several percent; the timing panel and the history say that
// this is within noise, with the interval.
func TestNoiseMarker(t *testing.T) {
	exec := &fakeExec{noise: 0.33}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("r")
	hs.waitFor("run 2", idle(2))
	hs.keys("tab", "tab", "down", "p", "up") // history: pin #1, pick #2
	frame := hs.waitFor("pinned, #2 picked", func(m Model) bool { return m.hist.base == 1 && m.hist.cur == 0 })
	checkFrame(t, frame, 120, 40)
	if !regexp.MustCompile(`◆#1 [-+]\d+\.\d% within noise ✓`).MatchString(frame) {
		t.Errorf("the timing panel lacks the noise verdict:\n%s", frame)
	}
	if !regexp.MustCompile(`95% CI \[-\d+\.\d, \+\d+\.\d\]`).MatchString(frame) {
		t.Errorf("the timing panel lacks an interval holding 0:\n%s", frame)
	}
	if !regexp.MustCompile(`[-+]\d+\.\d% ≈ BQ=32`).MatchString(frame) {
		t.Errorf("the history's Δthr base lacks the ≈ marker:\n%s", frame)
	}
	golden.RequireEqual(t, frame)
}

// TestFocusStartsInKernelList: j moves in the kernel list, not the editor;
// esc in the editor keeps the kernel filter, esc in the list clears it.
func TestFocusStartsInKernelList(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 100, 32)
	hs.keys("j")
	frame := hs.waitFor("softmax_bwd", func(m Model) bool { return m.family().Name() == "softmax_bwd" })
	hs.waitFor("focus", func(m Model) bool { return m.focus == paneKernels && m.editor.cur == 0 })
	for _, want := range []string{"▸kernels", "▸ softmax_bwd", "↑↓ pick kernel • enter edit its knobs", "kernel list: ↑/↓ pick · enter edits softmax_bwd"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	hs.keys("/")
	hs.typeText("soft")
	hs.keys("enter", "enter") // keep the filter; into the editor
	hs.waitFor("editor, filtered", func(m Model) bool { return m.focus == paneEditor && m.list.filter == "soft" })
	hs.keys("esc", "down")
	hs.waitFor("esc in the editor keeps the filter", func(m Model) bool { return m.editor.cur == 1 && m.list.filter == "soft" })
	hs.keys("shift+tab", "esc")
	hs.waitFor("esc in the list clears it", func(m Model) bool { return m.focus == paneKernels && m.list.filter == "" })
}

// TestCorrectnessShowsErrBound: an f32 softmax_bwd whose max rel (3e-02)
// is far above rtol passes through the bound's growth term; the panel
// shows the figure the verdict rests on.
func TestCorrectnessShowsErrBound(t *testing.T) {
	exec := &fakeExec{tweak: func(r *profiler.Result) {
		r.Verdict.MaxRelErr, r.Verdict.WorstRatio = 3.09e-2, 0.31
	}}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("down", "r")
	frame := hs.waitFor("run", idle(1))
	for _, want := range []string{"✓ PASS", "max rel 3.09e-02", "err/bnd 0.31"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the correctness panel lacks %q:\n%s", want, frame)
		}
	}
	golden.RequireEqual(t, frame)
}

// TestCorrectnessExactTolerance: a check that allows no difference (a
// transpose: atol = rtol = 0) reads "tol exact" in the correctness panel,
// not "tol 0e+00+0e+00·|x|".
func TestCorrectnessExactTolerance(t *testing.T) {
	exec := &fakeExec{tweak: func(r *profiler.Result) {
		r.Verdict.ATol, r.Verdict.RTol = 0, 0
		r.Verdict.MaxAbsErr, r.Verdict.MaxRelErr, r.Verdict.RMSErr, r.Verdict.WorstRatio = 0, 0, 0, 0
	}}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("down", "r")
	frame := hs.waitFor("run", idle(1))
	if !strings.Contains(frame, "tol exact ") || strings.Contains(frame, "0e+00") {
		t.Errorf("the correctness panel does not say the check is exact:\n%s", frame)
	}
	golden.RequireEqual(t, frame)
}
