//go:build linux

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

var _ run.Calibrator = (*backend)(nil)

// Calibrate measures this GPU's achievable copy bandwidth and, per dtype,
// its arithmetic rate with the micro-kernels of shaders/calibrate/calibrate.cu,
// compiled and timed through the same Compile/Time path as the specs (CUDA
// events, back to back: every buffer here is far larger than the L2 or
// never leaves the registers). Each figure is the fastest of several
// launches; Details say which kernel, how much work and how long.
func (b *backend) Calibrate() (run.Calibration, error) {
	start := time.Now()
	info := b.info
	cal := run.Calibration{Backend: "cuda", Device: info.Name, Time: start.UTC(), FLOPS: map[profiler.DType]float64{}}
	sms := max(info.Units, 1)

	entries := []string{"cal_fill", "cal_copy", "cal_fma_f32"}
	tensor := archMajor(b.arch) >= 8 // mma.sync m16n8k16 with bf16 needs sm_80
	if tensor {
		entries = append(entries, "cal_mma_bf16", "cal_mma_f16")
	}
	kern := map[string]profiler.Kernel{}
	for _, e := range entries {
		k, err := b.Compile(profiler.Program{Source: "calibrate", Entry: e, Macros: calMacros()})
		if err != nil {
			return cal, fmt.Errorf("calibration: %w", err)
		}
		if a := k.Attrs(); a.SpillBytes > 0 {
			cal.Details = append(cal.Details, fmt.Sprintf("warning: %s spills %d B per thread to local memory", e, a.SpillBytes))
		}
		kern[e] = k
	}
	cal.Details = append(cal.Details, fmt.Sprintf("compiled calibrate.cu for %s (%d kernels) in %.0f ms", b.arch, len(entries), ms(time.Since(start))))

	if err := b.calibrateCopy(&cal, kern, sms); err != nil {
		return cal, err
	}
	in, out, err := b.mathBuffers(sms)
	if err != nil {
		return cal, err
	}
	defer b.Free(in)
	defer b.Free(out)
	type job struct {
		dt      profiler.DType
		entry   string
		blocks  int
		perIter float64
		what    string
	}
	var jobs []job
	if tensor {
		mb := sms * mmaBlocksPerSM
		for _, dt := range []profiler.DType{profiler.BF16, profiler.F16} {
			jobs = append(jobs, job{dt, "cal_mma_" + string(dt), mb, run.MatrixFLOPs(mb, calThreads, 1, mmaAcc, mmaOpFLOPs),
				fmt.Sprintf("mma.sync m16n8k16 %s, f32 accumulate, %d blocks × %d warps × %d accumulators", dt, mb, calThreads/32, mmaAcc)})
		}
	}
	fb := sms * fmaBlocksPerSM
	jobs = append(jobs, job{profiler.F32, "cal_fma_f32", fb, run.FMAFLOPs(fb, calThreads, 1, fmaChains),
		fmt.Sprintf("FMA, %d blocks × %d threads × %d chains", fb, calThreads, fmaChains)})
	for _, j := range jobs {
		t0 := time.Now()
		d := &profiler.Dispatch{Name: j.entry, Grid: [3]int{j.blocks, 1, 1}, Group: [3]int{calThreads, 1, 1}, Args: []string{"in", "out"}}
		l := profiler.Launch{Dispatch: d, Kernel: kern[j.entry], Args: []profiler.Buffer{in, out}}
		guess := info.PeakFLOPS[j.dt]
		if guess <= 0 {
			guess = 50e12
		}
		// The pilot (aimed at 2 ms at the datasheet rate) warms the clocks
		// and measures the rate; the timed launches aim at 20 ms.
		iters := run.CalIters(guess, j.perIter, calPilot, maxIters)
		d.Scalars = []profiler.Scalar{profiler.I32Param("iters", iters)}
		if err := b.Run([]profiler.Launch{l}); err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		pilot, err := b.Time([]profiler.Launch{l}, 1, false)
		if err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		p, _ := run.BestMedian(pilot.Samples)
		iters = scaleIters(iters, p, calTarget*1e9)
		d.Scalars = []profiler.Scalar{profiler.I32Param("iters", iters)}
		tm, err := b.Time([]profiler.Launch{l}, mathReps, false)
		if err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		if err := run.CheckCalResults(b, out, j.blocks*calThreads, j.entry); err != nil {
			return cal, err
		}
		best, med := run.BestMedian(tm.Samples)
		work := j.perIter * float64(iters)
		rate := run.PerSecond(work, best)
		cal.FLOPS[j.dt] = rate
		cal.Details = append(cal.Details, fmt.Sprintf("%s: %s (%s) × %d iterations = %.3g FLOP per launch; best %.2f ms of %d (median %.2f ms) → %.1f TFLOP/s, %s; took %.0f ms",
			j.dt, j.entry, j.what, iters, work, best/1e6, mathReps, med/1e6, rate/1e12, run.OfDatasheet(rate, info.PeakFLOPS[j.dt], "TFLOP/s", 1e12), ms(time.Since(t0))))
	}
	if !tensor {
		cal.Details = append(cal.Details, fmt.Sprintf("no bf16/f16 figure: %s has no mma.sync m16n8k16 (needs sm_80 or newer)", b.arch))
	}
	cal.Details = append(cal.Details, fmt.Sprintf("calibration took %.2f s", time.Since(start).Seconds()))
	return cal, nil
}

