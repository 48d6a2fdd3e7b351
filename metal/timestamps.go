package metal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCalibration marks a failure of the CPU/GPU clock pairing rather than
// of the samples: the counters may be fine, so the backend times that batch
// with command buffers and tries counters again with a fresh anchor.
var ErrCalibration = errors.New("timestamp calibration")

// Timer names reported in Timing.Timer and Result.Timer.
const (
	TimerCounters = "metal-counters" // timestamp counter samples at compute-pass boundaries
	TimerCmdBuf   = "metal-cmdbuf"   // MTLCommandBuffer GPUStartTime/GPUEndTime, one dispatch per command buffer
)

// Calibration is two simultaneous (CPU, GPU) clock readings from
// -[MTLDevice sampleTimestamps:gpuTimestamp:], one taken before and one
// after the measured work. MTLTimestamp on the CPU side is nanoseconds; the
// GPU side is in device ticks whose length is not documented, so the two
// readings give the linear map ticks → ns.
type Calibration struct {
	CPU0, GPU0 uint64
	CPU1, GPU1 uint64
}

// minCalibrationNS is the shortest CPU span that gives a usable slope: with
// both clocks read within a microsecond of each other, 1 ms keeps the slope
// error under about 0.1 %.
const minCalibrationNS = 1_000_000

// NSPerTick is the slope of the map from GPU ticks to CPU nanoseconds.
func (c Calibration) NSPerTick() (float64, error) {
	switch {
	case c.CPU0 == 0 || c.GPU0 == 0 || c.CPU1 == 0 || c.GPU1 == 0:
		return 0, fmt.Errorf("timestamp calibration has a zero reading (cpu %d→%d, gpu %d→%d): the device did not report its clocks", c.CPU0, c.CPU1, c.GPU0, c.GPU1)
	case c.CPU1 <= c.CPU0:
		return 0, fmt.Errorf("CPU clock did not advance between calibrations (%d→%d)", c.CPU0, c.CPU1)
	case c.GPU1 <= c.GPU0:
		return 0, fmt.Errorf("GPU clock did not advance between calibrations (%d→%d ticks over %d ns)", c.GPU0, c.GPU1, c.CPU1-c.CPU0)
	case c.CPU1-c.CPU0 < minCalibrationNS:
		return 0, fmt.Errorf("calibration span %d ns is shorter than %d ns: too short for a stable slope", c.CPU1-c.CPU0, minCalibrationNS)
	}
	r := float64(c.CPU1-c.CPU0) / float64(c.GPU1-c.GPU0)
	// Known Apple GPUs tick at 1 ns or at 24 MHz (41.67 ns); anything far
	// outside [1/1000, 1000] ns per tick means one of the readings is junk.
	if r < 1e-3 || r > 1e3 {
		return 0, fmt.Errorf("calibration slope %.4g ns/tick is implausible (cpu %d→%d, gpu %d→%d)", r, c.CPU0, c.CPU1, c.GPU0, c.GPU1)
	}
	return r, nil
}

// SamplePair is a pass's start and end timestamp samples, in GPU ticks.
type SamplePair struct {
	Start, End uint64
}

// Check says whether a pair is usable. 0 and ~0 (MTLCounterErrorValue) mean
// the sample was not taken; end < start means the counter is broken (both
// seen on macOS 26, where every sample reads 0).
func (p SamplePair) Check() error {
	switch {
	case p.Start == 0 || p.End == 0:
		return fmt.Errorf("timestamp sample is 0 (start %d, end %d): the counter did not sample", p.Start, p.End)
	case p.Start == MTLCounterErrorValue || p.End == MTLCounterErrorValue:
		return fmt.Errorf("timestamp sample is MTLCounterErrorValue (start %#x, end %#x)", p.Start, p.End)
	case p.End < p.Start:
		return fmt.Errorf("timestamp end %d precedes start %d", p.End, p.Start)
	}
	return nil
}

// ParseTimestamps decodes the NSData that resolveCounterRange: returns for
// the timestamp counter set: an array of MTLCounterResultTimestamp, each a
// single uint64, little-endian on Apple silicon.
func ParseTimestamps(b []byte) ([]uint64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("resolved counter data is %d bytes, not a whole number of 8-byte MTLCounterResultTimestamp", len(b))
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}

