package ui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// fakeDevice is a made-up GPU, so frames hold nothing of the test machine.
var fakeDevice = profiler.DeviceInfo{
	Backend: "fake", Name: "Test GPU", Vendor: "test", Units: 10, UnitName: "core",
	TGMPerGroup: 32 << 10, TGMPerUnit: 64 << 10, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048,
	SIMDWidth: 32, MemoryBytes: 8 << 30, Timer: "fake-timer",
}

// fakeExec answers every spec at once with numbers that depend only on the
// spec: the median is 100 µs plus 1 µs per unit of the knob sum.
type fakeExec struct {
	mu         sync.Mutex
	calls      []profiler.Spec
	prefetched []profiler.Spec // specs the job loop asked to prepare ahead
	status     profiler.Status // what Run reports (default ok)
	errMsg     string
	block      bool // wait for the context to end, then report cancelled
	blockFrom  int  // > 0: every call after the first blockFrom blocks as with block
	// noise, when set, is the CV of the samples: each call draws its own
	// (seeded by the call's number), as reruns of one config on a noisy
	// machine do, and the stats come from them.
	noise   float64
	tweak   func(*profiler.Result) // changes each measured result (a test's numbers)
	release chan struct{}          // with block: closing it ends the wait with a normal result
}

func (f *fakeExec) Device() profiler.DeviceInfo { return fakeDevice }

// Prefetch records the spec: the job loop calls it for the next spec
// before it runs the current one.
func (f *fakeExec) Prefetch(j profiler.Job) {
	s := j.Spec
	f.mu.Lock()
	f.prefetched = append(f.prefetched, s)
	f.mu.Unlock()
}
func (f *fakeExec) Close() error { return nil }

func (f *fakeExec) Run(ctx context.Context, s profiler.Spec, _ profiler.Options, progress func(profiler.Progress)) profiler.Result {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	st, msg, block, release := f.status, f.errMsg, f.block, f.release
	block = block || (f.blockFrom > 0 && len(f.calls) > f.blockFrom)
	f.mu.Unlock()
	p := run.MakePreview(s, fakeDevice)
	res := profiler.Result{Spec: p.Spec, Backend: "fake", Device: fakeDevice.Name, Timer: "fake-timer", SMClockMHz: 1755}
	if p.Err != nil {
		res.Status, res.Error = profiler.StatusInvalid, p.Err.Error()
		return res
	}
	res.FLOPs, res.Bytes = p.Plan.FLOPs, p.Plan.Bytes
	progress(profiler.Progress{Phase: "compile"})
	if st != "" && st != profiler.StatusOK && st != profiler.StatusMismatch {
		res.Status, res.Error = st, msg
		return res
	}
	cost, err := fakeCompile(p.Plan)
	if err != nil {
		res.Status, res.Error = profiler.StatusCompileError, err.Error()
		return res
	}
	for _, b := range p.Budget {
		b.CompilerTGM = b.Total
		res.Budget = append(res.Budget, b)
	}
	res.Occupancy = p.Occupancy
	if block {
		progress(profiler.Progress{Phase: "measure", Samples: 7, Median: 123456, CV: 0.02})
		select {
		case <-ctx.Done():
			res.Status, res.Error = profiler.StatusCancelled, "cancelled by user"
			return res
		case <-release: // nil unless set: then only the context ends the wait
		}
	}
	sum := 0
	for _, v := range p.Spec.Knobs {
		sum += v
	}
	med := 100e3 + float64(sum)*1e3 + cost
	res.Stats = profiler.Stats{N: 50, Min: med * 0.97, P10: med * 0.98, Median: med, P90: med * 1.03, Mean: med * 1.001, Stdev: med * 0.012, CV: 0.012}
	res.Samples = fakeSamples(med)
	f.mu.Lock()
	noise, call := f.noise, len(f.calls)
	f.mu.Unlock()
	if noise > 0 {
		rng := profiler.NewRNG(uint64(100 + call))
		for i := range res.Samples {
			res.Samples[i] = med * math.Max(0.2, 1+noise*rng.Normal())
		}
		res.Stats = profiler.Summarize(res.Samples)
		med = res.Stats.Median
	}
	res.Verdict = &profiler.Verdict{MaxAbsErr: 1.25e-6, MaxRelErr: 3.5e-5, RMSErr: 2.5e-7, Checked: 4096, ATol: 1e-5, RTol: 1e-4, RowsChecked: 256, RowsTotal: 2048, Rows: "256 of 2048 rows", Pass: true, WorstRatio: 0.12}
	res.Status = profiler.StatusOK
	if st == profiler.StatusMismatch {
		res.Status, res.Error = st, msg
		res.Verdict.Pass, res.Verdict.Mismatches, res.Verdict.MaxAbsErr, res.Verdict.WorstRatio = false, 3, 0.25, 2.5e3
		res.Verdict.Worst = "O[0,0,17,5] got 1.5 want 1.25"
	}
	res.TFLOPS = res.FLOPs / (med / 1e9) / 1e12
	res.GBps = res.Bytes / (med / 1e9) / 1e9
	if f.tweak != nil {
		f.tweak(&res)
	}
	return res
}