// calibrateCopy times cal_copy over two buffers of run.CalCopyBytes each.
func (b *backend) calibrateCopy(cal *run.Calibration, kern map[string]profiler.Kernel, sms int) error {
	t0 := time.Now()
	n := run.CalCopyBytes(b.info.MemoryBytes, b.info.CacheBytes)
	src, err := b.Alloc(n)
	if err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	defer b.Free(src)
	dst, err := b.Alloc(n)
	if err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	defer b.Free(dst)
	elems := int(n / copyVecBytes)
	blocks := sms * fmaBlocksPerSM
	fill := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_fill", Grid: [3]int{blocks, 1, 1}, Group: [3]int{calThreads, 1, 1},
		Args: []string{"dst"}, Scalars: []profiler.Scalar{profiler.I32Param("n", elems), profiler.I32Param("seed", 0x5eed)}},
		Kernel: kern["cal_fill"], Args: []profiler.Buffer{src}}
	cp := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_copy", Grid: [3]int{blocks, 1, 1}, Group: [3]int{calThreads, 1, 1},
		Args: []string{"src", "dst"}, Scalars: []profiler.Scalar{profiler.I32Param("n", elems)}},
		Kernel: kern["cal_copy"], Args: []profiler.Buffer{src, dst}}
	if err := b.Run([]profiler.Launch{fill, cp}); err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	// The copy must have copied: compare the first 4 KiB, which the fill
	// made nonzero.
	a, c := make([]byte, 4096), make([]byte, 4096)
	if err := b.Download(src, a); err != nil {
		return err
	}
	if err := b.Download(dst, c); err != nil {
		return err
	}
	if string(a) != string(c) || binary.LittleEndian.Uint32(a) == 0 && binary.LittleEndian.Uint32(a[4:]) == 0 {
		return fmt.Errorf("calibration copy: cal_copy did not copy its source (first words %x vs %x)", a[:16], c[:16])
	}
	tm, err := b.Time([]profiler.Launch{cp}, copyReps, false)
	if err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	best, med := run.BestMedian(tm.Samples)
	cal.CopyBandwidth = run.PerSecond(run.CopyTraffic(n), best)
	l2 := ""
	if b.info.CacheBytes > 0 {
		l2 = fmt.Sprintf(" (%.0f× L2)", float64(n)/float64(b.info.CacheBytes))
	}
	cal.Details = append(cal.Details, fmt.Sprintf("copy: cal_copy (16-byte grid-stride, %d blocks × %d threads), %s each way%s, bytes read + written; best %.3f ms of %d (median %.3f ms) → %.0f GB/s, %s; took %.0f ms",
		blocks, calThreads, profiler.FormatBytes(n), l2, best/1e6, copyReps, med/1e6, cal.CopyBandwidth/1e9, run.OfDatasheet(cal.CopyBandwidth, b.info.PeakBandwidth, "GB/s", 1e9), ms(time.Since(t0))))
	return nil
}

// mathBuffers are the arithmetic kernels' operands (1024 floats in
// [-1, 1), never zeros) and an output large enough for every thread.
func (b *backend) mathBuffers(sms int) (in, out profiler.Buffer, err error) {
	in, err = b.Alloc(1024 * 4)
	if err != nil {
		return nil, nil, err
	}
	vals := make([]byte, 1024*4)
	r := uint32(0x9e3779b9)
	for i := range 1024 {
		r ^= r << 13
		r ^= r >> 17
		r ^= r << 5
		v := float32(r>>8)/float32(1<<24)*2 - 1
		if v == 0 {
			v = 0.5
		}
		binary.LittleEndian.PutUint32(vals[4*i:], math.Float32bits(v))
	}
	if err := b.Upload(in, vals); err != nil {
		b.Free(in)
		return nil, nil, err
	}
	threads := sms * max(fmaBlocksPerSM, mmaBlocksPerSM) * calThreads
	out, err = b.Alloc(int64(threads) * 4)
	if err != nil {
		b.Free(in)
		return nil, nil, err
	}
	return in, out, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
