package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The calibration micro-kernels' shapes (shaders/metal/calibrate.metal).
// The kernels take CAL_THREADS, FMA_CHAINS and SIMD_ACC as macros from
// here, so the work counted below is the work the kernels do.
const (
	calThreads       = 256 // threads per group, every calibration kernel: 8 simdgroups
	fmaChains        = 16  // independent FMA chains per thread
	simdAcc          = 8   // independent 8x8 accumulators per simdgroup
	calGroupsPerCore = 8   // 2048 threads per core: more than any Apple GPU keeps resident
	calDefaultCores  = 8   // when IOKit gave no core count (the smallest M1)
	calVecBytes      = 16  // the copy moves one uint4 per element
	simdOpFLOPs      = 2 * 8 * 8 * 8
	calInputs        = 1024 // floats in the arithmetic kernels' input

	// x <- fma(x, m, c) converges to c/(1-m) = 2: finite at any length.
	calFMAM = 0.5
	calFMAC = 1.0
)

// calEntries are the kernels of calibrate.metal, in the order they run.
var calEntries = []string{"cal_fill", "cal_copy", "cal_fma_f32", "cal_fma_f16", "cal_simdgroup_f32", "cal_simdgroup_f16"}

// calMacros are the compile-time constants calibrate.metal needs.
func calMacros() []profiler.Macro {
	return []profiler.Macro{
		{Name: "CAL_THREADS", Value: strconv.Itoa(calThreads)},
		{Name: "FMA_CHAINS", Value: strconv.Itoa(fmaChains)},
		{Name: "SIMD_ACC", Value: strconv.Itoa(simdAcc)},
	}
}

// calSizes are the calibration's launch sizes.
type calSizes struct {
	groups        int     // threadgroups per launch, every kernel
	copyBytes     int64   // each of the copy's two buffers
	pilotSeconds  float64 // what the pilot launch aims at, from the datasheet rate
	targetSeconds float64 // what each timed arithmetic launch aims at
	maxIters      int     // iteration cap (the emulation test keeps it small)
	copyReps      int
	mathReps      int
}

// calSizesFor picks the sizes for a device: calGroupsPerCore groups per
// GPU core (IORegistry's count, else calDefaultCores), and copy buffers of
// run.CalCopyBytes of the working set (Metal's
// recommendedMaxWorkingSetSize) and the SLC.
func calSizesFor(info profiler.DeviceInfo) calSizes {
	cores := info.Units
	if cores <= 0 {
		cores = calDefaultCores
	}
	return calSizes{groups: cores * calGroupsPerCore, copyBytes: run.CalCopyBytes(info.MemoryBytes, info.CacheBytes),
		pilotSeconds: 2e-3, targetSeconds: 20e-3, maxIters: 1 << 30, copyReps: 10, mathReps: 5}
}

// calInputBytes are the arithmetic kernels' operands: calInputs floats
// (1 + i%8)/8, all exact in half, none zero.
func calInputBytes() []byte {
	b := make([]byte, 4*calInputs)
	for i := range calInputs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(1+i%8)/8))
	}
	return b
}

// calJob is one arithmetic measurement.
type calJob struct {
	dt      profiler.DType
	entry   string
	perIter float64 // FLOPs per iteration of the whole launch
	what    string
}

func calJobs(groups int) []calJob {
	var jobs []calJob
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		jobs = append(jobs,
			calJob{dt, "cal_simdgroup_" + string(dt), run.MatrixFLOPs(groups, calThreads, 1, simdAcc, simdOpFLOPs),
				fmt.Sprintf("simdgroup_%s8x8 multiply-accumulate, %d groups × %d simdgroups × %d accumulators", map[profiler.DType]string{profiler.F32: "float", profiler.F16: "half"}[dt], groups, calThreads/32, simdAcc)},
			calJob{dt, "cal_fma_" + string(dt), run.FMAFLOPs(groups, calThreads, 1, fmaChains),
				fmt.Sprintf("fma, %d groups × %d threads × %d chains", groups, calThreads, fmaChains)})
	}
	return jobs
}

