package ui

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// tgmTotal is the planned TGM of the model's current spec.
func tgmTotal(m Model) int {
	if len(m.editor.preview.Budget) == 0 {
		return -1
	}
	return m.editor.preview.Budget[0].Total
}

func idle(n int) func(Model) bool {
	return func(m Model) bool { return m.hist.len() == n && !m.running() }
}

func TestMainScreenGolden(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		t.Run(strings.Join([]string{itoa(sz.w), itoa(sz.h)}, "x"), func(t *testing.T) {
			hs := start(t, &fakeExec{}, testOptions(), sz.w, sz.h)
			frame := hs.waitFor("first frame", func(m Model) bool { return m.width == sz.w && m.height == sz.h })
			checkFrame(t, frame, sz.w, sz.h)
			// The session starts in the kernel list (its title is marked), and
			// the help bar says how to pick a kernel and reach its knobs.
			want := []string{"▸ attn_fwd", "softmax_bwd", "▸kernels", "↑↓ pick kernel", "enter edit its knobs", "▸ BQ      ◂ 32 ▸",
				"attn_fwd f32 B=1 H=8 Hkv=8", "no runs yet: r runs the kernel",
				"TGM budget", "Q_smem", "occupancy est.", "3 groups/core", "correctness", "timing", "history · 0 runs", "r run"}
			if sz.h == 24 {
				want = append(want, "↓ 7 more") // the editor's fields below the fold
			} else {
				want = append(want, "causal  off", "compiler: after a run")
			}
			for _, w := range want {
				if !strings.Contains(frame, w) {
					t.Errorf("first frame lacks %q", w)
				}
			}
			golden.RequireEqual(t, frame)
		})
	}
}

