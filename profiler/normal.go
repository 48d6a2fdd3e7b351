package profiler

import "math"

// Normal inputs are made two at a time by Box–Muller from exactly two
// draws of the buffer's SplitMix64 stream (pair p takes draws 2p and
// 2p+1), so element i depends only on the stream's state at draw
// 2·(i/2): any range of a buffer can be generated on its own (the
// parallel fill's chunks) and agrees value for value with the whole.
//
// The logarithm, sine and cosine are evaluated here rather than by
// package math, for two reasons. Speed: both outputs of a pair are used
// and the polynomials below cost about a third of math.Log + math.Cos per
// element. Determinism: every operation is an IEEE multiply, add, divide
// or square root whose product is rounded on its own (the explicit
// float64 conversions forbid the compiler to fuse a multiply and an add,
// which it does on arm64 and not on amd64), so the inputs are the same
// bits on every platform and Go version; math.Log is assembly on amd64
// and Go elsewhere.

// FillNormalAt writes elements first … first+len(dst)−1 of the normal
// input of b (mean b.Mean, scale b.Scale or 1) whose stream is seeded
// stream (SeedFor(seed, b.Name)), rounded to b.Type. Fill calls it with
// first 0; a chunk of a parallel fill with its own first.
func FillNormalAt(dst []float32, first int, stream uint64, b BufferSpec) {
	scale := b.Scale
	if scale == 0 {
		scale = 1
	}
	dt, mean := b.Type, b.Mean
	put := func(i int, z float64) { dst[i] = dt.Round(float32(mean + float64(z*scale))) }
	// SplitMix64 after k draws is in state seed + k·increment.
	rng := RNG{s: stream + uint64(first&^1)*splitMixIncrement}
	i := 0
	if first&1 == 1 && len(dst) > 0 { // the second of a pair
		_, z1 := rng.NormalPair()
		put(0, z1)
		i = 1
	}
	for ; i+1 < len(dst); i += 2 {
		z0, z1 := rng.NormalPair()
		put(i, z0)
		put(i+1, z1)
	}
	if i < len(dst) { // the first of a pair whose second is past dst
		z0, _ := rng.NormalPair()
		put(i, z0)
	}
}

// splitMixIncrement is SplitMix64's step (see RNG.Uint64).
const splitMixIncrement = 0x9e3779b97f4a7c15

// NormalPair returns two independent standard normal deviates from two
// draws (Box–Muller: radius √(−2 ln u) with u uniform in (0, 1], angle
// uniform in [0, 2π)), the same bits on every platform.
func (r *RNG) NormalPair() (float64, float64) {
	u := float64(r.Uint64()>>11+1) * 0x1p-53 // (0, 1]: no retry, so always two draws
	radius := math.Sqrt(-2 * logUnit(u))
	c, s := turnCosSin(r.Uint64() >> 11)
	return radius * c, radius * s
}

// logUnit is ln u for u in [2^−53, 1], to about 1e−15: u = m·2^e with m
// in [1, 2), m is brought near 1 by the rounded inverse g of the nearest
// 1 + j/128, and ln u = e·ln 2 − ln g + ln(m·g), the last by its series to
// the fifth power of m·g − 1 (|m·g − 1| < 2^−8, so the next term is below
// 1e−16). A dependency chain this short is as fast as math.Log.
func logUnit(u float64) float64 {
	bits := math.Float64bits(u)
	e := int(bits>>52&0x7ff) - 1023
	m := math.Float64frombits(bits&^(0x7ff<<52) | 1023<<52) // [1, 2)
	j := (bits&(1<<52-1) + 1<<44) >> 45                     // the nearest 1 + j/128, j ≤ 128
	r := float64(m*logTable.inv[j]) - 1
	p := float64(r*(-1.0/6)) + 1.0/5
	p = float64(r*p) - 1.0/4
	p = float64(r*p) + 1.0/3
	p = float64(r*p) - 1.0/2
	p = float64(r*p) + 1
	return float64(float64(e)*math.Ln2) + logTable.negLnInv[j] + float64(r*p)
}

// logTable holds, for c = 1 + j/128, the rounded inverse g of c and −ln g,
// made once from IEEE divisions and the atanh series, so the same bits
// everywhere.
var logTable = makeLogTable()

type logTables struct{ inv, negLnInv [129]float64 }

func makeLogTable() *logTables {
	t := &logTables{}
	for j := range t.inv {
		g := 128 / float64(128+j) // 1/c, rounded once
		t.inv[j] = g
		// ln g = 2·atanh((g−1)/(g+1)), |(g−1)/(g+1)| ≤ 1/3: summed to the
		// 41st power, past 1e−20.
		a := float64(g-1) / float64(g+1)
		a2 := float64(a * a)
		sum := 0.0
		for n := 41; n >= 1; n -= 2 {
			sum = float64(sum*a2) + 1/float64(n)
		}
		t.negLnInv[j] = -float64(2 * a * sum)
	}
	return t
}

// turnCosSin is the cosine and sine of the angle 2π·k/2^53 (k < 2^53).
// The top bits of k, shifted by an eighth of a turn, pick the quadrant,
// so the Taylor series only see angles x in [−π/4, π/4), where summed to
// x^14 (cos) and x^15 (sin) they are exact to 1e−15.
func turnCosSin(k uint64) (float64, float64) {
	k += 1 << 50                    // quadrant q covers [q−½, q+½) quarter turns
	f := int64(k&(1<<51-1)) - 1<<50 // the rest, in [−2^50, 2^50) of a quarter turn
	x := float64(f) * (math.Pi / 2 / (1 << 51))
	x2 := float64(x * x)
	c := float64(x2*(-1.0/87178291200)) + 1.0/479001600 // Σ (−x²)^n/(2n)!
	c = float64(x2*c) - 1.0/3628800
	c = float64(x2*c) + 1.0/40320
	c = float64(x2*c) - 1.0/720
	c = float64(x2*c) + 1.0/24
	c = float64(x2*c) - 1.0/2
	c = float64(x2*c) + 1
	s := float64(x2*(-1.0/1307674368000)) + 1.0/6227020800 // Σ (−x²)^n/(2n+1)!
	s = float64(x2*s) - 1.0/39916800
	s = float64(x2*s) + 1.0/362880
	s = float64(x2*s) - 1.0/5040
	s = float64(x2*s) + 1.0/120
	s = float64(x2*s) - 1.0/6
	s = float64(x2*s) + 1
	s = float64(x * s)
	switch k >> 51 & 3 { // rotate by q quarter turns
	case 1:
		return -s, c
	case 2:
		return -c, -s
	case 3:
		return s, -c
	}
	return c, s
}