// runCalibration measures copy bandwidth and, for f32 and f16, the FMA and
// simdgroup-matrix rates with calibrate.metal's kernels, through the
// backend's own Compile/Run/Time (so the timer is the one specs use).
// Each dtype's figure is the faster of its two paths; Details give both.
// The backend is any profiler.Backend that runs Metal sources: the Metal
// backend on a Mac, the MSL emulation in tests.
func runCalibration(b profiler.Backend, info profiler.DeviceInfo, sz calSizes) (run.Calibration, error) {
	start := time.Now()
	cal := run.Calibration{Backend: "metal", Device: info.Name, Time: start.UTC(), FLOPS: map[profiler.DType]float64{}}
	kern := map[string]profiler.Kernel{}
	for _, e := range calEntries {
		k, err := b.Compile(profiler.Program{Source: "calibrate", Entry: e, Macros: calMacros()})
		if err != nil {
			return cal, fmt.Errorf("calibration: compiling %s: %w", e, err)
		}
		kern[e] = k
	}
	cal.Details = append(cal.Details, fmt.Sprintf("compiled calibrate.metal (%d kernels) in %.0f ms", len(calEntries), msSince(start)))
	if err := calibrateCopy(b, info, sz, kern, &cal); err != nil {
		return cal, err
	}
	in, err := b.Alloc(4 * calInputs)
	if err != nil {
		return cal, err
	}
	defer b.Free(in)
	if err := b.Upload(in, calInputBytes()); err != nil {
		return cal, err
	}
	out, err := b.Alloc(int64(4 * sz.groups * calThreads))
	if err != nil {
		return cal, err
	}
	defer b.Free(out)
	for _, j := range calJobs(sz.groups) {
		t0 := time.Now()
		d := &profiler.Dispatch{Name: j.entry, Grid: [3]int{sz.groups, 1, 1}, Group: [3]int{calThreads, 1, 1}, Args: []string{"in", "out"}}
		l := profiler.Launch{Dispatch: d, Kernel: kern[j.entry], Args: []profiler.Buffer{in, out}}
		setIters := func(n int) {
			d.Scalars = []profiler.Scalar{profiler.I32Param("iters", n), profiler.F32Param("m", calFMAM), profiler.F32Param("c", calFMAC)}
		}
		guess := info.PeakFLOPS[j.dt]
		if guess <= 0 {
			guess = 10e12
		}
		// The pilot (aimed at pilotSeconds at the datasheet rate) warms the
		// clocks and measures the rate; the timed launches aim at
		// targetSeconds.
		iters := run.CalIters(guess, j.perIter, sz.pilotSeconds, sz.maxIters)
		setIters(iters)
		if err := b.Run([]profiler.Launch{l}); err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		pilot, err := b.Time([]profiler.Launch{l}, 1, false)
		if err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		if p, _ := run.BestMedian(pilot.Samples); p > 0 {
			iters = run.CalIters(run.PerSecond(j.perIter*float64(iters), p), j.perIter, sz.targetSeconds, sz.maxIters)
		}
		setIters(iters)
		tm, err := b.Time([]profiler.Launch{l}, sz.mathReps, false)
		if err != nil {
			return cal, fmt.Errorf("calibration %s: %w", j.entry, err)
		}
		if err := run.CheckCalResults(b, out, sz.groups*calThreads, j.entry); err != nil {
			return cal, err
		}
		best, med := run.BestMedian(tm.Samples)
		work := j.perIter * float64(iters)
		rate := run.PerSecond(work, best)
		cal.FLOPS[j.dt] = max(cal.FLOPS[j.dt], rate)
		cal.Details = append(cal.Details, fmt.Sprintf("%s: %s (%s) × %d iterations = %.3g FLOP per launch; best %.2f ms of %d (median %.2f ms) → %.2f TFLOP/s, %s; took %.0f ms",
			j.dt, j.entry, j.what, iters, work, best/1e6, sz.mathReps, med/1e6, rate/1e12, run.OfDatasheet(rate, info.PeakFLOPS[j.dt], "TFLOP/s", 1e12), msSince(t0)))
	}
	cal.Details = append(cal.Details, "bf16: not calibrated (Apple GPUs before M3 have no bf16 ALU path; the f32 figure applies)",
		fmt.Sprintf("calibration took %.2f s", time.Since(start).Seconds()))
	return cal, nil
}

