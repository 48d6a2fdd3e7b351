package profiler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The ranks against tables of the binomial distribution (e.g. Conover,
// Practical Nonparametric Statistics, the sign-test interval of the
// median): n = 6 is the smallest n with a 95% interval (its extremes,
// coverage 1 − 2/64); n = 10 → x(2), x(9), 1 − 2·11/1024; n = 20 → x(6),
// x(15), 1 − 2·0.020695; n = 100 → x(40), x(61), 0.9648.
func TestMedianCIRanks(t *testing.T) {
	cases := []struct {
		n, lo, hi int
		cov       float64
	}{
		{6, 1, 6, 1 - 2.0/64},
		{10, 2, 9, 1 - 2*11.0/1024},
		{20, 6, 15, 1 - 2*0.020694732666015625},
		{100, 40, 61, 0.9648},
	}
	for _, c := range cases {
		lo, hi, cov, ok := MedianCIRanks(c.n, 0.95)
		if !ok || lo != c.lo || hi != c.hi || math.Abs(cov-c.cov) > 1e-4 {
			t.Errorf("n=%d: ranks %d..%d coverage %.6f ok %v; want %d..%d %.6f", c.n, lo, hi, cov, ok, c.lo, c.hi, c.cov)
		}
		if cov < 0.95 {
			t.Errorf("n=%d: coverage %.4f below the level", c.n, cov)
		}
	}
	if _, _, _, ok := MedianCIRanks(5, 0.95); ok {
		t.Error("n=5 has no 95% interval (its extremes cover 1 − 2/32 = 0.9375)")
	}
	// Large n: close to the normal approximation n/2 ± 1.96·√n/2.
	lo, hi, cov, ok := MedianCIRanks(40000, 0.95)
	if !ok || math.Abs(float64(lo)-(20000-196)) > 2 || hi != 40001-lo || cov < 0.95 || cov > 0.951 {
		t.Errorf("n=40000: %d..%d coverage %.5f", lo, hi, cov)
	}
}

// The interval covers the true median about 95% of the time.
func TestMedianCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hits, trials := 0, 2000
	for range trials {
		s := make([]float64, 50)
		for i := range s {
			s[i] = rng.ExpFloat64() // skewed; median ln 2
		}
		lo, hi, ok := MedianCI(s)
		if ok && lo <= math.Ln2 && math.Ln2 <= hi {
			hits++
		}
	}
	if f := float64(hits) / float64(trials); f < 0.93 || f > 0.99 {
		t.Errorf("coverage %.3f, want about 0.95–0.97", f)
	}
}

func noisy(rng *rand.Rand, n int, mean, cv float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = mean * (1 + cv*rng.NormFloat64())
	}
	return s
}

// Samples that scatter by 3% (CV far above the 0.5% target) but are
// stable: the median's interval shrinks as 1/√n and the rule stops, well
// before the time limit, after a few hundred samples.
func TestStopRuleStopsOnNoisyButStable(t *testing.T) {
	r := DefaultStopRule()
	rng := rand.New(rand.NewPCG(3, 4))
	stream := noisy(rng, 5000, 100e3, 0.03) // 100 µs
	stopped := 0
	for n := r.MinSamples; n <= len(stream); n += 10 {
		if done, why := r.Done(stream[:n], 0.1); done {
			if why != StopPrecision {
				t.Fatalf("stopped for %q", why)
			}
			stopped = n
			break
		}
	}
	if stopped == 0 || stopped > 800 {
		t.Fatalf("stopped after %d samples; want a few hundred (3%% CV needs ~(1.96·1.25·3/0.5)² ≈ 215)", stopped)
	}
	st := Summarize(stream[:stopped])
	if st.CV < 0.02 {
		t.Errorf("CV %.3f: the stream was meant to be noisy", st.CV)
	}
	if h := st.CIHalfRel(); h > r.Noise || st.CILo > st.Median || st.CIHi < st.Median {
		t.Errorf("CI %g..%g around %g (half %.4f)", st.CILo, st.CIHi, st.Median, h)
	}
}

// A stream whose level drifts (clocks ramping up: 15% slow at first,
// settling over 300 samples) has a narrow pooled interval early on but
// must not stop while it drifts, and where it stops the median must be
// the settled level.
func TestStopRuleWaitsOutDrift(t *testing.T) {
	r := DefaultStopRule()
	rng := rand.New(rand.NewPCG(5, 6))
	stream := noisy(rng, 6000, 100e3, 0.005)
	for i := range stream {
		stream[i] *= 1 + 0.15*max(0, 1-float64(i)/300)
	}
	stopped := 0
	for n := r.MinSamples; n <= len(stream); n += 10 {
		if done, why := r.Done(stream[:n], 0.1); done {
			if why != StopPrecision {
				t.Fatalf("stopped for %q", why)
			}
			stopped = n
			break
		}
	}
	if stopped < 300 {
		t.Fatalf("stopped after %d samples, while the level was still drifting", stopped)
	}
	if m := Summarize(stream[:stopped]).Median; math.Abs(m/100e3-1) > 0.01 {
		t.Errorf("stopped after %d samples at median %.0f ns, not the settled 100000", stopped, m)
	}
	// A stream that drifts for ever stops only at the time limit.
	for i := range stream {
		stream[i] *= 1 + 0.1*float64(i)/float64(len(stream))
	}
	if done, why := r.Done(stream, r.MaxTime/2); done {
		t.Errorf("stopped (%s) on a stream drifting 10%%", why)
	}
	if done, why := r.Done(stream, r.MaxTime); !done || why != StopTimeLimit {
		t.Errorf("time limit: %v %q", done, why)
	}
}

