package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// twoDevices are two fake GPUs, the first the session's executor.
func twoDevices(a, b *fakeExec) (profiler.Executor, Options) {
	opts := testOptions()
	opts.Devices = []run.Device{{Ordinal: 0, Exec: a}, {Ordinal: 1, Exec: b}}
	return a, opts
}

func headerOf(frame string) string { h, _, _ := strings.Cut(frame, "\n"); return h }

func (f *fakeExec) ran() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// TestDevicesHeader: the header names both GPUs; a sweep (s) keeps both
// busy at once; a single run uses the first only.
func TestDevicesHeader(t *testing.T) {
	a, b := &fakeExec{block: true}, &fakeExec{block: true}
	exec, opts := twoDevices(a, b)
	hs := start(t, exec, opts, 120, 40)
	hs.keys("down", "enter") // softmax_bwd: s sweeps WG over 6 values
	frame := hs.waitFor("softmax_bwd", func(m Model) bool { return m.family().Name() == "softmax_bwd" })
	head := headerOf(frame)
	if !strings.Contains(head, "│ GPU 0 Test GPU idle · GPU 1 Test GPU idle") {
		t.Errorf("the header does not list both devices idle: %q", head)
	}
	hs.keys("s")
	frame = hs.waitFor("both devices busy", func(m Model) bool {
		return len(m.devCounts) == 2 && m.devCounts[0].Busy && m.devCounts[1].Busy
	})
	head = headerOf(frame)
	golden.RequireEqual(t, head)
	if !strings.Contains(head, "GPU 0 Test GPU ▶ busy · GPU 1 Test GPU ▶ busy") {
		t.Errorf("the header does not show both devices busy: %q", head)
	}
	if a.ran() != 1 || b.ran() != 1 {
		t.Errorf("the sweep runs %d and %d specs at once on the two devices, want 1 and 1", a.ran(), b.ran())
	}
	hs.keys("esc")
	hs.waitFor("cancelled", func(m Model) bool { return !m.running() && m.batch != nil && m.batch.cancelled })
	for _, f := range []*fakeExec{a, b} {
		f.mu.Lock()
		f.block = false
		f.mu.Unlock()
	}
	// The whole sweep: every spec once, over both devices.
	before := a.ran() + b.ran()
	hs.keys("s")
	frame = hs.waitFor("the sweep", func(m Model) bool { return !m.running() && m.batch.done == 6 })
	if got := a.ran() + b.ran() - before; got != 6 {
		t.Errorf("the sweep ran %d specs over the two devices, want 6", got)
	}
	m := hs.model()
	if done := m.devCounts[0].Done + m.devCounts[1].Done; done != 6 || m.devCounts[0].Busy || m.devCounts[1].Busy {
		t.Errorf("the header's counts after the sweep: %+v, want 6 done in all, none busy", m.devCounts)
	}
	if !strings.Contains(headerOf(frame), " done") {
		t.Errorf("the header does not say what each device did: %q", headerOf(frame))
	}
	for i, r := range m.batch.results {
		if r == nil || r.Spec.Knobs["WG"] != m.batch.sweepVals[i] {
			t.Errorf("sweep value %d has result %v: the devices' results reach the wrong bars", m.batch.sweepVals[i], r)
		}
	}
	// A single run goes to the first device.
	na, nb, runs := a.ran(), b.ran(), m.hist.len()
	hs.keys("r")
	hs.waitFor("the run", func(m Model) bool { return !m.running() && m.hist.len() == runs+1 })
	if a.ran() != na+1 || b.ran() != nb {
		t.Errorf("r ran %d specs on device 0 and %d on device 1, want 1 and 0", a.ran()-na, b.ran()-nb)
	}
}

func TestStartIndexMapsRetries(t *testing.T) {
	s := func(wg int) profiler.Spec {
		return profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": wg}}
	}
	specs := []profiler.Spec{s(32), s(64), s(32)}
	x := newStartIndex(specs)
	// Started out of order; the first WG=32 crashes on its device and
	// starts again (start 3) on another.
	for _, c := range []struct{ start, wg, want int }{{0, 64, 1}, {1, 32, 0}, {2, 32, 2}} {
		if got := x.start(c.start, s(c.wg)); got != c.want {
			t.Errorf("start %d of WG=%d → spec %d, want %d", c.start, c.wg, got, c.want)
		}
	}
	if j, _ := x.finish(2); j != 2 {
		t.Errorf("finish of start 2 → spec %d, want 2", j)
	}
	if got := x.start(3, s(32)); got != 0 {
		t.Errorf("the retry of WG=32 → spec %d, want 0 (started, not done)", got)
	}
	if j, ok := x.finish(3); !ok || j != 0 {
		t.Errorf("finish of the retry → spec %d %v, want 0", j, ok)
	}
	if got := x.start(4, s(128)); got != -1 {
		t.Errorf("a spec not in the batch → %d, want -1", got)
	}
}

// A device whose worker has not said hello yet has no name: the header
// says it is starting.
func TestDevicesTextStarting(t *testing.T) {
	m := Model{devCounts: []run.DeviceCount{{Ordinal: 0, Name: "H100", Done: 2}, {Ordinal: 1}}}
	if got, want := m.devicesText(), "GPU 0 H100 idle 2 done · GPU 1 starting"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
