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
	return Stats{N: n, Min: s[0], P10: quantile(s, 0.10), Median: quantile(s, 0.5), P90: quantile(s, 0.90), Mean: mean, Stdev: stdev, CV: cv}
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

// StopRule is the measurement method: after warm-up, keep sampling until the
// noise (stdev/mean) is at most Noise, with at least MinSamples samples and
// MinTime of measured time; stop regardless at MaxTime of wall time.
type StopRule struct {
	Noise      float64 // target CV, default 0.01
	MinSamples int     // default 10
	MinTime    float64 // seconds of measured (summed sample) time, default 0.2
	MaxTime    float64 // seconds of wall time for the whole measurement, default 5
}

// DefaultStopRule is the rule when nothing is set.
func DefaultStopRule() StopRule {
	return StopRule{Noise: 0.01, MinSamples: 10, MinTime: 0.2, MaxTime: 5}
}

// Done reports whether sampling may stop, and why.
func (r StopRule) Done(samples []float64, wallSeconds float64) (bool, string) {
	if wallSeconds >= r.MaxTime {
		return true, "time limit"
	}
	if len(samples) < r.MinSamples {
		return false, ""
	}
	var measured float64
	for _, v := range samples {
		measured += v
	}
	if measured/1e9 < r.MinTime {
		return false, ""
	}
	st := Summarize(samples)
	if st.CV <= r.Noise {
		return true, "noise target"
	}
	return false, ""
}
