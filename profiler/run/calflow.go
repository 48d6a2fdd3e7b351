package run

import (
	"fmt"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// The two measurements every backend's Calibrate makes with its own
// micro-kernels (CUDA: shaders/calibrate/calibrate.cu, Metal:
// calibrate.metal), through the backend's own Run and Time so that the
// timer is the one specs use.

// CalShape is how a backend launches its calibration kernels, and its
// words for them in Details.
type CalShape struct {
	Groups, Threads int    // threadgroups (blocks) per launch, threads per group
	GroupWord       string // "blocks" (CUDA) or "groups" (Metal)
	CacheWord       string // the last-level cache: "L2" or "the SLC"
}

// CalCopy is the copy measurement: cal_fill, then cal_copy over two
// buffers of Bytes each (16-byte elements).
type CalCopy struct {
	Fill, Copy profiler.Kernel
	Bytes      int64
	Reps       int
	// CopyScalars are cal_copy's scalars after n (Metal's takes an
	// unused seed so that both kernels share one signature).
	CopyScalars []profiler.Scalar
}

// calCopyVec is the bytes one copy element moves (a uint4).
const calCopyVec = 16

// CalibrateCopy fills a buffer on the device, copies it, checks that the
// copy copied, and times the copy: the bandwidth (bytes read + written
// per second, from the fastest of Reps launches) and a line for Details.
func CalibrateCopy(b profiler.Backend, info profiler.DeviceInfo, sh CalShape, c CalCopy) (bandwidth float64, detail string, err error) {
	t0 := time.Now()
	n := c.Bytes
	src, err := b.Alloc(n)
	if err != nil {
		return 0, "", fmt.Errorf("calibration copy: %w", err)
	}
	defer b.Free(src)
	dst, err := b.Alloc(n)
	if err != nil {
		return 0, "", fmt.Errorf("calibration copy: %w", err)
	}
	defer b.Free(dst)
	elems := int(n / calCopyVec)
	grid, group := [3]int{sh.Groups, 1, 1}, [3]int{sh.Threads, 1, 1}
	fill := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_fill", Grid: grid, Group: group, Args: []string{"dst"},
		Scalars: []profiler.Scalar{profiler.I32Param("n", elems), profiler.I32Param("seed", 0x5eed)}},
		Kernel: c.Fill, Args: []profiler.Buffer{src}}
	cp := profiler.Launch{Dispatch: &profiler.Dispatch{Name: "cal_copy", Grid: grid, Group: group, Args: []string{"src", "dst"},
		Scalars: append([]profiler.Scalar{profiler.I32Param("n", elems)}, c.CopyScalars...)},
		Kernel: c.Copy, Args: []profiler.Buffer{src, dst}}
	if err := b.Run([]profiler.Launch{fill, cp}); err != nil {
		return 0, "", fmt.Errorf("calibration copy: %w", err)
	}
	if err := checkCopy(b, src, dst, n); err != nil {
		return 0, "", err
	}
	tm, err := b.Time([]profiler.Launch{cp}, c.Reps, profiler.CacheHot)
	if err != nil {
		return 0, "", fmt.Errorf("calibration copy: %w", err)
	}
	best, med := BestMedian(tm.Samples)
	bandwidth = PerSecond(CopyTraffic(n), best)
	cache := ""
	if info.CacheBytes > 0 {
		cache = fmt.Sprintf(" (%.3g× %s)", float64(n)/float64(info.CacheBytes), sh.CacheWord)
	}
	detail = fmt.Sprintf("copy: cal_copy (16-byte grid-stride, %d %s × %d threads), %s each way%s, bytes read + written; best %.3f ms of %d (median %.3f ms) → %.0f GB/s, %s; took %.0f ms",
		sh.Groups, sh.GroupWord, sh.Threads, units.Bytes(n), cache, best/1e6, c.Reps, med/1e6, bandwidth/1e9, OfDatasheet(bandwidth, info.PeakBandwidth, "GB/s", 1e9), MsSince(t0))
	return bandwidth, detail, nil
}

