package profiler

import (
	"math"
	"slices"
)

// Summarize computes order statistics and moments of samples (ns).
func Summarize(samples []float64) Stats {
	n := len(samples)
	if n == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	stdev := 0.0
	if n > 1 {
		stdev = math.Sqrt(ss / float64(n-1))
	}
	cv := 0.0
	if mean > 0 {
		cv = stdev / mean
	}
	st := Stats{N: n, Min: s[0], P10: quantile(s, 0.10), Median: quantile(s, 0.5), P90: quantile(s, 0.90), Mean: mean, Stdev: stdev, CV: cv}
	st.CILo, st.CIHi, _ = medianCISorted(s)
	return st
}

// quantile interpolates linearly between order statistics of sorted s.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	frac := pos - float64(lo)
	return s[lo]*(1-frac) + s[hi]*frac
}

// MedianCIRanks gives the order statistics that bound a distribution-free
// confidence interval of the median of n samples: with the samples sorted
// ascending and numbered from 1, the median lies in [x(lo), x(hi)] with
// probability coverage ≥ level whatever the distribution (for independent
// samples). The number of samples below the median is Binomial(n, ½), so
// P(x(lo) ≤ m ≤ x(hi)) = P(lo ≤ K ≤ hi−1) = 1 − 2·P(K ≤ lo−1) with
// hi = n+1−lo; lo is the largest rank whose tail P(K ≤ lo−1) is at most
// (1−level)/2. ok is false when n is too small for any interval of that
// level (n < 6 at 95%).
func MedianCIRanks(n int, level float64) (lo, hi int, coverage float64, ok bool) {
	if n < 1 || level <= 0 || level >= 1 {
		return 0, 0, 0, false
	}
	alpha := (1 - level) / 2
	// Walk the binomial CDF from K = 0 up; the pmf in logs so that large n
	// neither underflows nor overflows. log pmf(0) = −n·ln 2.
	logp := -float64(n) * math.Ln2
	cdf := 0.0
	lo = 0
	for k := 0; k <= n/2; k++ {
		next := cdf + math.Exp(logp)
		if next > alpha {
			break
		}
		cdf = next
		lo = k + 1 // P(K ≤ k) ≤ alpha: rank k+1 may bound the interval
		logp += math.Log(float64(n-k)) - math.Log(float64(k+1))
	}
	if lo == 0 {
		return 0, 0, 0, false
	}
	// tail of the accepted rank: P(K ≤ lo−1) = cdf
	return lo, n + 1 - lo, 1 - 2*cdf, true
}

// MedianCI is a 95% distribution-free confidence interval of the median of
// samples (any order), from order statistics; ok is false below 6 samples.
func MedianCI(samples []float64) (lo, hi float64, ok bool) {
	s := slices.Clone(samples)
	slices.Sort(s)
	return medianCISorted(s)
}

func medianCISorted(s []float64) (lo, hi float64, ok bool) {
	l, h, _, ok := MedianCIRanks(len(s), 0.95)
	if !ok {
		return 0, 0, false
	}
	return s[l-1], s[h-1], true
}

// Why sampling stopped.
const (
	StopPrecision  = "precision"   // the median's confidence interval reached the noise target
	StopTimeLimit  = "time limit"  // MaxTime of wall time passed first
	StopMaxSamples = "max samples" // MaxSamples were taken first
	// StopOutpaced: the median's whole confidence interval lay above
	// StopRule.Outpaced (a sweep's --race: clearly slower than the best
	// spec of its shape so far). The median and its interval stand, only
	// less precise than the noise target.
	StopOutpaced = "outpaced"
)

// RaceMinSamples is the fewest samples that have a 95% confidence
// interval of the median (MedianCIRanks): the earliest a spec can be
// outpaced.
const RaceMinSamples = 6

