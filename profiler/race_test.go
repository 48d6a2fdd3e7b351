package profiler

import "testing"

// RaceMinSamples is the first count with a 95% interval of the median:
// no spec can be outpaced before it, and one can at it.
func TestRaceMinSamplesIsTheFirstInterval(t *testing.T) {
	if _, _, _, ok := MedianCIRanks(RaceMinSamples-1, 0.95); ok {
		t.Errorf("%d samples have an interval: RaceMinSamples %d is too large", RaceMinSamples-1, RaceMinSamples)
	}
	if _, _, _, ok := MedianCIRanks(RaceMinSamples, 0.95); !ok {
		t.Errorf("%d samples have no interval: RaceMinSamples is too small", RaceMinSamples)
	}
}

// stream is n samples around level, scattered by ±spread (a fraction),
// deterministically.
func stream(level, spread float64, n int) []float64 {
	s := make([]float64, n)
	rng := NewRNG(3)
	for i := range s {
		s[i] = level * (1 + spread*(2*rng.Float64()-1))
	}
	return s
}

// A spec clearly slower than its bound (Outpaced) stops at the first
// count that has an interval, before MinSamples and MinTime; one whose
// interval reaches the bound goes on; without a bound nothing is
// outpaced. Step says the same as Done.
func TestStopRuleOutpaced(t *testing.T) {
	best := 1000.0 // ns
	bound := 1.1 * best
	for _, c := range []struct {
		name     string
		samples  []float64
		bound    float64
		stopAt   int // the count at which it stops, outpaced (0: never up to len)
		whyNever string
	}{
		{"twice the best", stream(2*best, 0.01, 40), bound, RaceMinSamples, ""},
		{"just above the bound, quiet", stream(1.15*best, 0.001, 40), bound, RaceMinSamples, ""},
		{"within the factor", stream(1.05*best, 0.01, 200), bound, 0, "its median is within 1.1x of the best"},
		{"at the bound", stream(bound, 0.001, 200), bound, 0, "half its interval lies below the bound"},
		{"slower but scattered across the bound", alternate(0.9*best, 3*best, 40), bound, 0, "x(1) of 6 to 40 alternating samples is below the bound"},
		{"twice the best, bound off", stream(2*best, 0.01, 19), 0, 0, "the bound is 0 (off)"},
	} {
		r := DefaultStopRule()
		r.Outpaced = c.bound
		got := 0
		for n := 1; n <= len(c.samples); n++ {
			done, why := r.Done(c.samples[:n], 0.001)
			_, stepDone, stepWhy := r.Step(c.samples[:n], 0.001)
			if done != stepDone || why != stepWhy {
				t.Errorf("%s, n=%d: Done %v %q, Step %v %q", c.name, n, done, why, stepDone, stepWhy)
			}
			if why == StopOutpaced {
				got = n
				break
			}
			if done {
				break
			}
		}
		if got != c.stopAt {
			t.Errorf("%s: outpaced at n=%d, want %d (0: never; %s)", c.name, got, c.stopAt, c.whyNever)
		}
	}
}

// alternate is n samples alternating between a and b.
func alternate(a, b float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = a
		if i%2 == 1 {
			s[i] = b
		}
	}
	return s
}

// The time limit and the sample limit keep their reasons: a spec that
// reached either is not called outpaced.
func TestStopRuleOutpacedAfterTheLimits(t *testing.T) {
	r := DefaultStopRule()
	r.Outpaced = 1100
	slow := stream(2000, 0.01, 30)
	if _, why := r.Done(slow, r.MaxTime); why != StopTimeLimit {
		t.Errorf("at the time limit: %q, want %q", why, StopTimeLimit)
	}
	r.MaxSamples = 10
	if _, why := r.Done(slow[:10], 0.001); why != StopMaxSamples {
		t.Errorf("at MaxSamples: %q, want %q", why, StopMaxSamples)
	}
}
