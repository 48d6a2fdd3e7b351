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
// compiled and timed through the same Compile/Time path as the specs (the
// same timer, back to back: every buffer here is far larger than the L2 or
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
	cal.Details = append(cal.Details, fmt.Sprintf("compiled calibrate.cu for %s (%d kernels) in %.0f ms", b.arch, len(entries), run.MsSince(start)))

	shape := run.CalShape{Groups: sms * fmaBlocksPerSM, Threads: calThreads, GroupWord: "blocks", CacheWord: "L2"}
	bw, detail, err := run.CalibrateCopy(b, info, shape, run.CalCopy{Fill: kern["cal_fill"], Copy: kern["cal_copy"],
		Bytes: run.CalCopyBytes(info.MemoryBytes, info.CacheBytes), Reps: copyReps})
	if err != nil {
		return cal, err
	}
	cal.CopyBandwidth = bw
	cal.Details = append(cal.Details, detail)
	in, out, err := b.mathBuffers(sms)
	if err != nil {
		return cal, err
	}
	defer b.Free(in)
	defer b.Free(out)
	iters := func(n int) []profiler.Scalar { return []profiler.Scalar{profiler.I32Param("iters", n)} }
	var jobs []run.CalRate
	if tensor {
		mb := sms * mmaBlocksPerSM
		for _, dt := range []profiler.DType{profiler.BF16, profiler.F16} {
			e := "cal_mma_" + string(dt)
			jobs = append(jobs, run.CalRate{DType: dt, Kernel: kern[e], Entry: e, Groups: mb, PerIter: run.MatrixFLOPs(mb, calThreads, 1, mmaAcc, mmaOpFLOPs),
				What: fmt.Sprintf("mma.sync m16n8k16 %s, f32 accumulate, %d blocks × %d warps × %d accumulators", dt, mb, calThreads/32, mmaAcc), Scalars: iters})
		}
	}
	fb := sms * fmaBlocksPerSM
	jobs = append(jobs, run.CalRate{DType: profiler.F32, Kernel: kern["cal_fma_f32"], Entry: "cal_fma_f32", Groups: fb, PerIter: run.FMAFLOPs(fb, calThreads, 1, fmaChains),
		What: fmt.Sprintf("FMA, %d blocks × %d threads × %d chains", fb, calThreads, fmaChains), Scalars: iters})
	timing := run.CalTiming{PilotSeconds: calPilot, TargetSeconds: calTarget, MaxIters: maxIters, Reps: mathReps, Guess: 50e12}
	for _, j := range jobs {
		rate, detail, err := run.CalibrateRate(b, info, in, out, calThreads, j, timing)
		if err != nil {
			return cal, err
		}
		cal.FLOPS[j.DType] = rate
		cal.Details = append(cal.Details, detail)
	}
	if !tensor {
		cal.Details = append(cal.Details, fmt.Sprintf("no bf16/f16 figure: %s has no mma.sync m16n8k16 (needs sm_80 or newer)", b.arch))
	}
	cal.Details = append(cal.Details, fmt.Sprintf("calibration took %.2f s", time.Since(start).Seconds()))
	return cal, nil
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