// StopRule is the measurement method: after warm-up, sample until the
// median is known precisely enough: the 95% confidence interval of the
// median (order statistics, see MedianCIRanks) has a half-width of at most
// Noise × median, and the medians of the first and last third of the
// samples (in time order) agree within Noise, so that a stream drifting
// within the measurement (clocks ramping, throttling) is not taken for a
// stable one. (A drift too slow to show within the samples taken cannot
// be told from a level: the warm-up is there for that.) Both only after MinSamples samples and MinTime of measured kernel
// time. Stop regardless at MaxTime of wall time or MaxSamples samples.
//
// The sample CV is not used: it does not shrink with more samples, so a
// kernel whose samples scatter by 3% could never meet a 1% CV target,
// while the precision of its median improves as 1/√n.
type StopRule struct {
	Noise      float64 `json:"noise"`       // target relative half-width of the median's 95% CI, default 0.005
	MinSamples int     `json:"min_samples"` // default 20
	MinTime    float64 `json:"min_time"`    // seconds of measured (summed sample) time, default 0.01
	MaxTime    float64 `json:"max_time"`    // seconds of wall time for the whole measurement, default 1
	MaxSamples int     `json:"max_samples"` // default 50000
	// Outpaced, when above 0, stops sampling (StopOutpaced) once at least
	// RaceMinSamples are taken and the lower end of the median's 95%
	// interval is above it, in ns: a sweep run with --race sets it per
	// spec to the factor times the best median of the spec's shape so far.
	// MinSamples and MinTime do not hold it back. 0: off.
	Outpaced float64 `json:"outpaced_ns,omitempty"`
}

// DefaultStopRule is the rule when nothing is set. The choice:
//   - Noise 0.5%: two runs of one spec then give medians within √2·0.5% ≈
//     0.7% of each other 95% of the time from sampling alone, inside the
//     1%-on-95%-of-rows reproducibility target with room for the
//     run-to-run effects no CI sees (clocks, memory placement).
//   - MinSamples 20: the first n whose 95% interval does not reach the
//     extremes (ranks 6 and 15), so one outlier cannot stop or block it.
//   - MinTime 10 ms: with the 20 ms warm-up, enough for the GPU's clocks
//     to settle; more only slows sweeps of 100 µs kernels (a kernel with
//     samples scattered by 3% needs ~200 samples, 20–40 ms, to reach 0.5%).
//     Longer windows were measured and buy little agreement between runs
//     (issue 12, scripts/cuda-repro.sh, 99 attention configs): on an H100
//     76-77% of rows agree within 1% at these defaults (7.7-9.5 configs/s),
//     69% at MinTime 50 ms and 85% at 100 ms (2.5-3.7 configs/s); an H200
//     91-93% at the defaults. Within one run a spec's samples sit within
//     ±1%; between runs GPU Boost moves the effective SM clock between
//     ~1976 and ~2086 MHz in steps that hold for up to seconds, and the
//     medians follow it (Result.SMClockMHz; README "How mltop measures").
//   - MaxTime 1 s, MaxSamples 50000: bounds for kernels that never settle.
//     1 s, not 2: on an H100 the specs that reach it are a few long,
//     heavy configs whose speed wanders by ±5% within the measurement (2
//     of 99 attention configs of 5 ms); at 2 s they were a quarter of a
//     sweep's time, and a further second narrows their interval by only
//     √2 (it is reported: ci_lo_us, ci_hi_us, stop_reason).
func DefaultStopRule() StopRule {
	return StopRule{Noise: 0.005, MinSamples: 20, MinTime: 0.01, MaxTime: 1, MaxSamples: 50000}
}

// Restart says how many of the first samples to drop as warm-up because
// the level moved during the measurement (a boost clock switching, a
// kernel warming up): after at least 2×MinSamples samples, when the
// medians of the first and last third differ by more than Noise and by
// more than twice the median's interval (a shift, not scatter), the first
// third goes. Without it such a spec samples a mix of two levels until the
// time limit; with it, it stops on the level it settled at. 0: keep all.
func (r StopRule) Restart(samples []float64) int {
	return r.restart(samples, estimateOnce(samples))
}

