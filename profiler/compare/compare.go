// Package compare judges whether one run is faster than another: the ratio
// of their median times with a bootstrap confidence interval, a verdict
// (faster, slower, or the same within noise) and a Mann–Whitney U test.
// The TUI, watch and any other place that prints a change use it, so a
// change is never shown without its uncertainty.
package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/mltop/mltop/profiler"
)

// Verdict is what a comparison concludes about the new run's time.
type Verdict string

const (
	Faster  Verdict = "faster"  // the whole interval is below 1 and the change reaches the threshold
	Slower  Verdict = "slower"  // the whole interval is above 1 and the change reaches the threshold
	Same    Verdict = "same"    // the interval holds 1 (within noise), or the change is below the threshold
	Unknown Verdict = "unknown" // neither samples nor confidence intervals to judge by
)

// Options set how a comparison is made.
type Options struct {
	Resamples int     // bootstrap resamples (default 2000)
	Level     float64 // confidence level of the interval (default 0.95)
	// Threshold is the smallest relative change called faster or slower
	// (default 0.01: 1 %); a smaller change, however certain, is Same.
	Threshold float64
	Seed      uint64 // the bootstrap's seed: the same inputs give the same interval
}

// DefaultOptions: 2000 resamples, 95 %, 1 % threshold, seed 1.
func DefaultOptions() Options {
	return Options{Resamples: 2000, Level: 0.95, Threshold: 0.01, Seed: 1}
}

// MinSamples is the fewest samples per side for the bootstrap; with fewer
// a comparison falls back to the runs' own median intervals.
const MinSamples = 5

// Method names how the interval was found.
const (
	MethodBootstrap = "bootstrap"  // resampled medians of both sample sets
	MethodMedianCIs = "median CIs" // from each run's distribution-free median interval (conservative)
	MethodNone      = "none"       // medians only: no interval
)

// Result is a comparison of a new run against an old one (the base).
type Result struct {
	// Ratio is median(new)/median(base): below 1 the new run is faster.
	Ratio float64
	// Lo, Hi bound Ratio at Level (0 when Method is MethodNone).
	Lo, Hi  float64
	Level   float64
	Verdict Verdict
	// NoiseHit: the interval holds 1 (the difference is within noise),
	// as opposed to a certain change smaller than the threshold.
	NoiseHit bool
	// P is the two-sided Mann–Whitney U test's p-value that both sample
	// sets come from one distribution; NaN without samples.
	P         float64
	Threshold float64 // the threshold the verdict used
	NBase     int
	NNew      int
	Method    string
	Resample  int // resamples drawn (bootstrap only)
}

// Samples compares two sets of per-rep durations (any unit, the same for
// both): base is the old run, now the new one.
func Samples(base, now []float64, o Options) Result {
	o = o.withDefaults()
	r := Result{Level: o.Level, NBase: len(base), NNew: len(now), P: math.NaN(), Method: MethodNone}
	if len(base) == 0 || len(now) == 0 {
		r.Verdict = Unknown
		return r
	}
	a, b := sortedPositive(base), sortedPositive(now)
	if len(a) == 0 || len(b) == 0 {
		r.Verdict = Unknown
		return r
	}
	r.Ratio = median(b) / median(a)
	r.P = mannWhitneySorted(a, b)
	if len(a) < MinSamples || len(b) < MinSamples {
		r.Verdict = Unknown
		return r
	}
	rng := profiler.NewRNG(o.Seed)
	ratios := make([]float64, o.Resamples)
	for i := range ratios {
		ratios[i] = bootMedian(b, rng) / bootMedian(a, rng)
	}
	slices.Sort(ratios)
	tail := (1 - o.Level) / 2
	r.Lo, r.Hi = percentile(ratios, tail), percentile(ratios, 1-tail)
	r.Method, r.Resample = MethodBootstrap, o.Resamples
	r.judge(o.Threshold)
	return r
}