// TestFullCycle picks a kernel, changes BQ, sees the planned budget change
// before anything runs, runs, and sees the results in every panel.
func TestFullCycle(t *testing.T) {
	exec := &fakeExec{}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("down") // the session starts in the kernel list: attn_fwd → softmax_bwd
	hs.waitFor("softmax_bwd selected", func(m Model) bool { return m.family().Name() == "softmax_bwd" && m.focus == paneKernels })
	hs.keys("up", "enter") // back to attn_fwd, into the editor
	before := hs.waitFor("attn_fwd in the editor", func(m Model) bool { return m.family().Name() == "attn_fwd" && m.focus == paneEditor })
	// f32, D=64: Q 32·72·4 + K 16·72·4 + V 16·72·4 = 18432 B.
	if !strings.Contains(before, "TGM 18.0/32.0 KiB") || !strings.Contains(before, "Q_smem               9.0 KiB") {
		t.Fatalf("planned budget for BQ=32 missing:\n%s", before)
	}
	hs.keys("right") // BQ 32 → 64: Q_smem doubles to 18432 B, total 27648 B
	after := hs.waitFor("BQ=64", func(m Model) bool { return m.spec().Knobs["BQ"] == 64 && tgmTotal(m) == 27648 })
	if !strings.Contains(after, "TGM 27.0/32.0 KiB") || !strings.Contains(after, "Q_smem              18.0 KiB") {
		t.Fatalf("budget did not follow BQ=64:\n%s", after)
	}
	if len(exec.calls) != 0 {
		t.Fatalf("the preview ran the executor %d times; it must not run anything", len(exec.calls))
	}
	hs.keys("r")
	frame := hs.waitFor("run #1", idle(1))
	checkFrame(t, frame, 120, 40)
	for _, want := range []string{"✓ PASS", "max abs 1.25e-06", "rows 256/2048", "median 185 µs", "p10–p90 181–191 µs", "CV 1.2% · n 50", "timer fake-timer", "SM clock 1755 MHz", "compiler: 27.0 KiB static", "BQ=64 BK=16 WM=4 WN=1"} {
		if !strings.Contains(frame, want) {
			t.Errorf("after the run the screen lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	if got := exec.calls[0].Knobs["BQ"]; got != 64 {
		t.Errorf("executor ran BQ=%d, want 64", got)
	}
}

func TestInvalidValueShowsReason(t *testing.T) {
	hs := startEditing(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("right", "right") // BQ 128: Q_smem 36 KiB alone exceeds the 32 KiB limit
	frame := hs.waitFor("invalid BQ", func(m Model) bool { return m.spec().Knobs["BQ"] == 128 && m.editor.preview.Err != nil })
	if !strings.Contains(frame, "✗") || !strings.Contains(frame, "128 ▸ ✗") {
		t.Errorf("BQ=128 is not marked invalid:\n%s", frame)
	}
	hs.keys("r")
	frame = hs.waitFor("refusal", func(m Model) bool { return strings.HasPrefix(m.msg, "cannot run") })
	if !strings.Contains(frame, "cannot run") {
		t.Errorf("r on an invalid spec should explain why it does not run:\n%s", frame)
	}
	// A typed value goes through the same check.
	hs.keys("enter")
	hs.typeText("48")
	hs.keys("enter")
	frame = hs.waitFor("typed BQ=48", func(m Model) bool { return m.spec().Knobs["BQ"] == 48 })
	if !strings.Contains(frame, "BQ=48 is not allowed") {
		t.Errorf("typed BQ=48 should show the schema's reason:\n%s", frame)
	}
	golden.RequireEqual(t, frame)
}

func TestErrorShownInPanel(t *testing.T) {
	exec := &fakeExec{}
	exec.set(profiler.StatusCompileError, `compiling attn_fwd: attn_fwd.cu(42): error: identifier "BQX" is undefined`)
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	frame := hs.waitFor("compile error", idle(1))
	for _, want := range []string{"✗ compile_error · run #1", `"BQX" is undefined`, "✗ compile_error"} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	// The session goes on: the next run succeeds.
	exec.set(profiler.StatusOK, "")
	hs.keys("r")
	frame = hs.waitFor("second run", idle(2))
	if !strings.Contains(frame, "✓ PASS") || !strings.Contains(frame, "history · 2 runs") {
		t.Errorf("second run after a compile error did not show results:\n%s", frame)
	}
}

func TestMismatchShownInCorrectness(t *testing.T) {
	exec := &fakeExec{}
	exec.set(profiler.StatusMismatch, "3 of 4096 checked elements outside tolerance")
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	frame := hs.waitFor("mismatch", idle(1))
	for _, want := range []string{"✗ FAIL 3 bad", "worst O[0,0,17,5] got 1.5", "max abs 2.50e-01", "✗ mismatch", "median 153 µs"} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(frame)
	}
}

func TestLongErrorIsClipped(t *testing.T) {
	exec := &fakeExec{}
	var log []string
	for i := range 30 {
		log = append(log, "attn_fwd.cu("+itoa(i+1)+"): error: something is wrong here")
	}
	exec.set(profiler.StatusCompileError, strings.Join(log, "\n"))
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	frame := hs.waitFor("compile error", idle(1))
	checkFrame(t, frame, 120, 40)
	if !strings.Contains(frame, "attn_fwd.cu(1): error") || !strings.Contains(frame, "more lines") {
		t.Errorf("a long compiler log should show its head and say how much was cut:\n%s", frame)
	}
}

func TestResizeTo80x24(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run", idle(1))
	hs.tm.Send(resize(80, 24))
	frame := hs.waitFor("80×24", func(m Model) bool { return m.width == 80 && m.height == 24 })
	checkFrame(t, frame, 80, 24)
	for _, want := range []string{"attn_fwd f… · GFLOP/s · run #1", "●  877 GFLOP/s", "bar: p10–p90", "TGM budget #1", "✓ PASS", "median 153 µs", "history · 1 run ", "1 attn_fwd", "run #1 attn_fwd: ok"} {
		if !strings.Contains(frame, want) {
			t.Errorf("80×24 after a run lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	// Smaller than supported still never draws past the terminal.
	hs.tm.Send(resize(50, 15))
	frame = hs.waitFor("50×15", func(m Model) bool { return m.width == 50 })
	checkFrame(t, frame, 50, 15)
}

func TestKeysWorkDuringRunAndEscCancels(t *testing.T) {
	exec := &fakeExec{block: true}
	hs := startEditing(t, exec, testOptions(), 120, 40)
	hs.keys("r")
	frame := hs.waitFor("running", func(m Model) bool { return m.running() && m.batch.progress.Phase == "measure" })
	if !strings.Contains(frame, "▶ run 1/1") || !strings.Contains(frame, "n=7 median 123 µs") {
		t.Errorf("progress not shown:\n%s", frame)
	}
	hs.keys("down", "down") // the editor still answers
	hs.waitFor("cursor moved during the run", func(m Model) bool { return m.editor.cur == 2 && m.running() })
	hs.keys("esc")
	frame = hs.waitFor("cancelled", idle(1))
	if !strings.Contains(frame, "cancelled by user") {
		t.Errorf("cancelled run not shown:\n%s", frame)
	}
}

func TestSweepSkipsInvalidValues(t *testing.T) {
	exec := &fakeExec{}
	hs := start(t, exec, testOptions(), 120, 40)
	hs.keys("s") // BQ with WM=4 needs BQ%32==0; BQ=128 exceeds 32 KiB
	frame := hs.waitFor("sweep done", idle(2))
	var got []int
	for _, s := range exec.calls {
		got = append(got, s.Knobs["BQ"])
	}
	if !slices.Equal(got, []int{32, 64}) {
		t.Errorf("swept BQ=%v, want [32 64]", got)
	}
	for _, want := range []string{"throughput vs BQ", "sweep BQ done: 2 runs: 2 ok; 3 skipped: BQ=8,BQ=16,BQ=128"} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
}

func TestHistorySortAndExport(t *testing.T) {
	var wrote string
	var rows []profiler.Result
	opts := testOptions()
	opts.WriteCSV = func(path string, rs []profiler.Result) error { wrote, rows = path, rs; return nil }
	hs := start(t, &fakeExec{}, opts, 120, 40)
	hs.keys("r", "right")
	hs.waitFor("run 1", idle(1))
	hs.keys("r")
	hs.waitFor("run 2", idle(2))
	hs.keys("o") // sort by median, fastest first: run 1 (BQ=32) before run 2 (BQ=64)
	frame := hs.waitFor("sorted", func(m Model) bool { return sortCols[m.hist.sortCol].name == "median" })
	if !strings.Contains(frame, "sort median ▲") {
		t.Errorf("sort column not shown:\n%s", frame)
	}
	hs.keys("e")
	frame = hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptExport })
	if !strings.Contains(frame, "export CSV to: ./mltop-20260102-030405.csv") {
		t.Errorf("default export path missing:\n%s", frame)
	}
	hs.keys("enter")
	hs.waitFor("exported", func(m Model) bool { return strings.HasPrefix(m.msg, "exported") })
	if wrote != "./mltop-20260102-030405.csv" || len(rows) != 2 || rows[0].Spec.Knobs["BQ"] != 32 {
		t.Errorf("WriteCSV(%q, %d rows, first BQ=%d): want the default path and 2 rows sorted by median", wrote, len(rows), rows[0].Spec.Knobs["BQ"])
	}
}

func TestExportAndLoadUnavailable(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run", idle(1))
	hs.keys("e")
	frame := hs.waitFor("message", func(m Model) bool { return m.msg != "" && m.msgBad })
	if !strings.Contains(frame, "export unavailable") {
		t.Errorf("e without a CSV writer should say export unavailable:\n%s", frame)
	}
	hs.keys("L")
	frame = hs.waitFor("message", func(m Model) bool { return strings.Contains(m.msg, "unavailable in this build") })
	if !strings.Contains(frame, "loading a YAML sweep is unavailable") {
		t.Errorf("L without a loader should say so:\n%s", frame)
	}
}

func TestLoadSweep(t *testing.T) {
	opts := testOptions()
	opts.LoadSweep = func(path string) ([]profiler.Spec, profiler.Options, error) {
		if path != "quick.yaml" {
			return nil, profiler.Options{}, errors.New(path + ": no such file")
		}
		return []profiler.Spec{
			{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 64, "cols": 256}},
			{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 64, "cols": 256}},
			{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 48}, Dims: map[string]int{"rows": 64, "cols": 256}},
		}, profiler.DefaultOptions(), nil
	}
	hs := start(t, &fakeExec{}, opts, 120, 40)
	hs.keys("L")
	hs.typeText("nope.yaml")
	hs.keys("enter")
	frame := hs.waitFor("load error", func(m Model) bool { return m.msgBad })
	if !strings.Contains(frame, "nope.yaml: no such file") {
		t.Errorf("load error not shown:\n%s", frame)
	}
	hs.keys("L")
	hs.typeText("quick.yaml")
	hs.keys("enter")
	frame = hs.waitFor("loaded sweep", idle(3))
	// An invalid spec is counted apart from failures, as headless runs do.
	if !strings.Contains(frame, "quick.yaml done: 3 runs: 2 ok, 1 invalid") || !strings.Contains(frame, "WG=128") {
		t.Errorf("loaded sweep did not run:\n%s", frame)
	}
}

