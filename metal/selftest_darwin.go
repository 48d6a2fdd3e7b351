//go:build darwin

package metal

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// SelfTestTimestamps compiles a kernel that spins for a few milliseconds,
// times it with the timestamp counters and with command-buffer times, and
// checks both against the wall clock and each other. It reports raw tick
// values so a failing Mac can be diagnosed from the paste alone.
func SelfTestTimestamps(pb profiler.Backend) (SelfTestReport, error) {
	b, ok := pb.(*Backend)
	if !ok {
		return SelfTestReport{}, fmt.Errorf("SelfTestTimestamps needs the Metal backend, got %T", pb)
	}
	rep := SelfTestReport{Device: b.raw.Name, Arch: b.raw.Arch}
	rep.addf(true, "timestamp counter set: %v; sampling at stage boundary: %v, at dispatch boundary: %v", b.raw.HasTimestampSet, b.raw.StageBoundary, b.raw.DispatchBoundary)
	rep.addf(true, "threadgroup memory %d B per group, %d threads per group, working set %s", b.raw.MaxTGMPerGroup, b.raw.MaxThreadsWidth, units.Bytes(b.raw.WorkingSetBytes))

	const threads = 1 << 20
	k, err := b.compileSource(selfTestSource, "mltop_spin", CompileOptions{Macros: [][2]string{{"ITERS", "4096"}}, MathMode: DefaultMathMode})
	if err != nil {
		return rep, fmt.Errorf("compiling the self-test kernel: %w", err)
	}
	rep.addf(true, "self-test kernel compiled: max %d threads per group, execution width %d, static TGM %d B", k.p.attrs.maxThreads, k.p.attrs.execWidth, k.p.attrs.staticTGM)
	out, err := b.Alloc(4 * threads)
	if err != nil {
		return rep, err
	}
	defer b.Free(out)
	d := &profiler.Dispatch{Name: "spin", Grid: [3]int{threads / 256, 1, 1}, Group: [3]int{256, 1, 1}, Args: []string{"out"},
		Scalars: []profiler.Scalar{profiler.I32Param("n", threads)}}
	ps, err := prepare([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{out}}})
	if err != nil {
		return rep, err
	}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{out}}}); err != nil {
		return rep, fmt.Errorf("running the self-test kernel: %w", err)
	}
	const reps = 10

	var counterMed float64
	countersOK := false
	if !b.samples.Nil() {
		var ns [][]float64
		wall, err := b.wallTime(func() error {
			var err error
			ns, err = b.timeCounters(ps, reps, profiler.CacheHot, nil)
			return err
		})
		if b.lastRaw != nil {
			n := min(len(b.lastRaw), 6)
			rep.addf(true, "raw counter samples (first %d of %d): %v; calibration cpu %d→%d ns, gpu %d→%d ticks", n, len(b.lastRaw), b.lastRaw[:n], b.lastCal.CPU0, b.lastCal.CPU1, b.lastCal.GPU0, b.lastCal.GPU1)
			if s, err := b.lastCal.NSPerTick(); err == nil {
				rep.addf(true, "calibrated %.6f ns per GPU tick", s)
			}
		}
		if err != nil {
			rep.addf(true, "counters: unusable, timing falls back to command-buffer GPU times: %v", err)
		} else {
			flat := flatten(ns)
			counterMed = medianOf(flat)
			if err := CheckWall(sum(flat), float64(wall.Nanoseconds()), 0.3); err != nil {
				rep.addf(false, "counters: %d reps, median %.3f ms, but against the wall clock: %v", reps, counterMed/1e6, err)
			} else {
				countersOK = true
				rep.addf(true, "counters: %d reps, median %.3f ms, %.1f%% of the %.3f ms wall clock", reps, counterMed/1e6, 100*sum(flat)/float64(wall.Nanoseconds()), float64(wall.Nanoseconds())/1e6)
			}
		}
	} else {
		rep.addf(true, "counters: off (%s)", b.timer.Reason)
	}

	var ns [][]float64
	wall, err := b.wallTime(func() error {
		var err error
		ns, err = b.timeCmdBuf(ps, reps, profiler.CacheHot, nil)
		return err
	})
	if err != nil {
		rep.addf(false, "command-buffer times: failed: %v", err)
		rep.Timer = b.Timer().Name()
		return rep, nil
	}
	flat := flatten(ns)
	cmdMed := medianOf(flat)
	cmdOK := CheckWall(sum(flat), float64(wall.Nanoseconds()), 0.3) == nil
	rep.addf(cmdOK, "command-buffer times: %d reps, median %.3f ms, %.1f%% of the %.3f ms wall clock", reps, cmdMed/1e6, 100*sum(flat)/float64(wall.Nanoseconds()), float64(wall.Nanoseconds())/1e6)
	if countersOK {
		if err := AgreeTimers(counterMed, cmdMed); err != nil {
			countersOK = false
			rep.addf(false, "timers disagree: %v", err)
		} else {
			rep.addf(true, "timers agree: counters %.3f ms vs command buffer %.3f ms", counterMed/1e6, cmdMed/1e6)
		}
	}
	if !countersOK && b.timer.Counters {
		_ = b.do(func() error {
			b.timer.Fail(fmt.Errorf("self-test found the counters unusable"))
			b.info.Timer = TimerCmdBuf
			return nil
		})
	}
	rep.Timer = b.Timer().Name()
	flushOK := b.selfTestFlush(&rep)
	rep.OK = cmdOK && flushOK && (countersOK || !b.raw.StageBoundary || !b.raw.HasTimestampSet || rep.Timer == TimerCmdBuf)
	return rep, nil
}