// checkCopy compares the copy's two buffers (the first 4 KiB when they
// are over 1 MiB: Download reads from the start): equal, and not all
// zero (cal_fill writes nonzero words; a fill that did nothing would
// leave a fresh allocation's zeros on both sides).
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
	first := func(x []byte) []byte { return x[:min(16, len(x))] }
	if string(a) != string(c) {
		return fmt.Errorf("calibration copy: cal_copy did not copy its source (first words %x vs %x)", first(a), first(c))
	}
	for _, v := range a {
		if v != 0 {
			return nil
		}
	}
	return fmt.Errorf("calibration copy: cal_fill did not fill (the first %d bytes are 0)", k)
}

// CalRate is one arithmetic micro-kernel to time: a launch of Groups ×
// threads that reads in and writes one f32 per thread to out.
type CalRate struct {
	DType   profiler.DType
	Kernel  profiler.Kernel
	Entry   string
	Groups  int
	PerIter float64 // FLOPs of one iteration of the whole launch
	What    string  // the kernel in words, for Details
	// Scalars are the launch's scalars for an iteration count.
	Scalars func(iters int) []profiler.Scalar
}

// CalTiming is how long the arithmetic launches run and how often.
type CalTiming struct {
	PilotSeconds  float64 // what the pilot launch aims at, from the datasheet rate
	TargetSeconds float64 // what each timed launch aims at, from the pilot's rate
	MaxIters      int     // iteration cap
	Reps          int     // timed launches
	Guess         float64 // the rate to aim the pilot with where the datasheet has none
}

// CalibrateRate runs j once at the iteration count that takes
// PilotSeconds at the datasheet rate (which also warms the clocks), times
// that pilot, then times Reps launches at the count that takes
// TargetSeconds at the pilot's rate, and checks the results: the FLOP/s
// of the fastest launch and a line for Details.
func CalibrateRate(b profiler.Backend, info profiler.DeviceInfo, in, out profiler.Buffer, threads int, j CalRate, t CalTiming) (rate float64, detail string, err error) {
	t0 := time.Now()
	d := &profiler.Dispatch{Name: j.Entry, Grid: [3]int{j.Groups, 1, 1}, Group: [3]int{threads, 1, 1}, Args: []string{"in", "out"}}
	l := profiler.Launch{Dispatch: d, Kernel: j.Kernel, Args: []profiler.Buffer{in, out}}
	guess := info.PeakFLOPS[j.DType]
	if guess <= 0 {
		guess = t.Guess
	}
	iters := CalIters(guess, j.PerIter, t.PilotSeconds, t.MaxIters)
	d.Scalars = j.Scalars(iters)
	if err := b.Run([]profiler.Launch{l}); err != nil {
		return 0, "", fmt.Errorf("calibration %s: %w", j.Entry, err)
	}
	pilot, err := b.Time([]profiler.Launch{l}, 1, profiler.CacheHot)
	if err != nil {
		return 0, "", fmt.Errorf("calibration %s: %w", j.Entry, err)
	}
	iters = rescaleIters(iters, pilot.Samples, t)
	d.Scalars = j.Scalars(iters)
	tm, err := b.Time([]profiler.Launch{l}, t.Reps, profiler.CacheHot)
	if err != nil {
		return 0, "", fmt.Errorf("calibration %s: %w", j.Entry, err)
	}
	if err := CheckCalResults(b, out, j.Groups*threads, j.Entry); err != nil {
		return 0, "", err
	}
	best, med := BestMedian(tm.Samples)
	work := j.PerIter * float64(iters)
	rate = PerSecond(work, best)
	detail = fmt.Sprintf("%s: %s (%s) × %d iterations = %.3g FLOP per launch; best %.2f ms of %d (median %.2f ms) → %.2f TFLOP/s, %s; took %.0f ms",
		j.DType, j.Entry, j.What, iters, work, best/1e6, t.Reps, med/1e6, rate/1e12, OfDatasheet(rate, info.PeakFLOPS[j.DType], "TFLOP/s", 1e12), MsSince(t0))
	return rate, detail, nil
}

// rescaleIters is the iteration count that makes a launch take
// TargetSeconds, given that iters took the pilot's time; ten times iters
// when the pilot was too short to time.
func rescaleIters(iters int, pilot [][]float64, t CalTiming) int {
	x := float64(iters) * 10
	if p, _ := BestMedian(pilot); p > 0 {
		x = float64(iters) * t.TargetSeconds * 1e9 / p
	}
	return CalIters(x, 1, 1, t.MaxIters)
}

// MsSince is the milliseconds since t, for Details.
func MsSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1e3 }