// A sweep of more than run.BigSweep specs is loaded only after a yes.
func TestLoadLargeSweepAsksFirst(t *testing.T) {
	opts := testOptions()
	loads := 0
	opts.LoadSweep = func(path string) ([]profiler.Spec, profiler.Options, error) {
		loads++
		return []profiler.Spec{{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 64, "cols": 256}}}, profiler.DefaultOptions(), nil
	}
	opts.SweepSize = func(path string) (int, error) {
		switch path {
		case "big.yaml":
			return run.BigSweep + 1, nil
		case "huge.yaml":
			return SessionSweepLimit + 1, nil
		}
		return 1, nil
	}
	hs := start(t, &fakeExec{}, opts, 120, 40)
	for _, c := range []struct {
		answer string
		loads  int
	}{{"n", 0}, {"y", 1}} {
		hs.keys("L")
		hs.typeText("big.yaml")
		hs.keys("enter")
		frame := hs.waitFor("question", func(m Model) bool { return m.prompt.kind == promptAsk })
		if !strings.Contains(frame, "big.yaml has 2001 specs (more than 2000)") {
			t.Errorf("question not shown:\n%s", frame)
		}
		hs.typeText(c.answer)
		hs.keys("enter")
		hs.waitFor("answer", func(m Model) bool { return !m.prompt.active() })
		if loads != c.loads {
			t.Errorf("answer %s: %d loads, want %d", c.answer, loads, c.loads)
		}
	}
	// one the session cannot hold is refused, pointing to a headless sweep
	hs.keys("L")
	hs.typeText("huge.yaml")
	hs.keys("enter")
	var msg string
	hs.waitFor("refusal", func(m Model) bool { msg = m.msg; return strings.Contains(m.msg, "more than the session holds") })
	if !strings.Contains(msg, "mltop --config huge.yaml") || loads != 1 {
		t.Errorf("huge sweep: %d loads, message %q", loads, msg)
	}
	// a small sweep loads at once
	hs.keys("L")
	hs.typeText("small.yaml")
	hs.keys("enter")
	hs.waitFor("loaded", func(m Model) bool { return !m.prompt.active() })
	if loads != 2 {
		t.Errorf("a small sweep asked first (%d loads)", loads)
	}
}

