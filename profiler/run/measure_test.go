package run_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// modeRecorder is enginetest.MemBackend that remembers the modes it was
// given; knows says it prepares dirty caches itself (else it reports
// dirty as CacheFlush, as MemBackend does).
type modeRecorder struct {
	enginetest.MemBackend
	knows bool
	modes map[profiler.CacheMode]int
}

func (b *modeRecorder) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if b.modes == nil {
		b.modes = map[profiler.CacheMode]int{}
	}
	b.modes[mode]++
	t, err := b.MemBackend.Time(ls, reps, mode)
	if b.knows {
		t.Cache = ""
	}
	return t, err
}

func TestRunnerCacheModes(t *testing.T) {
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}}
	for _, c := range []struct {
		mode      profiler.CacheMode
		knows     bool
		wantAsked profiler.CacheMode
		wantShown profiler.CacheMode
	}{
		{"", false, profiler.CacheCold, profiler.CacheCold},
		{profiler.CacheCold, false, profiler.CacheCold, profiler.CacheCold},
		{profiler.CacheHot, false, profiler.CacheHot, profiler.CacheHot},
		{profiler.CacheDirty, false, profiler.CacheDirty, profiler.CacheFlush}, // one flush: not known to be dirty
		{profiler.CacheDirty, true, profiler.CacheDirty, profiler.CacheDirty},
	} {
		b := &modeRecorder{knows: c.knows}
		o := enginetest.QuickOptions()
		o.Cache = c.mode
		res := run.NewRunner(b).Run(context.Background(), spec, o, nil)
		if res.Status != profiler.StatusOK || res.Cache != c.wantShown {
			t.Errorf("%q knows=%v: status %s cache %q, want %q", c.mode, c.knows, res.Status, res.Cache, c.wantShown)
		}
		if len(b.modes) != 1 || b.modes[c.wantAsked] == 0 {
			t.Errorf("%q knows=%v: Time was asked %v, want only %q", c.mode, c.knows, b.modes, c.wantAsked)
		}
	}
}

func TestRunnerReportsStopAndPhases(t *testing.T) {
	o := enginetest.QuickOptions()
	res := run.NewRunner(&enginetest.MemBackend{}).Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}}, o, nil)
	if res.StopReason != profiler.StopPrecision {
		t.Errorf("stop reason %q", res.StopReason)
	}
	if res.Stats.CILo == 0 || res.Stats.CILo > res.Stats.Median || res.Stats.CIHi < res.Stats.Median {
		t.Errorf("CI %+v", res.Stats)
	}
	p := res.Phases
	if p == nil || p.Plan <= 0 || p.Verify <= 0 || p.Warmup <= 0 || p.Measure <= 0 || p.VerifyAfter <= 0 || p.Inputs <= 0 || p.Reference <= 0 {
		t.Fatalf("phases %+v", p)
	}
	if tot := p.Total(); tot > res.WallSeconds*1.0001+1e-6 || tot < res.WallSeconds*0.5 {
		t.Errorf("phases sum to %g s of a %g s spec", tot, res.WallSeconds)
	}
	if !strings.Contains(p.String(), "measure ") {
		t.Errorf("String: %q", p.String())
	}
	// Same shape and seed again: inputs and reference come from the caches.
	r := run.NewRunner(&enginetest.MemBackend{})
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}, Knobs: map[string]int{"WG": 32}}
	r.Run(context.Background(), spec, o, nil)
	spec.Knobs["WG"] = 64
	again := r.Run(context.Background(), spec, o, nil)
	if again.Phases.Inputs != 0 || again.Phases.Reference != 0 {
		t.Errorf("a knob change regenerated inputs or the reference: %+v", again.Phases)
	}
	o.Stop.MaxSamples = 15
	o.Stop.MinSamples = 20
	res = run.NewRunner(&enginetest.MemBackend{}).Run(context.Background(), spec, o, nil)
	if res.StopReason != profiler.StopMaxSamples || res.Stats.N != 15 {
		t.Errorf("max samples: %q n=%d", res.StopReason, res.Stats.N)
	}
}

func TestWithRoundTrip(t *testing.T) {
	r := run.WithRoundTrip(profiler.Result{WallSeconds: 0}, time.Now().Add(-time.Second))
	if r.Phases == nil || r.Phases.Worker < 0.99 {
		t.Errorf("round trip %+v", r.Phases)
	}
}

// Checked elements are found in the ranges downloaded back to back,
// whether the lookups go forward (a check's usual order), back, or jump.
func TestRangePlaces(t *testing.T) {
	offs, lens := []int64{0, 100, 1000}, []int64{8, 40, 4}
	qs := []int64{0, 4, 100, 136, 1000, 104, 4, 1000, 100}
	want := []int64{0, 4, 8, 44, 48, 12, 4, 48, 8}
	if got := run.RangePlaces(offs, lens, qs); !slices.Equal(got, want) {
		t.Errorf("places %v, want %v", got, want)
	}
}

