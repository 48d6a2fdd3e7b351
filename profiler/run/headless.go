package run

import (
	"context"
	"fmt"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Summary counts a sweep's outcomes.
type Summary struct {
	Total, Skipped int
	NotRun         int // left when the sweep was interrupted
	ByStatus       map[profiler.Status]int
	Failed         int // mismatch, compile_error, crashed, timeout, error, cancelled
	Invalid        int
	// Clocks is the range of the SM clock the measured specs ran at
	// (Result.SMClockMHz), per device ordinal; empty where the backend
	// has no clock probe.
	Clocks map[int]ClockRange
	// Devices is where each device's time went in a multi-device sweep
	// (none on one device), and WallSeconds that sweep's wall time, from
	// its first worker's start to its end.
	Devices     []DeviceTime
	WallSeconds float64
	// Given counts the shard's specs another shard claimed and ran, and
	// Taken the other shards' specs this one did (--claims).
	Given, Taken int
	// Race is the --race factor the specs raced with (the largest, where
	// the sweep's entries set several; 0: none raced); Outpaced counts
	// the specs that stopped early for it (stop_reason outpaced), of
	// Measured, the specs that took samples.
	Race               float64
	Outpaced, Measured int
}

// ClockRange is the lowest and the highest SM clock seen, in MHz.
type ClockRange struct{ Lo, Hi float64 }

// count adds one result to the summary.
func (s *Summary) count(res profiler.Result) {
	if s.ByStatus == nil {
		s.ByStatus = map[profiler.Status]int{}
	}
	s.ByStatus[res.Status]++
	if res.Stats.N > 0 {
		s.Measured++
	}
	if res.StopReason == profiler.StopOutpaced {
		s.Outpaced++
	}
	if res.Status == profiler.StatusInvalid {
		s.Invalid++
	} else if res.Status.Failed() {
		s.Failed++
	}
	if c := res.SMClockMHz; c > 0 {
		if s.Clocks == nil {
			s.Clocks = map[int]ClockRange{}
		}
		r, seen := s.Clocks[res.DeviceOrdinal]
		if !seen {
			r = ClockRange{c, c}
		}
		r.Lo, r.Hi = min(r.Lo, c), max(r.Hi, c)
		s.Clocks[res.DeviceOrdinal] = r
	}
}

// ClockNoteSpread is the clock range, as a fraction of its low end, from
// which ClockNote speaks: on an H100 a 6% higher clock made attention
// kernels 2-3.5% faster, so specs timed 2% apart in clock can differ by
// about 1% for that alone.
const ClockNoteSpread = 0.02

// ClockNote is a line for the end of a sweep timed without --settle when
// the SM clock moved by ClockNoteSpread or more between its specs (on the
// device where it moved most), else "".
func (s Summary) ClockNote() string {
	var widest ClockRange
	for _, r := range s.Clocks {
		if r.Hi/r.Lo > widest.Hi/max(widest.Lo, 1) {
			widest = r
		}
	}
	if widest.Lo <= 0 || widest.Hi/widest.Lo-1 < ClockNoteSpread {
		return ""
	}
	return fmt.Sprintf("the SM clock ranged %.0f–%.0f MHz over these specs (%.1f%%): a GPU's boost clock follows its load of about the last second, so each time here depends partly on the specs before it; compare rows only where sm_clock_mhz agrees, or time each spec at its own clock with --settle 1 (1 s more per spec; on an H100, 99%% of the rows then repeat within 2%%; docs/measuring.md, Reproducibility)",
		widest.Lo, widest.Hi, 100*(widest.Hi/widest.Lo-1))
}

// ExitCode maps a sweep's outcome to the process exit code: 1 if any spec
// failed, else 2 if any spec was invalid, else 0.
func (s Summary) ExitCode() int {
	switch {
	case s.Failed > 0:
		return 1
	case s.Invalid > 0:
		return 2
	}
	return 0
}

// String is the one-line summary printed at the end of a sweep.
func (s Summary) String() string {
	msg := fmt.Sprintf("%s: %d ok", profiler.Plural(s.Total, "spec", "specs"), s.ByStatus[profiler.StatusOK])
	for _, st := range []profiler.Status{profiler.StatusMismatch, profiler.StatusCompileError, profiler.StatusCrashed, profiler.StatusTimeout, profiler.StatusError, profiler.StatusCancelled, profiler.StatusInvalid, profiler.StatusUnchecked} {
		if n := s.ByStatus[st]; n > 0 {
			msg += fmt.Sprintf(", %d %s", n, st)
		}
	}
	if s.NotRun > 0 {
		msg += fmt.Sprintf(", %d not run", s.NotRun)
	}
	if s.Skipped > 0 {
		msg += fmt.Sprintf(" (%d skipped: already in the --resume file)", s.Skipped)
	}
	if s.Given > 0 || s.Taken > 0 {
		msg += fmt.Sprintf("; %d taken from the other shards, %d of this shard's run by them (--claims)", s.Taken, s.Given)
	}
	return msg
}

// Hooks let the CLI draw progress.
type Hooks struct {
	Start    func(i, n int, s profiler.Spec)
	Progress func(i, n int, s profiler.Spec, p profiler.Progress)
	Done     func(i, n int, r profiler.Result)
	// Devices, when set, gets each device's count after every change in a
	// multi-device sweep (JobsOnDevices).
	Devices func([]DeviceCount)
}

// Jobs runs jobs in order on exec, skipping those whose Spec.Key is in
// skip, and hands each Result to every sink as soon as it is known.
func Jobs(ctx context.Context, exec profiler.Executor, jobs []profiler.Job, skip map[string]bool, sinks []profiler.Sink, h Hooks) (Summary, error) {
	n := 0
	for _, j := range jobs {
		if !skip[j.Spec.Key()] {
			n++
		}
	}
	return runFeed(ctx, exec, startFeed(ctx, sliceSource(jobs), skip), n, sinks, h, nil)
}

// runFeed is Jobs over a feed of about n jobs (the count the hooks get),
// each spec bounded by race (nil: none races).
func runFeed(ctx context.Context, exec profiler.Executor, f *feed, n int, sinks []profiler.Sink, h Hooks, race *raceBoard) (Summary, error) {
	sum := Summary{ByStatus: map[profiler.Status]int{}}
	devs := []Device{{Exec: exec}}
	clock := newDeviceClock(devs)
	// Hand the Prefetcher the Lookahead specs after the one about to run:
	// all of those before the first run, then one more per run, in order,
	// so the nearest specs are compiled first. The spec about to run
	// compiles in its own Run.
	pf, _ := exec.(Prefetcher)
	var window []profiler.Job // window[0] runs next
	fill := func() {
		for len(window) < 1+Lookahead() {
			j, ok := f.next()
			if !ok {
				return
			}
			window = append(window, j)
			// Another shard's spec (--claims) is prepared only once its unit
			// is claimed, when it runs: most of them their owner runs, and
			// making their inputs and references here takes the host from
			// the owner.
			if pf != nil && len(window) > 1 && !f.claims.other(j) {
				pf.Prefetch(j)
			}
		}
	}
	ran := 0
	var err error
	for err == nil {
		if ctx.Err() != nil {
			sum.NotRun = max(f.claims.toRun(n)-ran, f.claims.left(window))
			break
		}
		if fill(); len(window) == 0 {
			break
		}
		j, i := window[0], ran
		window = append(window[:0], window[1:]...)
		if !f.claim(j) {
			continue // another shard runs it
		}
		total := f.claims.toRun(n)
		if h.Start != nil {
			h.Start(i, total, j.Spec)
		}
		bound := race.bound(j)
		res := exec.Run(ctx, bound.Spec, bound.Options, func(p profiler.Progress) {
			if h.Progress != nil {
				h.Progress(i, total, j.Spec, p)
			}
		})
		race.note(j, res)
		ran++
		clock.done(0, res)
		sum.count(res)
		for _, s := range sinks {
			if werr := s.Write(res); werr != nil {
				err = fmt.Errorf("writing result: %w", werr)
				break
			}
		}
		if err == nil && h.Done != nil {
			h.Done(i, total, res)
		}
	}
	f.stop()
	sum.Devices, sum.WallSeconds = clock.finish(devs)
	sum.Skipped, sum.Total = f.skipped, f.total
	sum.Race = race.raced()
	if !f.finished(ctx) {
		sum.Total = max(f.total, f.skipped+n)
	}
	if err == nil {
		err = f.err
	}
	if err == nil {
		err = ctx.Err()
	}
	return sum, err
}

// SweepEstimate is what Estimate says of a sweep before it runs.
type SweepEstimate struct {
	// Lo and Hi bound the measuring time of all the specs (builds aside).
	Lo, Hi time.Duration
	// Builds counts the distinct kernels to compile (kernel, dtype, knobs,
	// flags), whose cost depends on the backend and is not included.
	Builds int
	// Slow counts the specs whose one kernel run takes SlowRun or more on
	// the device (KernelRunTime); Slowest is the slowest of them, one run
	// of it SlowestRun. Zero without a device.
	Slow       int
	Slowest    profiler.Spec
	SlowestRun time.Duration
	// Settle: some spec settles (Settle > 0); SettleOverWarmup: some
	// spec settles longer than it warms up.
	Settle, SettleOverWarmup bool
}

// Estimate bounds a sweep's measuring time from its options: each spec
// warms up, then samples for at least MinTime and MinSamples runs (unless
// MaxTime comes first) and at most MaxTime seconds.
// With dev, a spec also runs its kernel at least MinRuns times however
// short its limits (KernelRunTime each), and a time limit can be overrun
// by a run in flight: the bounds grow by that, and the slow specs are
// counted. Without dev (several devices, not opened yet) the run time of
// a kernel is not known and counts nothing.
func Estimate(jobs []profiler.Job, dev *profiler.DeviceInfo) SweepEstimate {
	x := newEstimator(dev)
	for _, j := range jobs {
		var plan *profiler.Plan
		if dev != nil {
			if p, err := Prepare(j.Spec, *dev, PrepareOptions{SkipFit: true}); err == nil {
				plan = p.Plan
			}
		}
		x.add(j, plan)
	}
	return x.result(1)
}

// estimator is Estimate one job at a time.
type estimator struct {
	dev    *profiler.DeviceInfo
	e      SweepEstimate
	lo, hi float64
	builds map[string]bool
}

func newEstimator(dev *profiler.DeviceInfo) *estimator {
	return &estimator{dev: dev, builds: map[string]bool{}}
}

// add counts job j, whose plan on the device is plan (nil when unknown).
func (x *estimator) add(j profiler.Job, plan *profiler.Plan) {
	o := j.Options.WithDefaults()
	var r float64
	if x.dev != nil && plan != nil {
		d := runTime(*x.dev, j.Spec.DType, plan)
		r = d.Seconds()
		if d >= SlowRun {
			x.e.Slow++
			if d > x.e.SlowestRun {
				x.e.Slowest, x.e.SlowestRun = j.Spec, d
			}
		}
	}
	// The least a spec takes: its verifying run, its warm-up (one run at
	// least), and sampling until min_time of kernel time and min_samples
	// runs, unless time_limit stops it first (whatever they ask), and one
	// sample at least. With a slow kernel (the CPU backend's) min_samples
	// runs outweigh min_time.
	sampling := min(max(o.Stop.MinTime, float64(o.Stop.MinSamples)*r), o.Stop.MaxTime)
	x.lo += r + max(o.WarmupTime(), r) + max(sampling, r)
	x.hi += o.WarmupTime() + o.Stop.MaxTime + MinRuns*r
	x.e.Settle = x.e.Settle || o.Settle > 0
	x.e.SettleOverWarmup = x.e.SettleOverWarmup || o.Settle > o.Warmup
	k := j.Spec
	k.Dims = nil
	x.builds[k.Key()] = true
}

// result is the estimate of the jobs added, times scale (the sweep's
// size over a sample's).
func (x *estimator) result(scale float64) SweepEstimate {
	e := x.e
	e.Builds = len(x.builds)
	e.Slow = int(float64(e.Slow) * scale)
	e.Lo = time.Duration(x.lo * scale * float64(time.Second))
	e.Hi = time.Duration(x.hi * scale * float64(time.Second))
	return e
}

// MinRuns is how many times a spec's kernel runs at the least: once to
// verify, once to warm up, once for one sample.
const MinRuns = 3

// SlowRun is the time of one kernel run from which `mltop run` and a
// sweep's banner say how long a run takes.
const SlowRun = 2 * time.Second

// CPUFLOPSPerCore is a rough rate of the CPU backend's scalar Go kernels,
// enough to warn before a run of minutes.
const CPUFLOPSPerCore = 1e9

// KernelRunTime estimates one run of spec s's kernel on dev from its plan:
// the longer of its FLOPs over the device's peak FLOP/s and its bytes over
// the peak bandwidth; on a device without a FLOP/s peak (the CPU), FLOPs
// over CPUFLOPSPerCore per core. The error is the spec's (rules, plan).
func KernelRunTime(dev profiler.DeviceInfo, s profiler.Spec) (time.Duration, *profiler.Plan, error) {
	prep, err := Prepare(s, dev, PrepareOptions{SkipFit: true})
	if err != nil {
		return 0, nil, err
	}
	return runTime(dev, prep.Spec.DType, prep.Plan), prep.Plan, nil
}

// runTime is KernelRunTime of a plan.
func runTime(dev profiler.DeviceInfo, dt profiler.DType, plan *profiler.Plan) time.Duration {
	var sec float64
	if p := dev.PeakFLOPS[dt]; p > 0 {
		sec = plan.FLOPs / p
	} else {
		sec = plan.FLOPs / (CPUFLOPSPerCore * float64(max(dev.Units, 1)))
	}
	if dev.PeakBandwidth > 0 {
		sec = max(sec, plan.Bytes/dev.PeakBandwidth)
	}
	return time.Duration(sec * float64(time.Second))
}