// calibrateCopy fills a buffer on the GPU, copies it, checks the copy, and
// times cal_copy over the two buffers.
func calibrateCopy(b profiler.Backend, info profiler.DeviceInfo, sz calSizes, kern map[string]profiler.Kernel, cal *run.Calibration) error {
	t0 := time.Now()
	n := sz.copyBytes
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
	elems := int(n / calVecBytes)
	group := [3]int{calThreads, 1, 1}
	grid := [3]int{sz.groups, 1, 1}
	fill := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_fill", Grid: grid, Group: group, Args: []string{"dst"},
		Scalars: []profiler.Scalar{profiler.I32Param("n", elems), profiler.I32Param("seed", 0x5eed)}},
		Kernel: kern["cal_fill"], Args: []profiler.Buffer{src}}
	cp := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_copy", Grid: grid, Group: group, Args: []string{"src", "dst"},
		Scalars: []profiler.Scalar{profiler.I32Param("n", elems), profiler.I32Param("seed", 0)}},
		Kernel: kern["cal_copy"], Args: []profiler.Buffer{src, dst}}
	if err := b.Run([]profiler.Launch{fill, cp}); err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	if err := checkCopy(b, src, dst, n); err != nil {
		return err
	}
	tm, err := b.Time([]profiler.Launch{cp}, sz.copyReps, false)
	if err != nil {
		return fmt.Errorf("calibration copy: %w", err)
	}
	best, med := run.BestMedian(tm.Samples)
	cal.CopyBandwidth = run.PerSecond(run.CopyTraffic(n), best)
	slc := ""
	if info.CacheBytes > 0 {
		slc = fmt.Sprintf(" (%.3g× the SLC)", float64(n)/float64(info.CacheBytes))
	}
	cal.Details = append(cal.Details, fmt.Sprintf("copy: cal_copy (16-byte grid-stride, %d groups × %d threads), %s each way%s, bytes read + written; best %.3f ms of %d (median %.3f ms) → %.0f GB/s, %s; took %.0f ms",
		sz.groups, calThreads, profiler.FormatBytes(n), slc, best/1e6, sz.copyReps, med/1e6, cal.CopyBandwidth/1e9, run.OfDatasheet(cal.CopyBandwidth, info.PeakBandwidth, "GB/s", 1e9), msSince(t0)))
	return nil
}

// checkCopy compares the copy's buffers (the first 4 KiB when they are
// over 1 MiB: Download reads from the start): equal, and filled (cal_fill
// sets the low bit of every element's first word).
func checkCopy(b profiler.Backend, src, dst profiler.Buffer, n int64) error {
	k := n
	if k > 1<<20 {
		k = 4096
	}
	a, c := make([]byte, k), make([]byte, k)
	if err := b.Download(src, a); err != nil {
		return err
	}
	if err := b.Download(dst, c); err != nil {
		return err
	}
	if string(a) != string(c) {
		return fmt.Errorf("calibration copy: cal_copy did not copy its source (first words %x vs %x)", a[:16], c[:16])
	}
	if binary.LittleEndian.Uint32(a)&1 == 0 {
		return fmt.Errorf("calibration copy: cal_fill did not fill (first words %x)", a[:16])
	}
	return nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1e3 }

// calibrationChecks are `mltop selftest`'s lines for a calibration: one
// per ceiling, failing when the calibration failed, a figure is missing or
// not positive, or one exceeds its datasheet peak by more than 10% (a
// timer that under-reads), then the details.
func calibrationChecks(c run.Calibration, err error, info profiler.DeviceInfo) []run.SelfCheck {
	const name = "metal calibrate"
	if err != nil {
		return []run.SelfCheck{{Name: name, OK: false, Detail: err.Error()}}
	}
	check := func(what string, got, peak, scale float64, unit string) run.SelfCheck {
		d := fmt.Sprintf("%s %.2f %s", what, got/scale, unit)
		ok := got > 0 && !math.IsInf(got, 0)
		if peak > 0 {
			d += fmt.Sprintf(" (%.0f%% of the %.2f %s datasheet peak)", 100*got/peak, peak/scale, unit)
			if got > 1.1*peak {
				ok = false
				d += ": above the datasheet peak, so the timer reads short"
			}
		}
		if got <= 0 {
			d += ": not measured"
		}
		return run.SelfCheck{Name: name, OK: ok, Detail: d}
	}
	out := []run.SelfCheck{check("copy bandwidth", c.CopyBandwidth, info.PeakBandwidth, 1e9, "GB/s")}
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		out = append(out, check(string(dt), c.FLOPS[dt], info.PeakFLOPS[dt], 1e12, "TFLOP/s"))
	}
	for _, d := range c.Details {
		out = append(out, run.SelfCheck{Name: name, OK: true, Detail: d})
	}
	return out
}
