//go:build linux

package cuda

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/mltop/mltop/profiler"
)

func (b *backend) eventsFor(n int) error {
	for len(b.events) < n {
		var e uintptr
		if err := b.check(b.drv.call("cuEventCreate", b.drv.cuEventCreate, uintptr(unsafe.Pointer(&e)), cuEventDefault)); err != nil {
			return err
		}
		b.events = append(b.events, e)
	}
	return nil
}

// flushFactor is the cold flush's size in L2s. Reading 1× the L2 of new
// data evicts everything under LRU; the L2's replacement is not exactly
// LRU (and Hopper's L2 is two partitions that may both hold a line), so
// the flush reads 3×: ~150 MB, ~50 µs on an H100, outside the timed events.
// The dirty mode writes the first 2× (the old flush, unchanged).
const flushFactor = 3

// flushKernel compiles mltop_l2_flush once (NVRTC on this goroutine, the
// module load on the CUDA thread): never called from inside b.do.
func (b *backend) flushKernel() (*kernel, error) {
	return b.helperKernel("mltop_l2_flush", &b.flushK, "the cold-cache flush kernel")
}

// helperKernel compiles one of mltop's own kernels of shaders/l2flush once.
func (b *backend) helperKernel(entry string, dst **kernel, what string) (*kernel, error) {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	if *dst != nil {
		return *dst, nil
	}
	k, err := b.Compile(profiler.Program{Source: "l2flush", Entry: entry})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	*dst = k.(*kernel)
	return *dst, nil
}

// clockProbeNS is how long each SM clock probe counts cycles: 20 µs, a
// few parts per million of error once both ends sit on a timer tick.
const clockProbeNS = 20000

// clockProbe returns the probe kernel, or ok false when there is none (no
// probe buffer, or it did not compile): the timing then carries no clock.
// Not from inside b.do.
func (b *backend) clockProbe() (k *kernel, ok bool) {
	if b.noClock || b.clockBuf == nil {
		return nil, false
	}
	k, err := b.helperKernel("mltop_sm_clock", &b.clockK, "the SM clock probe")
	if err != nil {
		b.noClock = true
		fmt.Fprintf(os.Stderr, "mltop cuda: no SM clock in the results: %v\n", err)
		return nil, false
	}
	return k, true
}

func (b *backend) clockLaunch(k *kernel, slot int) profiler.Launch {
	d := &profiler.Dispatch{Name: "sm clock", Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1},
		Args: []string{"clock"}, Scalars: []profiler.Scalar{profiler.I32Param("slot", slot), profiler.I32Param("ns", clockProbeNS)}}
	return profiler.Launch{Dispatch: d, Kernel: k, Args: []profiler.Buffer{b.clockBuf}}
}

// smClockMHz reads the probes' counts (CUDA thread, after the stream is
// idle): the mean of the slots' cycles per nanosecond, in MHz.
func (b *backend) smClockMHz(slots int) (float64, error) {
	raw := make([]uint64, 2*slots)
	if err := b.check(b.drv.call("cuMemcpyDtoH_v2", b.drv.cuMemcpyDtoH, uintptr(unsafe.Pointer(&raw[0])), uintptr(b.clockBuf.ptr), uintptr(16*slots))); err != nil {
		return 0, err
	}
	return clockFromProbes(raw), nil
}

// flushLaunch is the cold flush: read the whole zero-filled flush buffer,
// 4 blocks of 256 threads per SM, never = 1 (the XOR of zeros is 0).
func (b *backend) flushLaunch(k *kernel) profiler.Launch {
	words := b.flush.size / 16
	d := &profiler.Dispatch{Name: "l2 flush", Grid: [3]int{max(b.info.Units, 1) * 4, 1, 1}, Group: [3]int{256, 1, 1},
		Args: []string{"flush"}, Scalars: []profiler.Scalar{profiler.I32Param("n", int(words)), profiler.I32Param("never", 1)}}
	return profiler.Launch{Dispatch: d, Kernel: k, Args: []profiler.Buffer{b.flush}}
}