// fakeSamples are 50 durations spread as the fake stats say (CV 1.2 %),
// symmetric about med so their median is med: normal quantiles.
func fakeSamples(med float64) []float64 {
	out := make([]float64, 50)
	for i := range out {
		p := (float64(i) + 0.5) / float64(len(out))
		out[i] = med * (1 + 0.012*math.Sqrt2*math.Erfinv(2*p-1))
	}
	return out
}

func (f *fakeExec) set(st profiler.Status, msg string) {
	f.mu.Lock()
	f.status, f.errMsg = st, msg
	f.mu.Unlock()
}

// harness drives a program through teatest and checks conditions on the
// model inside the event loop (a program filter), so no state is read
// across goroutines and no frame depends on render timing.
type harness struct {
	t  *testing.T
	tm *teatest.TestModel

	mu    sync.Mutex
	cond  func(Model) bool
	frame string
	last  Model
	hit   chan struct{}
}

type nudge struct{}

func fixedNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// testOptions offers the two families the frames were drawn with, so new
// families registered by kernels/ do not change the golden frames.
func testOptions() Options {
	var fams []profiler.Family
	for _, n := range []string{"attn_fwd", "softmax_bwd"} {
		f, err := profiler.Lookup(n)
		if err != nil {
			panic(err)
		}
		fams = append(fams, f)
	}
	return Options{NoColor: true, Backends: "fake (test)", Now: fixedNow, Families: fams}
}

func start(t *testing.T, exec profiler.Executor, opts Options, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t, hit: make(chan struct{}, 1)}
	filter := func(m tea.Model, msg tea.Msg) tea.Msg {
		mm, ok := m.(Model)
		if !ok {
			return msg
		}
		hs.mu.Lock()
		defer hs.mu.Unlock()
		hs.last = mm
		if hs.cond != nil && hs.cond(mm) {
			hs.cond = nil
			hs.frame = ansi.Strip(mm.Render())
			hs.hit <- struct{}{}
		}
		return msg
	}
	hs.tm = teatest.NewTestModel(t, NewModel(exec, opts), teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithFilter(filter), tea.WithColorProfile(colorprofile.ASCII)))
	t.Cleanup(func() {
		_ = hs.tm.Quit()
		hs.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	})
	return hs
}

// waitFor returns the screen (plain text) at the first moment cond holds.
func (hs *harness) waitFor(what string, cond func(Model) bool) string {
	hs.t.Helper()
	hs.mu.Lock()
	hs.cond = cond
	hs.mu.Unlock()
	deadline := time.After(uiWait)
	for {
		hs.tm.Send(nudge{})
		select {
		case <-hs.hit:
			hs.mu.Lock()
			defer hs.mu.Unlock()
			return hs.frame
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			hs.mu.Lock()
			hs.cond = nil
			frame := ansi.Strip(hs.last.Render())
			hs.mu.Unlock()
			hs.t.Fatalf("timed out waiting for %s; screen:\n%s", what, frame)
		}
	}
}

// model is the model as the latest message left it, read under the lock
// (the event loop writes it at every message, nudges included).
func (hs *harness) model() Model {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.last
}

func (hs *harness) keys(ks ...string) {
	for _, k := range ks {
		hs.tm.Send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{"left": tea.KeyLeft, "right": tea.KeyRight, "up": tea.KeyUp, "down": tea.KeyDown,
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "backspace": tea.KeyBackspace}
	if k == "shift+tab" {
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	if c, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func (hs *harness) typeText(s string) { hs.tm.Type(s) }

// checkFrame asserts the frame is exactly w×h cells at most.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// fakeCompile "compiles" a user kernel's own source the way the runner
// would hand it to NVRTC: a line holding #error fails with an NVRTC-style
// log naming the user's file and line; a line "// cost N" makes the kernel
// N µs slower (so an edit changes the timing). Built-in families' sources
// cost nothing.
func fakeCompile(p *profiler.Plan) (float64, error) {
	cost := 0.0
	for _, d := range p.Dispatches {
		line := 0 // as the compiler counts, following #line
		for _, l := range strings.Split(d.Program.Code, "\n") {
			line++
			l = strings.TrimSpace(l)
			if n, ok := strings.CutPrefix(l, "#line "); ok {
				f, _, _ := strings.Cut(n, " ")
				v, _ := strconv.Atoi(f)
				line = v - 1
				continue
			}
			if strings.HasPrefix(l, "#error") {
				return 0, fmt.Errorf("compiling %s (%s): nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)\n%s(%d): error: %s\n\n1 error detected in the compilation of \"%s\".",
					d.Name, d.Program.Entry, d.Program.File, line, strings.TrimSpace(strings.TrimPrefix(l, "#error")), d.Program.File)
			}
			if n, ok := strings.CutPrefix(l, "// cost "); ok {
				v, err := strconv.ParseFloat(n, 64)
				if err == nil {
					cost += v * 1e3
				}
			}
		}
	}
	return cost, nil
}

// uiWait is how long a test waits for a frame: generous, because CI's two
// cores may be busy with other packages' tests; a frame that comes sooner
// ends the wait at once.
const uiWait = 30 * time.Second

// startEditing is start with the focus moved from the kernel list (where
// a session starts) to the editor, as a user's first enter does.
func startEditing(t *testing.T, exec profiler.Executor, opts Options, w, h int) *harness {
	t.Helper()
	hs := start(t, exec, opts, w, h)
	hs.keys("enter")
	hs.waitFor("the editor focused", func(m Model) bool { return m.focus == paneEditor })
	return hs
}