// Pairs groups resolved samples as (start, end) of consecutive passes:
// sample 2k is pass k's start, 2k+1 its end.
func Pairs(samples []uint64) ([]SamplePair, error) {
	if len(samples)%2 != 0 {
		return nil, fmt.Errorf("%d timestamp samples do not pair up into (start, end)", len(samples))
	}
	out := make([]SamplePair, len(samples)/2)
	for i := range out {
		out[i] = SamplePair{samples[2*i], samples[2*i+1]}
	}
	return out, nil
}

// CounterDurations converts pass sample pairs to nanoseconds with the
// calibration's slope. lo and hi are the GPU clock read just before the
// batch was committed and just after it completed: every sample must lie
// between them, which catches samples the GPU never wrote (stale values
// from an earlier batch). Any unusable sample or a bad calibration is an
// error whose text says why, and the caller falls back to command-buffer
// timing.
func CounterDurations(pairs []SamplePair, cal Calibration, lo, hi uint64) ([]float64, error) {
	if len(pairs) == 0 {
		return nil, fmt.Errorf("no timestamp samples were resolved")
	}
	for i, p := range pairs {
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("pass %d of %d: %w", i, len(pairs), err)
		}
	}
	slope, err := cal.NSPerTick()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCalibration, err)
	}
	// 100 µs of slack for the skew between reading the clock and sampling it.
	slack := uint64(1e5 / slope)
	for i, p := range pairs {
		if p.Start+slack < lo || p.End > hi+slack {
			return nil, fmt.Errorf("pass %d samples %d..%d lie outside the batch's GPU clock window %d..%d ticks: stale or foreign samples", i, p.Start, p.End, lo, hi)
		}
	}
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		out[i] = float64(p.End-p.Start) * slope
	}
	return out, nil
}

// CmdBufDuration converts a command buffer's GPUStartTime/GPUEndTime (CFTimeInterval
// seconds on the host clock) to nanoseconds.
func CmdBufDuration(start, end float64) (float64, error) {
	if start <= 0 || end <= 0 || math.IsNaN(start) || math.IsNaN(end) {
		return 0, fmt.Errorf("command buffer reported GPU times %.9f..%.9f s: the buffer did not run on the GPU", start, end)
	}
	if end < start {
		return 0, fmt.Errorf("command buffer GPUEndTime %.9f s precedes GPUStartTime %.9f s", end, start)
	}
	return (end - start) * 1e9, nil
}

// TimerState remembers which timer the backend uses. It starts on counters
// when the device supports stage-boundary sampling and switches to
// command-buffer timing for good at the first unusable batch: a counter that
// returned zeros once is not trusted again in this process.
type TimerState struct {
	Counters bool   // sample counters at pass boundaries
	Reason   string // why counters are off (empty while they are on)
}

// NewTimerState decides the initial timer from what the device reports.
func NewTimerState(hasTimestampSet, stageBoundary bool) TimerState {
	switch {
	case !hasTimestampSet:
		return TimerState{Reason: "device has no timestamp counter set"}
	case !stageBoundary:
		return TimerState{Reason: "device cannot sample counters at stage boundaries"}
	}
	return TimerState{Counters: true}
}

// Name is the Timing.Timer string for the current state.
func (t TimerState) Name() string {
	if t.Counters {
		return TimerCounters
	}
	return TimerCmdBuf
}

// Fail switches to command-buffer timing with the reason.
func (t *TimerState) Fail(err error) {
	t.Counters = false
	t.Reason = "timestamp counters unusable, using command-buffer GPU times: " + err.Error()
}

// CheckWall compares a GPU duration against the wall clock around the same
// work (commit to completion, measured on the CPU). The GPU cannot take
// longer than the wall clock (5 % and 100 µs of slack for clock skew), and
// for work that keeps the GPU busy for milliseconds it should account for at
// least minFrac of it: a counter in the wrong units lands far outside.
func CheckWall(gpuNS, wallNS, minFrac float64) error {
	switch {
	case gpuNS <= 0:
		return fmt.Errorf("GPU time %.0f ns is not positive", gpuNS)
	case gpuNS > wallNS*1.05+1e5:
		return fmt.Errorf("GPU time %.3f ms exceeds the wall clock %.3f ms around it: ticks are mis-scaled", gpuNS/1e6, wallNS/1e6)
	case gpuNS < wallNS*minFrac:
		return fmt.Errorf("GPU time %.3f ms is under %.0f%% of the wall clock %.3f ms: ticks are mis-scaled or the samples are stale", gpuNS/1e6, 100*minFrac, wallNS/1e6)
	}
	return nil
}
