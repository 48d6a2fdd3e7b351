package compare

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// draws is n durations around median m with relative spread cv (normal,
// seeded), the shape of a run's samples.
func draws(seed uint64, n int, m, cv float64) []float64 {
	rng := profiler.NewRNG(seed)
	out := make([]float64, n)
	for i := range out {
		out[i] = m * math.Max(0.05, 1+cv*rng.Normal())
	}
	return out
}

func TestSamplesVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, now  []float64
		want       Verdict
		noise      bool
		word       string
		lo, hi     float64 // the interval must hold [lo, hi] (ratios)
		excludeOne bool
	}{
		// The user's case: two runs of one config, CV 33 %: any Δ is noise.
		{name: "identical configs, CV 33%", base: draws(12, 50, 100e3, 0.33), now: draws(13, 50, 100e3, 0.33), want: Same, noise: true, word: "within noise"},
		{name: "the same samples", base: draws(3, 40, 50e3, 0.02), now: draws(3, 40, 50e3, 0.02), want: Same, noise: true, word: "within noise"},
		{name: "12% faster, CV 1%", base: draws(4, 200, 100e3, 0.01), now: draws(5, 200, 88e3, 0.01), want: Faster, word: "faster", lo: 0.88, hi: 0.88, excludeOne: true},
		{name: "25% slower, CV 3%", base: draws(6, 60, 100e3, 0.03), now: draws(7, 60, 125e3, 0.03), want: Slower, word: "slower", lo: 1.25, hi: 1.25, excludeOne: true},
		// Certain but below the 1 % threshold: not called faster.
		{name: "0.4% faster, CV 0.1%", base: draws(8, 2000, 100e3, 0.001), now: draws(9, 2000, 99.6e3, 0.001), want: Same, word: "below 1%", excludeOne: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Samples(tc.base, tc.now, DefaultOptions())
			if r.Verdict != tc.want || r.NoiseHit != tc.noise || r.Word() != tc.word {
				t.Errorf("verdict %s noise=%v word %q, want %s noise=%v %q (%s)", r.Verdict, r.NoiseHit, r.Word(), tc.want, tc.noise, tc.word, r)
			}
			if r.Method != MethodBootstrap || r.Resample != 2000 || !(r.Lo <= r.Ratio && r.Ratio <= r.Hi) {
				t.Errorf("method %s resamples %d interval [%g, %g] around %g", r.Method, r.Resample, r.Lo, r.Hi, r.Ratio)
			}
			if tc.lo > 0 && (math.Abs(r.Ratio-tc.lo) > 0.01) {
				t.Errorf("ratio %.4f, want about %.2f", r.Ratio, tc.lo)
			}
			if got := r.Lo > 1 || r.Hi < 1; got != tc.excludeOne {
				t.Errorf("interval [%.4f, %.4f] excludes 1: %v, want %v", r.Lo, r.Hi, got, tc.excludeOne)
			}
		})
	}
}

// TestCoverage: over many pairs of runs of one config, the 95 % interval
// holds no change about 95 % of the time, so "within noise" means what it
// says and a false "faster" is rare.
func TestCoverage(t *testing.T) {
	const pairs = 300
	held := 0
	for i := range pairs {
		r := Samples(draws(uint64(1000+2*i), 50, 100e3, 0.33), draws(uint64(1001+2*i), 50, 100e3, 0.33), DefaultOptions())
		if r.NoiseHit {
			held++
		}
	}
	if got := float64(held) / pairs; got < 0.90 || got > 0.99 {
		t.Errorf("the interval held no change in %.1f%% of %d identical pairs, want about 95%%", 100*got, pairs)
	}
}

// TestNoisyIntervalIsWide: the user saw +37.3% between identical configs.
// A big Δ from noisy samples still carries an interval that holds 0.
func TestNoisyIntervalIsWide(t *testing.T) {
	base := draws(11, 20, 100e3, 0.33)
	now := slices.Clone(base)
	for i := range now {
		now[i] *= 1.25 // a +25 % shift of 33 %-noise samples, 20 each
	}
	now[0], now[1] = now[0]*0.5, now[1]*0.5
	r := Samples(base, now, DefaultOptions())
	if r.Pct() < 10 {
		t.Fatalf("setup: Δ %+.1f%%, want a large one", r.Pct())
	}
	if r.Hi-r.Lo < 0.2 {
		t.Errorf("interval [%.3f, %.3f] of CV-33%% samples is too narrow", r.Lo, r.Hi)
	}
}

func TestSamplesAreDeterministic(t *testing.T) {
	a, b := draws(21, 300, 10e3, 0.05), draws(22, 301, 10.2e3, 0.05)
	r1, r2 := Samples(a, b, DefaultOptions()), Samples(a, b, DefaultOptions())
	if r1.Lo != r2.Lo || r1.Hi != r2.Hi {
		t.Errorf("two calls gave [%g, %g] and [%g, %g]", r1.Lo, r1.Hi, r2.Lo, r2.Hi)
	}
	o := DefaultOptions()
	o.Seed = 99
	if r3 := Samples(a, b, o); r3.Lo == r1.Lo && r3.Hi == r1.Hi {
		t.Errorf("another seed gave the very same interval: is the seed used?")
	}
	// The input order does not matter (the samples are kept in time order).
	rev := slices.Clone(b)
	slices.Reverse(rev)
	if r4 := Samples(a, rev, DefaultOptions()); r4.Lo != r1.Lo || r4.Hi != r1.Hi {
		t.Errorf("reordered samples changed the interval")
	}
}