// Time runs the launches reps times. Hot: one event before the first
// launch and one after each, back to back. Cold and dirty: the cache is
// prepared before EACH dispatch, as Nsight Compute's --cache-control all
// does, so that every dispatch's time is comparable with ncu's
// gpu__time_duration of that kernel; each dispatch then has its own event
// pair, and the flush runs between pairs on the same stream (the start
// event is recorded only once the flush has finished, and is not timed).
// Cold reads flushFactor × L2 with mltop_l2_flush, leaving the L2 clean;
// dirty memsets 2 × L2 (a new byte value each time), leaving it dirty.
// A zero fill's dirty lines are thus written back by the next flush, not
// by the kernel after it. Samples are nanoseconds per dispatch.
func (b *backend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if reps < 1 {
		reps = 1
	}
	var flush profiler.Launch
	if mode == profiler.CacheCold && b.flush != nil {
		k, err := b.flushKernel()
		if err != nil {
			return profiler.Timing{}, err
		}
		flush = b.flushLaunch(k)
	}
	// The SM clock is probed just before the loop and just after it, outside
	// every timed window.
	var probes [2]profiler.Launch
	probeK, probing := b.clockProbe()
	if probing {
		probes = [2]profiler.Launch{b.clockLaunch(probeK, 0), b.clockLaunch(probeK, 1)}
	}
	n := len(ls)
	steps, spans, nev := timingLoop(n, reps, mode, b.flush != nil, probing)
	out := profiler.Timing{Timer: TimerEvents}
	err := b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		d := b.drv
		if err := b.eventsFor(nev); err != nil {
			return err
		}
		// The kernel clock's records are matched to this loop's work in
		// stream order (see matchActivities): nothing else may be pending.
		var want []expected
		if b.kclock != nil {
			if err := b.check(d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream)); err != nil {
				return err
			}
			if err := b.kclock.discard(); err != nil {
				b.kernelClockFailed(err)
			}
			want = make([]expected, 0, len(steps))
		}
		expect := func(e expected) {
			if b.kclock != nil {
				want = append(want, e)
			}
		}
		flushes := 0
		for _, st := range steps {
			var err error
			switch st.Kind {
			case stepProbe:
				expect(expectedOf(probes[st.Index].Dispatch, -1))
				err = b.launch(&probes[st.Index])
			case stepFlush:
				expect(expectedOf(flush.Dispatch, -1))
				err = b.launch(&flush)
			case stepDirty:
				// A new byte value each time, so that every line is written.
				flushes++
				expect(expected{Memset: true, Slot: -1})
				size := min(b.flush.size, 2*b.info.CacheBytes)
				err = b.check(d.call("cuMemsetD8Async", d.cuMemsetD8Async, uintptr(b.flush.ptr), uintptr(flushes&0xff|1), uintptr(size), b.stream))
			case stepRecord:
				err = b.check(d.call("cuEventRecord", d.cuEventRecord, b.events[st.Index], b.stream))
			case stepLaunch:
				expect(expectedOf(ls[st.Index].Dispatch, st.Slot))
				err = b.launch(&ls[st.Index])
			}
			if err != nil {
				return err
			}
		}
		if err := b.check(d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream)); err != nil {
			return err
		}
		if probing {
			mhz, err := b.smClockMHz(len(probes))
			if err != nil {
				return err
			}
			out.SMClockMHz = mhz
		}
		out.Samples = make([][]float64, reps)
		for r := range reps {
			row := make([]float64, n)
			for i := range n {
				span := spans[r*n+i]
				var ms float32
				if err := b.check(d.call("cuEventElapsedTime", d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), b.events[span[0]], b.events[span[1]])); err != nil {
					return err
				}
				row[i] = float64(ms) * 1e6
			}
			out.Samples[r] = row
		}
		if b.kclock != nil {
			if durs, err := b.kernelTimes(want, reps*n); err != nil {
				b.kernelClockFailed(err)
			} else {
				for r := range reps {
					copy(out.Samples[r], durs[r*n:(r+1)*n])
				}
				out.Timer = TimerKernel
			}
		}
		return nil
	})
	return out, err
}

// RunTimed runs the launches once, in order, and waits, as Run does, with
// an event recorded on the stream before the first launch and one after
// the last (profiler.RunTimer): the seconds between them are the device's
// time in the run, the runner's Phases.VerifyGPU. The wait is Run's own;
// the events add two records to the stream and one query after the wait.
// As with the timed launches' events, the span includes the first
// launch's few microseconds of latency on an idle GPU.
func (b *backend) RunTimed(ls []profiler.Launch) (float64, error) {
	var ms float32
	d := b.drv
	err := b.onStreamThen(func() error {
		if err := b.eventsFor(2); err != nil {
			return err
		}
		if err := b.check(d.call("cuEventRecord", d.cuEventRecord, b.events[0], b.stream)); err != nil {
			return err
		}
		if err := b.launchAll(ls); err != nil {
			return err
		}
		return b.check(d.call("cuEventRecord", d.cuEventRecord, b.events[1], b.stream))
	}, func() error {
		return b.check(d.call("cuEventElapsedTime", d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), b.events[0], b.events[1]))
	})
	if err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// kernelTimes collects the kernel clock's records of a timing loop and
// gives each timed slot its kernel's own duration. CUDA thread only, after
// the loop's work has finished.
func (b *backend) kernelTimes(want []expected, slots int) ([]float64, error) {
	recs, err := b.kclock.take(uint32(b.dev), len(want), 2*time.Second)
	if err != nil {
		return nil, err
	}
	return matchActivities(want, recs, slots)
}

// kernelClockFailed reports, once per process, that a timing loop fell
// back to its event timings; the results of that loop say timer cuda-event.
func (b *backend) kernelClockFailed(err error) {
	b.kclockWarn.Do(func() {
		fmt.Fprintf(os.Stderr, "mltop cuda: the kernel clock (CUPTI) did not account for a timing loop's launches, so its samples are CUDA event times (timer %s): %v\n", TimerEvents, err)
	})
}
