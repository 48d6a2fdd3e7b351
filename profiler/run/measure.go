package run

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mltop/mltop/profiler"
)

// timeIn times launches in mode on b and returns the mode actually used.
func timeIn(b profiler.Backend, ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, profiler.CacheMode, error) {
	t, err := b.Time(ls, reps, mode)
	if t.Cache != "" {
		mode = t.Cache
	}
	return t, mode, err
}

// phaseClock charges the time since its last mark to a phase.
type phaseClock struct {
	p    *profiler.Phases
	last time.Time
}

func newPhaseClock(p *profiler.Phases) *phaseClock { return &phaseClock{p: p, last: time.Now()} }

// mark adds the time since the previous mark to *dst and restarts.
func (c *phaseClock) mark(dst *float64) {
	now := time.Now()
	*dst += now.Sub(c.last).Seconds()
	c.last = now
}

// withRoundTrip charges what the worker pool's call took beyond the
// worker's own wall time (request and result through the pipes, JSON) to
// the Worker phase.
func withRoundTrip(r profiler.Result, start time.Time) profiler.Result {
	if r.Phases == nil {
		r.Phases = &profiler.Phases{}
	}
	r.Phases.Worker += max(0, time.Since(start).Seconds()-r.WallSeconds)
	return r
}

// slab returns n bytes of b (grown as needed) all set to v. Backends copy
// uploads before returning, so one slab serves every zero (or poison)
// buffer of every spec instead of a fresh allocation per buffer.
func slab(b *[]byte, n int64, v byte) []byte {
	if int64(len(*b)) < n {
		*b = make([]byte, n)
		if v != 0 {
			for i := range *b {
				(*b)[i] = v
			}
		}
	}
	return (*b)[:n]
}

// rangeGap: checked elements closer than this many bytes are read in one
// range, so that a dense check reads the buffer in one piece. Small: a
// range costs little on every backend (CUDA gathers any number in one
// launch, Metal and the CPU copy from host memory), and every byte read
// is copied and compared twice per spec. At 64 KiB the sampled rows of an
// attention output (256 B each, 16 KiB apart) merged into the whole 16 MiB
// buffer: 3.2 ms of checks per spec on an H200, mostly copying.
const rangeGap = 4 << 10

// checkedRanges turns the checked element indices of a buffer of n
// elements of size bytes into sorted byte ranges [off, off+len), merging
// ranges less than gap bytes apart. Indices outside the buffer are left
// out (Verify reports them).
func checkedRanges(idx []int, size, n, gap int64) (offs, lens []int64) {
	if len(idx) == 0 {
		return nil, nil
	}
	s := idx // most checks list their elements in order, inside the buffer
	if !slices.IsSorted(idx) || idx[0] < 0 || int64(idx[len(idx)-1]) >= n {
		s = make([]int, 0, len(idx))
		for _, i := range idx {
			if i >= 0 && int64(i) < n {
				s = append(s, i)
			}
		}
		slices.Sort(s)
	}
	for _, i := range s {
		start, end := int64(i)*size, int64(i+1)*size
		if k := len(offs) - 1; k >= 0 && start <= offs[k]+lens[k]+gap {
			lens[k] = max(lens[k], end-offs[k])
			continue
		}
		offs = append(offs, start)
		lens = append(lens, end-start)
	}
	return offs, lens
}

// timeReps is timeIn, with restore (when not nil) called before each rep:
// the reps are then timed one call at a time, so that every rep of a
// kernel that updates a buffer in place starts from the same values. The
// backend's timer still covers only the launches.
func timeReps(b profiler.Backend, ls []profiler.Launch, reps int, mode profiler.CacheMode, restore func() error) (profiler.Timing, profiler.CacheMode, error) {
	if restore == nil {
		return timeIn(b, ls, reps, mode)
	}
	var all profiler.Timing
	used := mode
	var clocks []float64
	for range reps {
		if err := restore(); err != nil {
			return all, used, fmt.Errorf("restoring the in-place buffers: %w", err)
		}
		t, u, err := timeIn(b, ls, 1, mode)
		if err != nil {
			return all, u, err
		}
		used, all.Timer = u, t.Timer
		all.Samples = append(all.Samples, t.Samples...)
		if t.SMClockMHz > 0 {
			clocks = append(clocks, t.SMClockMHz)
		}
	}
	if len(clocks) > 0 {
		all.SMClockMHz = profiler.Summarize(clocks).Median
	}
	return all, used, nil
}

