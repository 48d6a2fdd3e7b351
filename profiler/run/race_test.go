package run_test

import (
	"context"
	"os"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

// raceSlowdown is how much slower than MemBackend's 1000 ns test_scale
// runs at each WG: 64 is the best, 128 within 1.1x of it, 32 twice it.
var raceSlowdown = map[int]float64{64: 1, 128: 1.05, 32: 2}

// raceBackend is MemBackend whose samples take raceSlowdown times longer
// by the launch's WG.
type raceBackend struct{ enginetest.MemBackend }

func (b *raceBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	t, err := b.MemBackend.Time(ls, reps, mode)
	f := raceSlowdown[ls[0].Dispatch.Group[0]]
	for _, rep := range t.Samples {
		for i := range rep {
			rep[i] *= f
		}
	}
	return t, err
}

// raceWorkerEnv makes the test binary a worker over raceBackend (TestMain).
const raceWorkerEnv = "MLTOP_TEST_RACE_WORKER"

func serveRaceWorker() int {
	err := run.ServeWorker(os.Stdin, os.Stdout, func() (profiler.Executor, error) {
		return run.NewRunner(&raceBackend{}), nil
	})
	if err != nil {
		return 1
	}
	return 0
}

// raceSweep is two shapes (N) of three WG each, the best first in each.
func raceSweep(t *testing.T, race string) *sweep.Stream {
	t.Helper()
	src := "defaults: {noise: 0.01, min_samples: 20, min_time: 0.000001, warmup: 0.000001, race: " + race + "}\n" +
		"sweeps:\n  - kernel: test_scale\n    knobs: {WG: [64, 32, 128]}\n    dims: {N: [100, 1000]}\n"
	st, err := sweep.ParseStream("race.yaml", []byte(src), profiler.DefaultOptions(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkRaced: the slow rows (WG=32) stopped outpaced at the first count
// with an interval, their median and interval kept; the best and the one
// within the factor were measured to the noise target.
func checkRaced(t *testing.T, rows []profiler.Result, sum run.Summary) {
	t.Helper()
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	for _, r := range rows {
		wg := r.Spec.Knobs["WG"]
		if r.Status != profiler.StatusOK {
			t.Errorf("WG=%d N=%d: %s %s", wg, r.Spec.Dims["N"], r.Status, r.Error)
			continue
		}
		if wg == 32 {
			st := r.Stats
			if r.StopReason != profiler.StopOutpaced || st.N != profiler.RaceMinSamples || st.CILo <= 1.1*1000 || st.Median < st.CILo || st.CIHi < st.Median {
				t.Errorf("WG=32 N=%d: stopped on %q after %d samples (CI %g–%g, median %g), want %q after %d with its interval kept",
					r.Spec.Dims["N"], r.StopReason, st.N, st.CILo, st.CIHi, st.Median, profiler.StopOutpaced, profiler.RaceMinSamples)
			}
		} else if r.StopReason != profiler.StopPrecision || r.Stats.N < 20 {
			t.Errorf("WG=%d N=%d: stopped on %q after %d samples, want %q after at least 20", wg, r.Spec.Dims["N"], r.StopReason, r.Stats.N, profiler.StopPrecision)
		}
	}
	if sum.Outpaced != 2 || sum.Race != 1.1 || sum.Measured != 6 {
		t.Errorf("summary: %d outpaced of %d measured at %g, want 2 of 6 at 1.1", sum.Outpaced, sum.Measured, sum.Race)
	}
	if want := "2 of 6 specs stopped early, slower than 1.1x the best of their shape (--race)"; sum.RaceNote() != want {
		t.Errorf("note %q, want %q", sum.RaceNote(), want)
	}
}

// A sweep with race: 1.1, in process: the specs twice as slow as their
// shape's best stop outpaced; without race every spec is measured to the
// noise target and the sweep says nothing of racing.
func TestSweepRace(t *testing.T) {
	sink := &memSink{}
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: raceSweep(t, "1.1"), Exec: run.NewRunner(&raceBackend{})}, sink)
	if err != nil {
		t.Fatal(err)
	}
	checkRaced(t, sink.rows, sum)

	plain := &memSink{}
	sum, err = run.Sweep(context.Background(), run.SweepConfig{Source: raceSweep(t, "0"), Exec: run.NewRunner(&raceBackend{})}, plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plain.rows {
		if r.StopReason != profiler.StopPrecision {
			t.Errorf("without race: WG=%d stopped on %q", r.Spec.Knobs["WG"], r.StopReason)
		}
	}
	if sum.Outpaced != 0 || sum.RaceNote() != "" {
		t.Errorf("without race: %d outpaced, note %q", sum.Outpaced, sum.RaceNote())
	}
}

// Through a worker subprocess (the test binary serving raceBackend): the
// bound travels with each spec's request and the worker stops on it.
func TestSweepRaceThroughWorker(t *testing.T) {
	pool, err := run.NewWorkerPool([]string{os.Args[0], "-test.run=^$"}, []string{raceWorkerEnv + "=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sink := &memSink{}
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: raceSweep(t, "1.1"), Exec: pool}, sink)
	if err != nil {
		t.Fatal(err)
	}
	checkRaced(t, sink.rows, sum)
}

// On devices (one here, so that the order within a shape is the file's):
// the parent holds the best and sends the bound with each spec.
func TestSweepRaceOnDevices(t *testing.T) {
	sink := &memSink{}
	open := func() ([]run.Device, error) {
		return []run.Device{{Ordinal: 0, Exec: run.NewRunner(&raceBackend{})}}, nil
	}
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: raceSweep(t, "1.1"), OpenDevices: open}, sink)
	if err != nil {
		t.Fatal(err)
	}
	checkRaced(t, sink.rows, sum)
}

// On two devices a spec may run beside its shape's best and go unbounded,
// but none within the factor is ever outpaced, and the shapes each
// device keeps to are raced.
func TestSweepRaceOnTwoDevices(t *testing.T) {
	src := "defaults: {noise: 0.01, min_samples: 20, min_time: 0.000001, warmup: 0.000001, race: 1.1}\n" +
		"sweeps:\n  - kernel: test_scale\n    knobs: {WG: [64, 32, 128]}\n    dims: {N: [100, 200, 300, 400, 500, 600]}\n"
	st, err := sweep.ParseStream("race.yaml", []byte(src), profiler.DefaultOptions(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	open := func() ([]run.Device, error) {
		return []run.Device{{Ordinal: 0, Exec: run.NewRunner(&raceBackend{})}, {Ordinal: 1, Exec: run.NewRunner(&raceBackend{})}}, nil
	}
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, OpenDevices: open}, sink)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.rows {
		if r.StopReason == profiler.StopOutpaced && r.Spec.Knobs["WG"] != 32 {
			t.Errorf("WG=%d N=%d outpaced: it is within 1.1x of its shape's best", r.Spec.Knobs["WG"], r.Spec.Dims["N"])
		}
	}
	if sum.Outpaced == 0 || len(sink.rows) != 18 {
		t.Errorf("%d rows, %d outpaced: the slow specs of 6 shapes were never raced", len(sink.rows), sum.Outpaced)
	}
}

// --resume: the rows read back seed their shapes' best, so the slow
// specs race the fast ones the file holds; a row that cannot be a best
// (outpaced, a mismatch) seeds nothing.
func TestSweepRaceResumeSeeds(t *testing.T) {
	for _, c := range []struct {
		name     string
		row      profiler.Result
		outpaced bool
	}{
		{"precise ok row", profiler.Result{Status: profiler.StatusOK, StopReason: profiler.StopPrecision, Stats: profiler.Stats{Median: 1000}}, true},
		{"time-limit ok row", profiler.Result{Status: profiler.StatusOK, StopReason: profiler.StopTimeLimit, Stats: profiler.Stats{Median: 1000}}, true},
		{"outpaced row", profiler.Result{Status: profiler.StatusOK, StopReason: profiler.StopOutpaced, Stats: profiler.Stats{Median: 1000}}, false},
		{"mismatch", profiler.Result{Status: profiler.StatusMismatch, StopReason: profiler.StopPrecision, Stats: profiler.Stats{Median: 1000}}, false},
	} {
		st := raceSweep(t, "1.1")
		jobs, _, err := st.Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		skip := map[string]bool{}
		for _, j := range jobs {
			if j.Spec.Knobs["WG"] == 64 {
				skip[j.Spec.Key()] = true
			}
		}
		resumed := func(j profiler.Job) (profiler.Result, bool) { return c.row, skip[j.Spec.Key()] }
		sink := &memSink{}
		sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: run.NewRunner(&raceBackend{}), Skip: skip, Resumed: resumed}, sink)
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.rows) != 4 || sum.Skipped != 2 {
			t.Fatalf("%s: %d rows, %d skipped, want 4 and 2", c.name, len(sink.rows), sum.Skipped)
		}
		for _, r := range sink.rows {
			slow := r.Spec.Knobs["WG"] == 32
			if got := r.StopReason == profiler.StopOutpaced; got != (slow && c.outpaced) {
				t.Errorf("%s: WG=%d N=%d stopped on %q", c.name, r.Spec.Knobs["WG"], r.Spec.Dims["N"], r.StopReason)
			}
		}
	}
}