// Results compares two runs by their samples (Result.Samples) when both
// kept enough, else by their median confidence intervals (Stats.CILo/CIHi,
// which give a wider, conservative interval of the ratio), else by their
// medians alone (Verdict Unknown).
func Results(base, now profiler.Result, o Options) Result {
	if len(base.Samples) >= MinSamples && len(now.Samples) >= MinSamples {
		return Samples(base.Samples, now.Samples, o)
	}
	o = o.withDefaults()
	r := Result{Level: o.Level, NBase: base.Stats.N, NNew: now.Stats.N, P: math.NaN(), Method: MethodNone, Verdict: Unknown}
	if base.Stats.Median <= 0 || now.Stats.Median <= 0 {
		return r
	}
	r.Ratio = now.Stats.Median / base.Stats.Median
	a, b := base.Stats, now.Stats
	if a.CILo > 0 && a.CIHi > 0 && b.CILo > 0 && b.CIHi > 0 {
		r.Lo, r.Hi, r.Method = b.CILo/a.CIHi, b.CIHi/a.CILo, MethodMedianCIs
		r.judge(o.Threshold)
	}
	return r
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Resamples <= 0 {
		o.Resamples = d.Resamples
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = d.Level
	}
	if o.Threshold < 0 {
		o.Threshold = 0
	}
	return o
}

// judge sets the verdict from the interval and the threshold.
func (r *Result) judge(threshold float64) {
	r.Threshold = threshold
	r.NoiseHit = r.Lo <= 1 && r.Hi >= 1
	switch {
	case !r.NoiseHit && r.Hi < 1 && r.Ratio <= 1-threshold:
		r.Verdict = Faster
	case !r.NoiseHit && r.Lo > 1 && r.Ratio >= 1+threshold:
		r.Verdict = Slower
	default:
		r.Verdict = Same
	}
}

// Pct is the change of the median time in percent (negative is faster).
func (r Result) Pct() float64 { return (r.Ratio - 1) * 100 }

// Throughput is the same comparison in throughput (work over time, for
// runs doing the same work): ratio and interval inverted, so a faster run
// has a positive change. The verdict still speaks of time.
func (r Result) Throughput() Result {
	inv := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 1 / x
	}
	r.Ratio, r.Lo, r.Hi = inv(r.Ratio), inv(r.Hi), inv(r.Lo)
	return r
}

// Word is the verdict for people: "faster", "slower", "within noise"
// (the interval holds no change), "below 1%" (a certain change smaller
// than the threshold), or "no CI" when nothing could be judged.
func (r Result) Word() string {
	switch r.Verdict {
	case Faster, Slower:
		return string(r.Verdict)
	case Same:
		if r.NoiseHit {
			return "within noise"
		}
		return fmt.Sprintf("below %g%%", r.Threshold*100)
	}
	return "no CI"
}

// Interval is the interval in percent, "[-0.4, +6.8]", or "" without one.
func (r Result) Interval() string {
	if r.Method == MethodNone || r.Lo <= 0 {
		return ""
	}
	return fmt.Sprintf("[%+.1f, %+.1f]", (r.Lo-1)*100, (r.Hi-1)*100)
}

// String is the change with its interval and verdict:
// "+3.1% [-0.4, +6.8] within noise", "-12.0% [-13.1, -10.9] faster",
// "+3.1% no CI" without samples or intervals.
func (r Result) String() string {
	if r.Ratio <= 0 {
		return "no comparison"
	}
	s := fmt.Sprintf("%+.1f%%", r.Pct())
	if iv := r.Interval(); iv != "" {
		s += " " + iv
	}
	return s + " " + r.Word()
}

// sortedPositive is the finite positive samples, sorted.
func sortedPositive(s []float64) []float64 {
	out := make([]float64, 0, len(s))
	for _, v := range s {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile of sorted s, linear between order statistics.
func percentile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