// selfTestFlush compiles and times the cold-cache flush kernel on its own
// (command-buffer times), so the report shows it builds on this Mac and
// how fast it streams twice the SLC.
func (b *Backend) selfTestFlush(rep *SelfTestReport) bool {
	cold, err := b.coldFlush()
	if err != nil {
		rep.addf(false, "cold-cache flush kernel: %v", err)
		return false
	}
	var ns [][]float64
	err = b.do(func() error {
		var err error
		ns, err = b.timeCmdBuf([]prepared{*cold}, 5, profiler.CacheHot, nil)
		return err
	})
	if err != nil {
		rep.addf(false, "cold-cache flush kernel: running it failed: %v", err)
		return false
	}
	med := medianOf(flatten(ns))
	rep.addf(true, "cold-cache flush: reads %s (twice the SLC) in %.3f ms, %.0f GB/s", units.Bytes(b.flushBytes), med/1e6, float64(b.flushBytes)/med)
	return true
}

func flatten(xs [][]float64) []float64 {
	var out []float64
	for _, r := range xs {
		out = append(out, r...)
	}
	return out
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// SelfTest is the run.SelfTester hook `mltop selftest` calls: the
// timestamp self-test as one check per finding, then the calibration
// micro-kernels' figures (not cached: `mltop calibrate` does that).
func (b *Backend) SelfTest() []run.SelfCheck {
	var out []run.SelfCheck
	rep, err := SelfTestTimestamps(b)
	if err != nil {
		out = append(out, run.SelfCheck{Name: "metal timestamps", OK: false, Detail: err.Error()})
	} else {
		out = append(out, run.SelfCheck{Name: "metal timestamps", OK: rep.OK, Detail: fmt.Sprintf("%s (%s), timer %s", rep.Device, rep.Arch, rep.Timer)})
		for _, l := range rep.Lines {
			out = append(out, run.SelfCheck{Name: "metal", OK: l.OK, Detail: l.Text})
		}
	}
	// The calibration micro-kernels, on the timer the self-test settled on.
	c, err := b.Calibrate()
	return append(out, calibrationChecks(c, err, b.Info())...)
}