// run.Jobs (the TUI, mltop tune) races nothing: a search compares its
// candidates with their full precision.
func TestJobsIgnoreRace(t *testing.T) {
	jobs, _, err := raceSweep(t, "1.1").Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	sum, err := run.Jobs(context.Background(), run.NewRunner(&raceBackend{}), jobs, nil, []profiler.Sink{sink}, run.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.rows {
		if r.StopReason != profiler.StopPrecision {
			t.Errorf("WG=%d stopped on %q", r.Spec.Knobs["WG"], r.StopReason)
		}
	}
	if sum.RaceNote() != "" {
		t.Errorf("note %q", sum.RaceNote())
	}
}

// Only a verified row measured to the end of its rule sets a best.
func TestSetsRaceBest(t *testing.T) {
	for _, c := range []struct {
		status profiler.Status
		why    string
		median float64
		want   bool
	}{
		{profiler.StatusOK, profiler.StopPrecision, 1000, true},
		{profiler.StatusOK, profiler.StopTimeLimit, 1000, true},
		{profiler.StatusOK, profiler.StopMaxSamples, 1000, true},
		{profiler.StatusOK, profiler.StopOutpaced, 1000, false},
		{profiler.StatusOK, "", 1000, false},
		{profiler.StatusOK, profiler.StopPrecision, 0, false},
		{profiler.StatusMismatch, profiler.StopPrecision, 1000, false},
		{profiler.StatusUnchecked, profiler.StopPrecision, 1000, false},
		{profiler.StatusCrashed, "", 0, false},
	} {
		r := profiler.Result{Status: c.status, StopReason: c.why, Stats: profiler.Stats{Median: c.median}}
		if got := run.SetsRaceBest(r); got != c.want {
			t.Errorf("%s %q median %g: %v, want %v", c.status, c.why, c.median, got, c.want)
		}
	}
}

// The first batch of a racing spec is RaceMinSamples, so that a clearly
// slower spec stops there; a spec that does not race takes its minimum
// count in one batch as before.
func TestRaceFirstBatch(t *testing.T) {
	spec := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"N": 100}}
	o := enginetest.QuickOptions()
	o.Stop.MinSamples = 20
	o.Stop.Outpaced = 1100
	res := run.NewRunner(&raceBackend{}).Run(context.Background(), spec, o, nil)
	if res.StopReason != profiler.StopOutpaced || res.Stats.N != profiler.RaceMinSamples {
		t.Errorf("bounded: %q after %d samples", res.StopReason, res.Stats.N)
	}
	o.Stop.Outpaced = 0
	res = run.NewRunner(&raceBackend{}).Run(context.Background(), spec, o, nil)
	if res.StopReason != profiler.StopPrecision || res.Stats.N < 20 {
		t.Errorf("unbounded: %q after %d samples", res.StopReason, res.Stats.N)
	}
}