func (r StopRule) restart(samples []float64, est func() Precision) int {
	n := len(samples)
	if n < 2*max(r.MinSamples, 6) {
		return 0
	}
	p := est()
	if !p.OK || p.DriftRel <= r.Noise || p.DriftRel <= 2*p.HalfRel {
		return 0
	}
	return n / 3
}

// Step is the check after each batch of samples: Restart, then Done on
// what is kept. Where nothing is dropped both read one estimate (each
// sorts the samples, which for a kernel of a few µs and thousands of
// samples is a real share of a batch's time).
func (r StopRule) Step(samples []float64, wallSeconds float64) (cut int, done bool, why string) {
	est := estimateOnce(samples)
	if cut = r.restart(samples, est); cut > 0 {
		kept := samples[cut:]
		est = estimateOnce(kept)
		samples = kept
	}
	done, why = r.done(samples, wallSeconds, est)
	return cut, done, why
}

// estimateOnce is Estimate(samples), computed on the first call only.
func estimateOnce(samples []float64) func() Precision {
	var p *Precision
	return func() Precision {
		if p == nil {
			e := Estimate(samples)
			p = &e
		}
		return *p
	}
}

// Precision is the state of the estimate after some samples.
type Precision struct {
	CILo     float64 `json:"ci_lo_ns"`     // 95% confidence interval of the median
	CIHi     float64 `json:"ci_hi_ns"`     //
	HalfRel  float64 `json:"ci_half_rel"`  // (CIHi−CILo)/2 / median
	DriftRel float64 `json:"drift_rel"`    // |median(first third) − median(last third)| / median
	OK       bool    `json:"ci_available"` // false below 6 samples
}

// Estimate computes the median's confidence interval and the drift between
// the first and last third of samples (in time order).
func Estimate(samples []float64) Precision {
	n := len(samples)
	s := slices.Clone(samples)
	slices.Sort(s)
	lo, hi, ok := medianCISorted(s)
	if !ok {
		return Precision{}
	}
	med := quantile(s, 0.5)
	p := Precision{CILo: lo, CIHi: hi, OK: true}
	if med > 0 {
		p.HalfRel = (hi - lo) / 2 / med
		a := slices.Clone(samples[:n/3])
		b := slices.Clone(samples[n-n/3:])
		slices.Sort(a)
		slices.Sort(b)
		p.DriftRel = math.Abs(quantile(a, 0.5)-quantile(b, 0.5)) / med
	}
	return p
}

// Done reports whether sampling may stop, and why (StopPrecision,
// StopTimeLimit, StopMaxSamples, StopOutpaced; "" while it goes on).
func (r StopRule) Done(samples []float64, wallSeconds float64) (bool, string) {
	return r.done(samples, wallSeconds, estimateOnce(samples))
}

func (r StopRule) done(samples []float64, wallSeconds float64, est func() Precision) (bool, string) {
	if wallSeconds >= r.MaxTime {
		return true, StopTimeLimit
	}
	if r.MaxSamples > 0 && len(samples) >= r.MaxSamples {
		return true, StopMaxSamples
	}
	if r.Outpaced > 0 && len(samples) >= RaceMinSamples {
		if p := est(); p.OK && p.CILo > r.Outpaced {
			return true, StopOutpaced
		}
	}
	if len(samples) < max(r.MinSamples, RaceMinSamples) {
		return false, ""
	}
	var measured float64
	for _, v := range samples {
		measured += v
	}
	if measured/1e9 < r.MinTime {
		return false, ""
	}
	p := est()
	if p.OK && p.HalfRel <= r.Noise && p.DriftRel <= r.Noise {
		return true, StopPrecision
	}
	return false, ""
}
