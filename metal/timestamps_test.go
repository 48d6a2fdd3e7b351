package metal

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// Tick values below are shaped like what Apple GPUs return: a 24 MHz
// timestamp (41.667 ns per tick) beside a nanosecond CPU clock, and the
// all-zero samples macOS 26 returns. They are constructed, not captured on a
// Mac (there is none in CI); the all-zero and ~0 shapes are the documented
// failure modes.
var cal24MHz = Calibration{
	CPU0: 5_000_000_000_000, GPU0: 120_000_000_000,
	CPU1: 5_000_020_000_000, GPU1: 120_000_480_000, // 20 ms later, 480000 ticks
}

func TestNSPerTick(t *testing.T) {
	cases := []struct {
		name    string
		cal     Calibration
		want    float64
		wantErr string
	}{
		{"24 MHz", cal24MHz, 1e9 / 24e6, ""},
		{"1 ns ticks", Calibration{CPU0: 1e12, GPU0: 7e11, CPU1: 1e12 + 5e6, GPU1: 7e11 + 5e6}, 1, ""},
		{"zero gpu reading", Calibration{CPU0: 1e12, GPU0: 0, CPU1: 1e12 + 5e6, GPU1: 0}, 0, "zero reading"},
		{"gpu clock stuck", Calibration{CPU0: 1e12, GPU0: 9e9, CPU1: 1e12 + 5e6, GPU1: 9e9}, 0, "GPU clock did not advance"},
		{"gpu clock restarted", Calibration{CPU0: 1e12, GPU0: 9e9, CPU1: 1e12 + 5e6, GPU1: 1e3}, 0, "GPU clock did not advance"},
		{"cpu clock stuck", Calibration{CPU0: 1e12, GPU0: 9e9, CPU1: 1e12, GPU1: 9e9 + 10}, 0, "CPU clock did not advance"},
		{"span too short", Calibration{CPU0: 1e12, GPU0: 9e9, CPU1: 1e12 + 500e3, GPU1: 9e9 + 12000}, 0, "shorter than"},
		{"implausible slope", Calibration{CPU0: 1e12, GPU0: 9e9, CPU1: 1e12 + 5e6, GPU1: 9e9 + 1}, 0, "implausible"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cal.NSPerTick()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, %v; want error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || math.Abs(got-c.want) > 1e-9*c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestSamplePairCheck(t *testing.T) {
	cases := []struct {
		p       SamplePair
		wantErr string
	}{
		{SamplePair{120_000_100_000, 120_000_100_240}, ""},
		{SamplePair{120_000_100_000, 120_000_100_000}, ""}, // a pass shorter than one tick
		{SamplePair{0, 0}, "is 0"},
		{SamplePair{120_000_100_000, 0}, "is 0"},
		{SamplePair{^uint64(0), ^uint64(0)}, "MTLCounterErrorValue"},
		{SamplePair{120_000_100_000, ^uint64(0)}, "MTLCounterErrorValue"},
		{SamplePair{120_000_100_240, 120_000_100_000}, "precedes"},
	}
	for _, c := range cases {
		err := c.p.Check()
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Check(%v) = %v, want %q", c.p, err, c.wantErr)
		}
	}
}

func encodeSamples(xs ...uint64) []byte {
	b := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

func TestCounterDurations(t *testing.T) {
	// Two reps of two dispatches: 240 ticks (10 µs) and 2400 ticks (100 µs).
	raw := encodeSamples(
		120_000_100_000, 120_000_100_240,
		120_000_100_300, 120_000_102_700,
		120_000_103_000, 120_000_103_240,
		120_000_103_300, 120_000_105_700,
	)
	samples, err := ParseTimestamps(raw)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Pairs(samples)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := CounterDurations(pairs, cal24MHz, 120_000_090_000, 120_000_110_000)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10_000, 100_000, 10_000, 100_000}
	for i := range want {
		if math.Abs(ns[i]-want[i]) > 1e-6 {
			t.Errorf("pass %d: %v ns, want %v", i, ns[i], want[i])
		}
	}
}

func TestCounterDurationsFallbackCases(t *testing.T) {
	// The batch under test ran between these GPU clock readings.
	const batchLo, batchHi = 120_000_200_000, 120_000_210_000
	cases := []struct {
		name    string
		samples []uint64
		cal     Calibration
		wantErr string
	}{
		// macOS 26: every sample of every pass reads 0.
		{"all zero", []uint64{0, 0, 0, 0, 0, 0}, cal24MHz, "is 0"},
		{"error value", []uint64{120_000_200_000, 120_000_200_240, ^uint64(0), ^uint64(0)}, cal24MHz, "pass 1 of 2"},
		{"end before start", []uint64{120_000_200_240, 120_000_200_000}, cal24MHz, "precedes"},
		{"foreign samples", []uint64{100, 340}, cal24MHz, "outside the batch"},
		// Samples left from an earlier batch: inside the calibration span but
		// before this batch was committed.
		{"stale samples", []uint64{120_000_100_000, 120_000_100_240}, cal24MHz, "stale"},
		{"no samples", nil, cal24MHz, "no timestamp samples"},
		{"bad calibration", []uint64{120_000_200_000, 120_000_200_240}, Calibration{}, "zero reading"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pairs, err := Pairs(c.samples)
			if err != nil {
				t.Fatal(err)
			}
			_, err = CounterDurations(pairs, c.cal, batchLo, batchHi)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
			if errors.Is(err, ErrCalibration) != (c.name == "bad calibration") {
				t.Fatalf("ErrCalibration = %v for %v", errors.Is(err, ErrCalibration), err)
			}
			// The backend's decision: any such error turns counters off for good.
			ts := NewTimerState(true, true)
			if ts.Name() != TimerCounters {
				t.Fatalf("initial timer %s", ts.Name())
			}
			ts.Fail(err)
			if ts.Counters || ts.Name() != TimerCmdBuf || !strings.Contains(ts.Reason, c.wantErr) {
				t.Fatalf("after Fail: %+v", ts)
			}
		})
	}
}

func TestParseTimestampsErrors(t *testing.T) {
	if _, err := ParseTimestamps(make([]byte, 12)); err == nil {
		t.Fatal("12 bytes accepted")
	}
	if _, err := Pairs([]uint64{1, 2, 3}); err == nil {
		t.Fatal("odd sample count accepted")
	}
}

func TestNewTimerState(t *testing.T) {
	cases := []struct {
		set, stage bool
		want       string
	}{
		{true, true, TimerCounters},
		{false, true, TimerCmdBuf},
		{true, false, TimerCmdBuf},
	}
	for _, c := range cases {
		if got := NewTimerState(c.set, c.stage); got.Name() != c.want || (got.Counters == (got.Reason != "")) {
			t.Errorf("NewTimerState(%v, %v) = %+v, want %s", c.set, c.stage, got, c.want)
		}
	}
}

func TestCmdBufDuration(t *testing.T) {
	ns, err := CmdBufDuration(81234.500000, 81234.500250)
	if err != nil || math.Abs(ns-250_000) > 1 {
		t.Fatalf("got %v, %v; want 250000 ns", ns, err)
	}
	for _, c := range [][2]float64{{0, 0}, {81234.5, 0}, {81234.5, 81234.4}, {math.NaN(), 1}} {
		if _, err := CmdBufDuration(c[0], c[1]); err == nil {
			t.Errorf("CmdBufDuration(%v, %v) accepted", c[0], c[1])
		}
	}
}

func TestCheckWallAndAgree(t *testing.T) {
	cases := []struct {
		gpu, wall float64
		ok        bool
	}{
		{45e6, 50e6, true},
		{50e6, 50e6, true},
		{80e6, 50e6, false},         // longer than the wall clock: ticks mis-scaled
		{45e6 / 41.67, 50e6, false}, // ticks read as ns on a 24 MHz clock
		{0, 50e6, false},
	}
	for _, c := range cases {
		if err := CheckWall(c.gpu, c.wall, 0.3); (err == nil) != c.ok {
			t.Errorf("CheckWall(%v, %v) = %v, want ok=%v", c.gpu, c.wall, err, c.ok)
		}
	}
	agree := []struct {
		counter, cmdbuf float64
		ok              bool
	}{
		{3.0e6, 3.05e6, true},
		{3.3e6, 3.0e6, true},
		{4.0e6, 3.0e6, false},
		{1.0e6, 3.0e6, false},
	}
	for _, c := range agree {
		if err := AgreeTimers(c.counter, c.cmdbuf); (err == nil) != c.ok {
			t.Errorf("AgreeTimers(%v, %v) = %v, want ok=%v", c.counter, c.cmdbuf, err, c.ok)
		}
	}
	if m := medianOf([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}