func TestSlab(t *testing.T) {
	var s []byte
	if p := run.Slab(&s, 4, 0xff); len(p) != 4 || p[3] != 0xff {
		t.Errorf("%v", p)
	}
	if p := run.Slab(&s, 2, 0xff); len(p) != 2 || &p[0] != &s[0] {
		t.Error("a smaller request must reuse the slab")
	}
	if p := run.Slab(&s, 8, 0xff); len(p) != 8 || p[7] != 0xff {
		t.Errorf("grown %v", p)
	}
}

func TestWarmupFor(t *testing.T) {
	cases := []struct {
		settle float64
		since  time.Duration
		want   float64
	}{
		{0, 10 * time.Millisecond, 0.002}, // a sweep's next spec
		{0, run.WarmBusyWindow - time.Millisecond, 0.002},
		{0, run.WarmBusyWindow, 0.02}, // a pause: the clocks may have dropped
		{0, time.Hour, 0.02},
		{0, time.Since(time.Time{}), 0.02}, // the runner never measured
		{0, -time.Second, 0.02},            // clock went backwards: take the whole warm-up
		// --settle is taken in full even right after another spec
		{1, 10 * time.Millisecond, 1},
		{1, time.Hour, 1},
		{0.01, time.Hour, 0.02}, // a settle shorter than the warm-up changes nothing
		{0.01, 10 * time.Millisecond, 0.01},
		{0.001, 10 * time.Millisecond, 0.002}, // a settle shorter than the shortened warm-up
	}
	for _, c := range cases {
		if got := run.WarmupFor(0.02, c.settle, c.since); got != c.want {
			t.Errorf("run.WarmupFor(0.02, %g, %v) = %g, want %g", c.settle, c.since, got, c.want)
		}
	}
}

// clockReporter reports a different SM clock for each timing loop.
type clockReporter struct {
	enginetest.MemBackend
	loops int
}

func (b *clockReporter) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	t, err := b.MemBackend.Time(ls, reps, mode)
	b.loops++
	t.SMClockMHz = []float64{1900, 2000, 1950, 0}[b.loops%4] // 0: a loop without a probe
	return t, err
}

// The result's SM clock is the median over the measurement's timing loops
// that reported one; a backend that never reports leaves it 0.
func TestRunnerSMClock(t *testing.T) {
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}}
	o := enginetest.QuickOptions()
	o.Stop.MinSamples, o.Stop.MaxSamples = 40, 40
	b := &clockReporter{}
	res := run.NewRunner(b).Run(context.Background(), spec, o, nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("%s %s", res.Status, res.Error)
	}
	if res.SMClockMHz < 1900 || res.SMClockMHz > 2000 || b.loops < 2 {
		t.Errorf("SM clock %g MHz over %d loops, want the median of the reported 1900-2000", res.SMClockMHz, b.loops)
	}
	plain := run.NewRunner(&enginetest.MemBackend{}).Run(context.Background(), spec, o, nil)
	if plain.SMClockMHz != 0 {
		t.Errorf("a backend without a clock gave %g MHz", plain.SMClockMHz)
	}
}

func TestCheckedRanges(t *testing.T) {
	cases := []struct {
		name       string
		idx        []int
		size, n    int64
		gap        int64
		offs, lens []int64
	}{
		{"none", nil, 4, 100, 0, nil, nil},
		{"one element", []int{7}, 2, 100, 0, []int64{14}, []int64{2}},
		{"sorted and merged when touching", []int{3, 1, 2, 9}, 4, 100, 0, []int64{4, 36}, []int64{12, 4}},
		{"merged within the gap", []int{0, 5, 50}, 4, 100, 16, []int64{0, 200}, []int64{24, 4}},
		{"duplicates once", []int{5, 5, 5}, 4, 100, 0, []int64{20}, []int64{4}},
		{"out of range left out", []int{-1, 2, 100, 1000}, 4, 100, 0, []int64{8}, []int64{4}},
	}
	for _, c := range cases {
		offs, lens := run.CheckedRanges(c.idx, c.size, c.n, c.gap)
		if !slices.Equal(offs, c.offs) || !slices.Equal(lens, c.lens) {
			t.Errorf("%s: offsets %v lengths %v, want %v %v", c.name, offs, lens, c.offs, c.lens)
		}
	}
}

// A backend that reads parts of buffers gets asked for the checked rows
// only, and a kernel that skips its last element is still caught (the
// output is poisoned by the backend's own fill).
func TestVerifyReadsOnlyCheckedRanges(t *testing.T) {
	const n = 1 << 22 // 16 MiB of f32: 256 checked rows are far apart
	for _, broken := range []bool{false, true} {
		b := &enginetest.RangedBackend{}
		spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": n}, Flags: map[string]bool{"broken": broken}}
		o := enginetest.QuickOptions()
		res := run.NewRunner(b).Run(context.Background(), spec, o, nil)
		want := profiler.StatusOK
		if broken {
			want = profiler.StatusMismatch
		}
		if res.Status != want {
			t.Fatalf("broken=%v: status %s (%s), want %s", broken, res.Status, res.Error, want)
		}
		if b.Fills == 0 {
			t.Errorf("broken=%v: the output was poisoned by upload, not by the backend's fill", broken)
		}
		checks := 2 // before and after timing; a mismatch stops after the first
		if broken {
			checks = 1
		}
		if b.Ranges == 0 || b.RangeBytes > checks*4*n/2 {
			t.Errorf("broken=%v: %d ranges, %d bytes read over %d checks of a %d-byte output: want only the checked rows (under half)", broken, b.Ranges, b.RangeBytes, checks, 4*n)
		}
	}
}

