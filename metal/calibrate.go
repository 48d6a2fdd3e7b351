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

// calJobs are the arithmetic measurements, for f32 and f16: the
// simdgroup-matrix and the FMA kernel.
func calJobs(groups int, kern map[string]profiler.Kernel) []run.CalRate {
	scalars := func(n int) []profiler.Scalar {
		return []profiler.Scalar{profiler.I32Param("iters", n), profiler.F32Param("m", calFMAM), profiler.F32Param("c", calFMAC)}
	}
	var jobs []run.CalRate
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		simd, fma := "cal_simdgroup_"+string(dt), "cal_fma_"+string(dt)
		jobs = append(jobs,
			run.CalRate{DType: dt, Kernel: kern[simd], Entry: simd, Groups: groups, PerIter: run.MatrixFLOPs(groups, calThreads, 1, simdAcc, simdOpFLOPs),
				What:    fmt.Sprintf("simdgroup_%s8x8 multiply-accumulate, %d groups × %d simdgroups × %d accumulators", map[profiler.DType]string{profiler.F32: "float", profiler.F16: "half"}[dt], groups, calThreads/32, simdAcc),
				Scalars: scalars},
			run.CalRate{DType: dt, Kernel: kern[fma], Entry: fma, Groups: groups, PerIter: run.FMAFLOPs(groups, calThreads, 1, fmaChains),
				What: fmt.Sprintf("fma, %d groups × %d threads × %d chains", groups, calThreads, fmaChains), Scalars: scalars})
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
	cal.Details = append(cal.Details, fmt.Sprintf("compiled calibrate.metal (%d kernels) in %.0f ms", len(calEntries), run.MsSince(start)))
	shape := run.CalShape{Groups: sz.groups, Threads: calThreads, GroupWord: "groups", CacheWord: "the SLC"}
	bw, detail, err := run.CalibrateCopy(b, info, shape, run.CalCopy{Fill: kern["cal_fill"], Copy: kern["cal_copy"],
		Bytes: sz.copyBytes, Reps: sz.copyReps, CopyScalars: []profiler.Scalar{profiler.I32Param("seed", 0)}})
	if err != nil {
		return cal, err
	}
	cal.CopyBandwidth = bw
	cal.Details = append(cal.Details, detail)
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
	timing := run.CalTiming{PilotSeconds: sz.pilotSeconds, TargetSeconds: sz.targetSeconds, MaxIters: sz.maxIters, Reps: sz.mathReps, Guess: 10e12}
	for _, j := range calJobs(sz.groups, kern) {
		rate, detail, err := run.CalibrateRate(b, info, in, out, calThreads, j, timing)
		if err != nil {
			return cal, err
		}
		// each dtype's figure is the faster of its two paths
		cal.FLOPS[j.DType] = max(cal.FLOPS[j.DType], rate)
		cal.Details = append(cal.Details, detail)
	}
	cal.Details = append(cal.Details, "bf16: not calibrated (Apple GPUs before M3 have no bf16 ALU path; the f32 figure applies)",
		fmt.Sprintf("calibration took %.2f s", time.Since(start).Seconds()))
	return cal, nil
}

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