// CV alone does not block stopping: a bimodal stream (two clock states,
// CV ~20%) whose median is pinned stops on precision.
func TestStopRuleIgnoresCV(t *testing.T) {
	r := DefaultStopRule()
	s := make([]float64, 0, 200)
	for i := range 200 {
		v := 100e3
		if i%3 == 0 {
			v = 150e3 // a third of the samples are slow
		}
		s = append(s, v)
	}
	if st := Summarize(s); st.CV < 0.15 {
		t.Fatalf("CV %.3f", st.CV)
	}
	if done, why := r.Done(s, 0.1); !done || why != StopPrecision {
		t.Errorf("done %v %q; the median is exactly known", done, why)
	}
}

func TestStopRuleBounds(t *testing.T) {
	r := DefaultStopRule()
	quiet := make([]float64, r.MinSamples)
	for i := range quiet {
		quiet[i] = 30e6 // 30 ms each
	}
	if done, why := r.Done(quiet, 0.1); !done || why != StopPrecision {
		t.Errorf("quiet samples: %v %q", done, why)
	}
	if done, _ := r.Done(quiet[:r.MinSamples-1], 0.1); done {
		t.Error("stopped before MinSamples")
	}
	short := make([]float64, 100)
	for i := range short {
		short[i] = 1e3 // 0.1 ms measured in all, below MinTime
	}
	if done, _ := r.Done(short, 0.1); done {
		t.Error("stopped before MinTime of measured time")
	}
	alt := []float64{}
	for range 20 {
		alt = append(alt, 10e6, 50e6)
	}
	if done, _ := r.Done(alt, 0.1); done {
		t.Error("stopped while the median is anywhere between 10 and 50 ms")
	}
	if done, why := r.Done(alt, r.MaxTime); !done || why != StopTimeLimit {
		t.Errorf("time limit: %v %q", done, why)
	}
	r.MaxSamples = 40
	if done, why := r.Done(alt, 0.1); !done || why != StopMaxSamples {
		t.Errorf("max samples: %v %q", done, why)
	}
}

// A level that moves during the measurement (a boost clock switching)
// restarts it: the first third becomes warm-up, and the rest stops on the
// new level. Scatter without a shift, and too few samples, restart nothing.
func TestStopRuleRestartsOnAShift(t *testing.T) {
	r := DefaultStopRule()
	rng := NewRNG(7)
	jitter := func(level float64) float64 { return level * (1 + 0.002*(rng.Float64()-0.5)) }
	var shifted []float64
	for i := range 60 {
		level := 100e3
		if i >= 25 {
			level = 97e3 // 3% faster from sample 25 on
		}
		shifted = append(shifted, jitter(level))
	}
	cut := r.Restart(shifted)
	if cut != 20 {
		t.Fatalf("Restart = %d on a 3%% shift after 25 of 60 samples, want the first third (20)", cut)
	}
	if r.Restart(shifted[:2*r.MinSamples-1]) != 0 {
		t.Error("restarted before 2×MinSamples samples")
	}
	rest := shifted[cut:]
	for r.Restart(rest) > 0 { // a second restart drops what is left of the old level
		rest = rest[r.Restart(rest):]
	}
	if med := Summarize(rest).Median; math.Abs(med-97e3)/97e3 > 0.002 {
		t.Errorf("after restarts the median is %.0f, want the new level 97000", med)
	}
	var steady []float64
	for range 60 {
		steady = append(steady, 100e3*(1+0.03*(rng.Float64()-0.5))) // ±1.5% scatter, no shift
	}
	if c := r.Restart(steady); c != 0 {
		t.Errorf("Restart = %d on scatter without a shift", c)
	}
	// Step is Restart, then Done on what is kept.
	for _, s := range [][]float64{shifted, steady, shifted[:2*r.MinSamples-1]} {
		cut, done, why := r.Step(s, 0.1)
		wantDone, wantWhy := r.Done(s[r.Restart(s):], 0.1)
		if cut != r.Restart(s) || done != wantDone || why != wantWhy {
			t.Errorf("Step = %d %v %q, want Restart %d and Done %v %q", cut, done, why, r.Restart(s), wantDone, wantWhy)
		}
	}
}