// A backend that copies on the device gets a shape's inputs uploaded once:
// the first spec keeps a device copy, the next specs of that shape restore
// from it (and still check ok), and a new shape starts over.
func TestInputsRestoredFromDeviceCopy(t *testing.T) {
	b := &enginetest.RangedBackend{}
	r := run.NewRunner(b)
	o := enginetest.QuickOptions()
	runAt := func(n, wg int) profiler.Result {
		spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}
		res := r.Run(context.Background(), spec, o, nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("N=%d WG=%d: %s %s", n, wg, res.Status, res.Error)
		}
		return res
	}
	runAt(4096, 64)
	if b.Copies != 1 {
		t.Fatalf("first spec: %d device copies, want 1 (keeping x)", b.Copies)
	}
	runAt(4096, 128)
	runAt(4096, 32)
	if b.Copies != 3 {
		t.Errorf("two more specs of the shape: %d device copies in all, want 3 (x restored twice)", b.Copies)
	}
	runAt(8192, 64)
	if b.Copies != 4 {
		t.Errorf("a new shape: %d device copies in all, want 4 (a new copy kept, none restored)", b.Copies)
	}
}

// levelBackend times rep k (counting every timed rep, warm-up included)
// at level(k) ns.
type levelBackend struct {
	enginetest.MemBackend
	level func(rep int) float64
	reps  int
}

func (b *levelBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	t, err := b.MemBackend.Time(ls, reps, mode)
	for i := range t.Samples {
		for j := range t.Samples[i] {
			t.Samples[i][j] = b.level(b.reps) / float64(len(t.Samples[i]))
		}
		b.reps++
	}
	return t, err
}

// shifting is 100 µs for the first 30 reps, then 97 µs: a level that
// moves during the measurement, as when the boost clock switches.
func shifting(rep int) float64 {
	if rep >= 30 {
		return 97e3
	}
	return 100e3
}

// A measurement whose level moves drops the samples before the move as
// warm-up and reports the level it settled at, on precision, not at the
// time limit; a steady one drops nothing.
func TestMeasureRestartsWhenTheLevelMoves(t *testing.T) {
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}}
	o := enginetest.QuickOptions()
	o.Stop = profiler.DefaultStopRule()
	o.Stop.MinTime, o.Stop.MinSamples = 0.001, 40 // the move comes inside the first 40
	res := run.NewRunner(&levelBackend{level: shifting}).Run(context.Background(), spec, o, nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("%s %s", res.Status, res.Error)
	}
	if res.DriftDropped == 0 || res.StopReason != profiler.StopPrecision {
		t.Fatalf("dropped %d samples, stopped on %q: want samples dropped and a stop on precision", res.DriftDropped, res.StopReason)
	}
	if m := res.Stats.Median; m != 97e3 {
		t.Errorf("median %.0f ns, want the level it settled at (97000)", m)
	}
	steady := run.NewRunner(&levelBackend{level: shifting, reps: 30}).Run(context.Background(), spec, o, nil)
	if steady.DriftDropped != 0 {
		t.Errorf("a steady measurement dropped %d samples", steady.DriftDropped)
	}
}

// MaxSamples bounds the reps a measurement takes even when restarts drop
// samples as warm-up: a level that keeps moving stops at MaxSamples reps
// (plus the warm-up's), not at the time limit with many more.
func TestMeasureMaxSamplesCountsDroppedSamples(t *testing.T) {
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100}}
	o := enginetest.QuickOptions()
	o.Stop = profiler.DefaultStopRule()
	o.Stop.MinTime, o.Stop.MinSamples, o.Stop.MaxSamples, o.Stop.MaxTime = 0.001, 20, 400, 3
	// each rep 0.05% slower than the one before: a level that never
	// settles (a GPU heating up), so restarts keep dropping samples
	slowing := func(rep int) float64 { return 100e3 * (1 + 0.0005*float64(rep)) }
	res := run.NewRunner(&levelBackend{level: slowing}).Run(context.Background(), spec, o, nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("%s %s", res.Status, res.Error)
	}
	if res.DriftDropped == 0 {
		t.Fatalf("no samples dropped: the test's level does not move (%d samples, %q, median %g)", res.Stats.N, res.StopReason, res.Stats.Median)
	}
	// The warm-up takes a handful of single reps; the timed reps are the rest.
	if timed := res.Stats.N + res.DriftDropped; timed > o.Stop.MaxSamples || res.StopReason != profiler.StopMaxSamples {
		t.Errorf("%d samples taken (%d kept, %d dropped), stopped on %q: want at most MaxSamples %d, stopped on %q", timed, res.Stats.N, res.DriftDropped, res.StopReason, o.Stop.MaxSamples, profiler.StopMaxSamples)
	}
}