// TestBootMedianMatchesResampling: the order-statistic shortcut gives the
// distribution that resampling n values and taking their median gives.
func TestBootMedianMatchesResampling(t *testing.T) {
	for _, n := range []int{7, 8, 31} {
		s := draws(uint64(30+n), n, 1, 0.3)
		slices.Sort(s)
		const draws = 40000
		rng := profiler.NewRNG(5)
		fast, slow := make([]float64, draws), make([]float64, draws)
		buf := make([]float64, n)
		for i := range draws {
			fast[i] = bootMedian(s, rng)
			for j := range buf {
				buf[j] = s[int(rng.Float64()*float64(n))]
			}
			slices.Sort(buf)
			slow[i] = median(buf)
		}
		slices.Sort(fast)
		slices.Sort(slow)
		for _, q := range []float64{0.025, 0.25, 0.5, 0.75, 0.975} {
			f, w := percentile(fast, q), percentile(slow, q)
			spread := s[n-1] - s[0]
			if math.Abs(f-w) > 0.03*spread {
				t.Errorf("n=%d q=%.3f: shortcut %.4f, resampling %.4f", n, q, f, w)
			}
		}
	}
}

func TestMannWhitney(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		// U = 0, μ = 4.5, σ² = 5.25, z = (4.5−0.5)/√5.25: p = 0.0809.
		{"separated", []float64{1, 2, 3}, []float64{6, 5, 4}, 0.0809},
		{"all tied", []float64{2, 2, 2}, []float64{2, 2}, 1},
		// U = 6, μ = 8, σ² = 12, z = 1.5/√12: p = 0.6650.
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 0.6650},
	} {
		if got := MannWhitney(tc.a, tc.b); math.Abs(got-tc.want) > 5e-4 {
			t.Errorf("%s: p = %.4f, want %.4f", tc.name, got, tc.want)
		}
	}
	if p := MannWhitney(nil, []float64{1}); !math.IsNaN(p) {
		t.Errorf("empty set: p = %g, want NaN", p)
	}
	if r := Samples(draws(1, 100, 1, 0.01), draws(2, 100, 1.2, 0.01), DefaultOptions()); r.P > 1e-6 {
		t.Errorf("a 20%% shift gave p = %g", r.P)
	}
}

func TestStringAndThroughput(t *testing.T) {
	noise := Result{Ratio: 1.031, Lo: 0.996, Hi: 1.068, Method: MethodBootstrap, Verdict: Same, NoiseHit: true}
	fast := Result{Ratio: 0.88, Lo: 0.869, Hi: 0.891, Method: MethodBootstrap, Verdict: Faster}
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{noise, "+3.1% [-0.4, +6.8] within noise"},
		{fast, "-12.0% [-13.1, -10.9] faster"},
		{Result{Ratio: 1.031, Method: MethodNone, Verdict: Unknown}, "+3.1% no CI"},
		{Result{}, "no comparison"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	th := fast.Throughput()
	if !regexp.MustCompile(`^\+13\.6% \[\+12\.2, \+15\.1\] faster$`).MatchString(th.String()) {
		t.Errorf("Throughput() = %q: the change and interval inverted, the verdict kept", th)
	}
}

// TestResultsFallsBack: runs without samples are compared by their median
// intervals, and without those by medians alone, saying so.
func TestResultsFallsBack(t *testing.T) {
	run := func(med, lo, hi float64, samples []float64) profiler.Result {
		return profiler.Result{Stats: profiler.Stats{N: 50, Median: med, CILo: lo, CIHi: hi}, Samples: samples}
	}
	r := Results(run(100, 99, 101, nil), run(80, 79, 81, nil), DefaultOptions())
	if r.Method != MethodMedianCIs || r.Verdict != Faster || math.Abs(r.Lo-79.0/101) > 1e-12 || math.Abs(r.Hi-81.0/99) > 1e-12 {
		t.Errorf("by median CIs: %+v", r)
	}
	r = Results(run(100, 90, 110, nil), run(95, 85, 105, nil), DefaultOptions())
	if r.Verdict != Same || !r.NoiseHit {
		t.Errorf("overlapping median CIs: %s, want within noise", r)
	}
	r = Results(run(100, 0, 0, nil), run(95, 0, 0, nil), DefaultOptions())
	if r.Verdict != Unknown || !strings.HasSuffix(r.String(), "no CI") {
		t.Errorf("medians only: %s, want Unknown", r)
	}
	r = Results(run(100, 0, 0, draws(1, 50, 100, 0.01)), run(80, 0, 0, draws(2, 50, 80, 0.01)), DefaultOptions())
	if r.Method != MethodBootstrap || r.Verdict != Faster {
		t.Errorf("with samples: %+v, want a bootstrap", r)
	}
	if r := Results(run(0, 0, 0, nil), run(80, 0, 0, nil), DefaultOptions()); r.Verdict != Unknown || r.String() != "no comparison" {
		t.Errorf("an unmeasured base: %s", r)
	}
}

// TestManySamples: a run keeps up to 50000 samples; the bootstrap does
// not resample them one by one, so this is quick, and exact enough.
func TestManySamples(t *testing.T) {
	r := Samples(draws(1, 50000, 100, 0.05), draws(2, 50000, 101.5, 0.05), DefaultOptions())
	if r.Verdict != Slower || r.Lo < 1.01 || r.Hi > 1.02 {
		t.Errorf("50000 samples each, +1.5%%: %s", r)
	}
}