func TestFilterKernels(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("/")
	hs.typeText("soft")
	hs.keys("enter")
	frame := hs.waitFor("filtered", func(m Model) bool { return !m.prompt.active() && m.list.filter == "soft" })
	if !strings.Contains(frame, "/soft") || strings.Contains(frame, "attn_fwd") {
		t.Errorf("filter did not narrow the list to softmax_bwd:\n%s", frame)
	}
	hs.keys("esc")
	hs.waitFor("filter cleared", func(m Model) bool { return m.list.filter == "" && len(m.list.visible) == 2 })
}

func TestHistorySelectionDrivesPanels(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 120, 40)
	hs.keys("r")
	hs.waitFor("run 1", idle(1))
	hs.keys("right", "r")
	hs.waitFor("run 2", idle(2))
	hs.keys("tab", "down") // history, newest first: row 2 is run #1 (BQ=32)
	frame := hs.waitFor("row 2", func(m Model) bool { return m.focus == paneHistory && m.hist.cur == 1 })
	if !strings.Contains(frame, "correctness #1") || !strings.Contains(frame, "median 153 µs") || !strings.Contains(frame, "▸  1 r      attn_fwd") {
		t.Errorf("panels do not describe the selected run #1:\n%s", frame)
	}
}

func TestHelpScreen(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 100, 32)
	hs.keys("?")
	frame := hs.waitFor("help", func(m Model) bool { return m.help.open })
	for _, want := range []string{"sweep knob", "load YAML sweep", "export CSV", "esc or ? closes this help"} {
		if !strings.Contains(frame, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	hs.keys("esc")
	hs.waitFor("help closed", func(m Model) bool { return !m.help.open })
}

func TestNoColor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noColor   bool
		wantPlain bool
	}{{"plain", true, true}, {"colour", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.NoColor = tc.noColor
			m := NewModel(&fakeExec{}, opts)
			m.width, m.height = 100, 30
			// The themes use 24-bit colours only; the plain one keeps bold and reverse.
			frame := m.Render()
			hasColour := strings.Contains(frame, "38;2;") || strings.Contains(frame, "48;2;")
			if hasColour == tc.wantPlain {
				t.Errorf("NoColor=%v: colour sequences present=%v", tc.noColor, hasColour)
			}
		})
	}
	for _, tc := range []struct {
		env  string
		flag bool
		want bool
	}{{"", false, false}, {"1", false, true}, {"", true, true}, {"false", false, true}} {
		got := resolveOptions(Options{NoColor: tc.flag}, func(string) string { return tc.env }).NoColor
		if got != tc.want {
			t.Errorf("NO_COLOR=%q --no-color=%v: NoColor=%v, want %v", tc.env, tc.flag, got, tc.want)
		}
	}
}