// measure times the launches until the stopping rule holds. restore, when
// not nil, puts the in-place buffers back to their initial values: it is
// called before every rep (warm-up and timed), outside the timed region.
// beforeTiming is called between the warm-up and the first timed rep
// (the host work that overlaps the warm-up ends there, so that it never
// disturbs a timed rep, even on the CPU backend).
func (r *Runner) measure(ctx context.Context, ls []profiler.Launch, restore func() error, opt profiler.Options, progress func(profiler.Progress), res *profiler.Result, clk *phaseClock, beforeTiming func()) error {
	mode := opt.CacheMode()
	// Warm-up: at least one run (after the verification's), then until
	// Warmup seconds have passed.
	progress(profiler.Progress{Phase: "warmup"})
	// No module is loaded ahead from now until the timed launches end; the
	// load in flight ends during the warm-up (see loadGate).
	r.gate.shutOut()
	defer r.gate.open()
	wstart := time.Now()
	r.mu.Lock()
	warmup := warmupFor(opt.Warmup, opt.Settle, wstart.Sub(r.measured))
	r.mu.Unlock()
	var one float64
	for time.Since(wstart).Seconds() < warmup || one == 0 {
		t, _, err := timeReps(r.backend, ls, 1, mode, restore)
		if err != nil {
			return err
		}
		one = math.Max(sumRep(t.Samples[0]), 1)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	r.gate.drain()
	clk.mark(&clk.p.Warmup)
	beforeTiming()
	res.Settle = opt.Settle
	var samples, clocks []float64
	var clockEnds []int // len(samples) after each clock's batch
	// taken counts every timed rep, those dropped by a restart too:
	// MaxSamples bounds the reps, not what is kept of them.
	taken := 0
	per := make([][]float64, len(ls))
	mstart := time.Now()
	for {
		// The first batch takes the minimum count; then batches of about
		// 10 ms keep the UI responsive and the rule checked often, growing
		// with the count (a quarter of it) so that checking the rule, which
		// sorts the samples, stays a small share of the time for kernels
		// of a few µs.
		reps := int(math.Max(1, math.Min(2000, math.Max(10e6/one, float64(len(samples)/4)))))
		if first := firstBatches(opt.Stop, len(samples)); first > 0 {
			reps = first
		}
		// Never plan past the time limit (slow kernels: one sample at a time).
		left := opt.Stop.MaxTime - time.Since(mstart).Seconds()
		reps = max(1, min(reps, int(left*1e9/one)))
		if opt.Stop.MaxSamples > 0 {
			reps = max(1, min(reps, opt.Stop.MaxSamples-taken))
		}
		t, used, err := timeReps(r.backend, ls, reps, mode, restore)
		if err != nil {
			return err
		}
		res.Timer, res.Cache = t.Timer, used
		taken += len(t.Samples)
		for _, rep := range t.Samples {
			samples = append(samples, sumRep(rep))
			for i, v := range rep {
				per[i] = append(per[i], v)
			}
		}
		if t.SMClockMHz > 0 {
			clocks = append(clocks, t.SMClockMHz)
			clockEnds = append(clockEnds, len(samples))
		}
		cut, done, why := opt.Stop.Step(samples, time.Since(mstart).Seconds())
		if cut > 0 {
			samples, per, clocks, clockEnds = dropFirst(cut, samples, per, clocks, clockEnds)
			res.DriftDropped += cut
		}
		if !done && opt.Stop.MaxSamples > 0 && taken >= opt.Stop.MaxSamples {
			done, why = true, profiler.StopMaxSamples
		}
		st := profiler.Summarize(samples)
		progress(profiler.Progress{Phase: "measure", Samples: st.N, Median: st.Median, CV: st.CV})
		if done {
			res.StopReason = why
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	clk.mark(&clk.p.Measure)
	r.mu.Lock()
	r.measured = time.Now()
	r.mu.Unlock()
	res.Stats = profiler.Summarize(samples)
	if len(clocks) > 0 {
		res.SMClockMHz = profiler.Summarize(clocks).Median
	}
	res.DriftRel = profiler.Estimate(samples).DriftRel
	res.Samples = samples
	if len(ls) > 1 {
		for i, l := range ls {
			st := profiler.Summarize(per[i])
			res.PerDispatch = append(res.PerDispatch, profiler.DispatchStats{Name: l.Dispatch.Name, MedianNS: st.Median, Setup: l.Dispatch.Zero != "", Stats: st})
		}
	}
	return nil
}

// firstBatches is the size of the batch after n samples while the
// minimum count is not reached (0 after): the minimum count in one batch;
// when the spec races (Stop.Outpaced), RaceMinSamples first and the rest
// of the minimum next, so that a spec clearly slower than its bound stops
// at the first count that can tell.
func firstBatches(stop profiler.StopRule, n int) int {
	least := max(stop.MinSamples, 1)
	switch {
	case n == 0 && stop.Outpaced > 0:
		return min(least, profiler.RaceMinSamples)
	case n == 0:
		return least
	case stop.Outpaced > 0 && n < least:
		return least - n
	}
	return 0
}

// dropFirst removes the first cut samples (all dispatches) and the clock
// probes of batches that ended within them.
func dropFirst(cut int, samples []float64, per [][]float64, clocks []float64, clockEnds []int) ([]float64, [][]float64, []float64, []int) {
	samples = slices.Clone(samples[cut:])
	for i := range per {
		per[i] = slices.Clone(per[i][cut:])
	}
	var keptC []float64
	var keptE []int
	for i, end := range clockEnds {
		if end > cut {
			keptC = append(keptC, clocks[i])
			keptE = append(keptE, end-cut)
		}
	}
	return samples, per, keptC, keptE
}

// warmupFor is the warm-up before a measurement, given the warm-up asked
// for and the time since the runner's last measurement ended. The warm-up
// is there for the GPU's clocks and power state, which a measurement that
// ended moments ago left up: within a sweep, specs after the first warm up
// for a tenth of the time (and always for at least one run; the check
// before it has launched the kernel once already, loading its module and
// touching its buffers). The first spec, and any spec after a pause of
// more than warmBusyWindow, gets the whole warm-up. A tenth rather than a
// quarter: on an H100, 99 attention configs warmed up 2 ms instead of 5 ms
// gave the same medians (the middle of the per-spec ratios within 0.03%,
// three interleaved pairs) and took 4% less time.
func warmupFor(asked, settle float64, sinceLast time.Duration) float64 {
	if sinceLast >= 0 && sinceLast < warmBusyWindow {
		asked /= 10
	}
	return max(asked, settle)
}

// warmBusyWindow: a GPU that measured this recently counts as warm. Between
// two specs of a sweep pass only that spec's compile, upload and check
// (tens of ms).
const warmBusyWindow = 250 * time.Millisecond

func sumRep(rep []float64) float64 {
	t := 0.0
	for _, v := range rep {
		t += v
	}
	return t
}

func throughput(res *profiler.Result, dev profiler.DeviceInfo) {
	sec := res.Stats.Median / 1e9
	if sec <= 0 {
		return
	}
	res.TFLOPS = res.FLOPs / sec / 1e12
	res.GBps = res.Bytes / sec / 1e9
	if p := dev.PeakFLOPS[res.Spec.DType]; p > 0 {
		res.PctPeakFLOP = 100 * res.FLOPs / sec / p
	}
	if dev.PeakBandwidth > 0 {
		res.PctPeakBW = 100 * res.Bytes / sec / dev.PeakBandwidth
	}
	if p := dev.MeasuredFLOPS[res.Spec.DType]; p > 0 {
		res.PctMeasFLOP = 100 * res.FLOPs / sec / p
	}
	if dev.MeasuredBandwidth > 0 {
		res.PctMeasBW = 100 * res.Bytes / sec / dev.MeasuredBandwidth
	}
}
