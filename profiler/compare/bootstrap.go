package compare

import (
	"math"
	"slices"

	"github.com/mltop/mltop/profiler"
)

// bootMedian draws the median of one bootstrap resample of sorted s (n
// draws with replacement) without drawing the n values: the resample's
// order statistics are the empirical quantile function at the order
// statistics of n uniforms, and the k-th of n uniforms is Beta(k, n+1−k).
// For even n the next order statistic is the smallest of the n−k uniforms
// above the k-th. So each resample costs a few variates whatever n is (a
// run keeps up to 50000 samples), and the distribution is the bootstrap's
// exactly.
func bootMedian(s []float64, rng *profiler.RNG) float64 {
	n := len(s)
	at := func(u float64) float64 { return s[min(n-1, int(u*float64(n)))] }
	if n%2 == 1 {
		k := float64(n/2 + 1)
		return at(betaVariate(k, float64(n)+1-k, rng))
	}
	k := float64(n / 2)
	u := betaVariate(k, float64(n)+1-k, rng)
	// The minimum of n−k uniforms on (u, 1): 1 − V^(1/(n−k)) of the way up.
	next := u + (1-u)*(1-math.Pow(openUniform(rng), 1/(float64(n)-k)))
	return (at(u) + at(next)) / 2
}

// betaVariate is Beta(a, b) as X/(X+Y) of two gamma variates.
func betaVariate(a, b float64, rng *profiler.RNG) float64 {
	x := gammaVariate(a, rng)
	y := gammaVariate(b, rng)
	return x / (x + y)
}

// gammaVariate is Gamma(shape, 1) for shape ≥ 1 (Marsaglia and Tsang's
// squeeze method).
func gammaVariate(shape float64, rng *profiler.RNG) float64 {
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.Normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(openUniform(rng)) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// openUniform is uniform in (0, 1).
func openUniform(rng *profiler.RNG) float64 {
	for {
		if u := rng.Float64(); u > 0 {
			return u
		}
	}
}

// MannWhitney is the two-sided p-value of the Mann–Whitney U test on a
// and b (normal approximation with the tie correction and a
// continuity correction): small when one set tends to be larger than the
// other. 1 when every value ties; NaN when a set is empty.
func MannWhitney(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return mannWhitneySorted(a, b)
}

func mannWhitneySorted(a, b []float64) float64 {
	na, nb := len(a), len(b)
	if na == 0 || nb == 0 {
		return math.NaN()
	}
	// Walk the merged order; tied values share their mean rank.
	var rankA, ties float64
	i, j, rank := 0, 0, 1.0
	for i < na || j < nb {
		v := math.Inf(1)
		if i < na {
			v = a[i]
		}
		if j < nb && b[j] < v {
			v = b[j]
		}
		ca, cb := 0, 0
		for i < na && a[i] == v {
			i, ca = i+1, ca+1
		}
		for j < nb && b[j] == v {
			j, cb = j+1, cb+1
		}
		t := float64(ca + cb)
		mean := rank + (t-1)/2
		rankA += float64(ca) * mean
		ties += t*t*t - t
		rank += t
	}
	fa, fb := float64(na), float64(nb)
	n := fa + fb
	u := rankA - fa*(fa+1)/2
	mu := fa * fb / 2
	variance := fa * fb / 12 * ((n + 1) - ties/(n*(n-1)))
	if n < 2 || variance <= 0 {
		return 1
	}
	z := math.Max(0, math.Abs(u-mu)-0.5) / math.Sqrt(variance)
	return math.Erfc(z / math.Sqrt2)
}