// TestASCIIProfileStripsColour: with the ASCII profile (what Run picks for
// NO_COLOR and --no-color) the terminal receives no colour even from the
// colour theme.
func TestASCIIProfileStripsColour(t *testing.T) {
	opts := testOptions()
	opts.NoColor = false
	hs := start(t, &fakeExec{}, opts, 100, 30)
	var out []byte // WaitFor drains the output: keep what it saw
	teatest.WaitFor(t, hs.tm.Output(), func(b []byte) bool {
		out = append(out[:0], b...)
		return bytes.Contains(b, []byte("softmax_bwd")) && bytes.Contains(b, []byte("r run"))
	}, teatest.WithDuration(uiWait))
	if !bytes.Contains(out, []byte("\x1b[")) {
		t.Fatalf("no escape sequences at all: is this the renderer's output? %q", out)
	}
	if bytes.Contains(out, []byte("38;2;")) || bytes.Contains(out, []byte("48;2;")) || bytes.Contains(out, []byte("38;5;")) {
		t.Errorf("colour sequences reached an ASCII terminal")
	}
}

// TestScreenCapture writes the README's text capture of the main screen at
// 100×32 after a run and a sweep.
func TestScreenCapture(t *testing.T) {
	hs := start(t, &fakeExec{}, testOptions(), 100, 32)
	hs.keys("r")
	hs.waitFor("run", idle(1))
	hs.keys("s")
	frame := hs.waitFor("sweep", idle(3))
	checkFrame(t, frame, 100, 32)
	for _, want := range []string{"throughput vs BQ · GFLOP/s · runs #2–#3", "#2 +20.9% slower ✓", "32 ", "★", "history · 3 runs", "sweep BQ done: 2 runs: 2 ok; 3 skipped: BQ=8,BQ=16,BQ=128", "correctness #3"} {
		if !strings.Contains(frame, want) {
			t.Errorf("screen capture lacks %q", want)
		}
	}
	golden.RequireEqual(t, frame)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile("testdata/screen.txt", []byte(frame+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The `e` prompt shows its whole default path at 80 columns, even after
// a narrow typing prompt was open (the input kept that prompt's scroll).
func TestExportPromptShowsWholePathAt80(t *testing.T) {
	opts := testOptions()
	opts.WriteCSV = func(string, []profiler.Result) error { return nil }
	hs := startEditing(t, &fakeExec{}, opts, 80, 24)
	hs.keys("r")
	hs.waitFor("run", idle(1))
	hs.keys("enter") // the typing prompt, 10 cells wide
	hs.waitFor("typing", func(m Model) bool { return m.prompt.kind == promptTyping })
	hs.keys("esc", "e")
	frame := hs.waitFor("prompt", func(m Model) bool { return m.prompt.kind == promptExport })
	checkFrame(t, frame, 80, 24)
	if !strings.Contains(frame, "export CSV to: ./mltop-20260102-030405.csv") {
		t.Errorf("the export prompt cuts its default path at 80 columns:\n%s", frame)
	}
}
