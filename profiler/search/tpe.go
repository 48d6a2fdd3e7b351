package search

import (
	"math"
	"sort"
)

// tpe is a tree-structured Parzen estimator over ordinal knobs. It splits
// the points measured so far into the best few ("good") and the rest
// ("bad", with every invalid or failed point), models each knob's values
// under both as smoothed histograms in which a value lends weight to its
// neighbours, and proposes the unseen allowed point that maximises
// Σ log l(x_k)/g(x_k) among a seeded draw of candidates. Invalid points in
// g make their region unattractive without any geometry to fit.
type tpe struct {
	*memory
	startup    int // random points before the model is used
	candidates int // candidates scored per proposal
}

func newTPE(m *memory, evals int) *tpe {
	return &tpe{memory: m, startup: min(max(evals/10, 6), 20), candidates: 96}
}

func (t *tpe) Name() string     { return "tpe" }
func (t *tpe) Tell(rs []Result) { t.record(rs) }

func (t *tpe) Next(n int) []Point {
	var out []Point
	for len(out) < n && t.nUnseen > 0 {
		if len(t.told) < t.startup {
			out = append(out, t.randomBatch(1)...)
			continue
		}
		l, g := t.model()
		i := t.best(l, g)
		if i < 0 {
			break
		}
		out = append(out, t.take(i))
	}
	return out
}

// model builds the good and bad per-knob densities (log scale).
func (t *tpe) model() (l, g [][]float64) {
	var ok []int
	var badPts []int
	for _, i := range t.told {
		if t.known[i] {
			ok = append(ok, i)
		} else if t.bad[i] {
			badPts = append(badPts, i)
		}
	}
	ok = uniq(ok)
	sort.SliceStable(ok, func(a, b int) bool { return t.cost[ok[a]] < t.cost[ok[b]] })
	nGood := min(max(int(math.Ceil(0.15*float64(len(ok)))), 2), 25, len(ok))
	good, rest := ok[:nGood], append(ok[nGood:], uniq(badPts)...)
	return t.density(good), t.density(rest)
}

// density is each knob's smoothed histogram over the positions' values, in
// logs: one pseudo-observation spread uniformly, and each observation's
// weight shared with its neighbours (½ at distance 1, ⅛ at distance 2).
func (t *tpe) density(pos []int) [][]float64 {
	out := make([][]float64, len(t.sp.Knobs))
	for k, kn := range t.sp.Knobs {
		K := len(kn.Values)
		h := make([]float64, K)
		for v := range h {
			h[v] = 1 / float64(K)
		}
		for _, i := range pos {
			c := t.sp.cands[i][k]
			for d, w := range []float64{1, 0.5, 0.125} {
				if c-d >= 0 {
					h[c-d] += w
				}
				if d > 0 && c+d < K {
					h[c+d] += w
				}
			}
		}
		var sum float64
		for _, x := range h {
			sum += x
		}
		for v := range h {
			h[v] = math.Log(h[v] / sum)
		}
		out[k] = h
	}
	return out
}

// best scores candidates drawn from l (knob by knob) and from the random
// stream, and returns the unseen allowed one of highest l/g; -1 when none
// is left.
func (t *tpe) best(l, g [][]float64) int {
	score := func(i int) float64 {
		var s float64
		for k, c := range t.sp.cands[i] {
			s += l[k][c] - g[k][c]
		}
		return s
	}
	bestI, bestS := -1, math.Inf(-1)
	consider := func(i int) {
		if i >= 0 && !t.seen[i] {
			if s := score(i); s > bestS {
				bestI, bestS = i, s
			}
		}
	}
	idx := make([]int, len(t.sp.Knobs))
	for range t.candidates {
		for k := range idx {
			idx[k] = t.drawLog(l[k])
		}
		if i, ok := t.sp.find(idx); ok {
			consider(i)
		}
	}
	// A share of uniform candidates keeps the search from locking onto
	// l's mode when most of its draws are seen or refused.
	for range t.candidates / 4 {
		consider(t.uniformUnseen())
	}
	if bestI < 0 {
		bestI = t.randomUnseen()
	}
	return bestI
}

// uniformUnseen is a uniformly drawn unseen position (a few tries), or -1.
func (t *tpe) uniformUnseen() int {
	for range 8 {
		if i := t.rng.IntN(t.sp.Size()); !t.seen[i] {
			return i
		}
	}
	return -1
}

// drawLog draws an index from a distribution given in logs.
func (t *tpe) drawLog(logp []float64) int {
	u := t.rng.Float64()
	var c float64
	for v, lp := range logp {
		c += math.Exp(lp)
		if u < c {
			return v
		}
	}
	return len(logp) - 1
}

// uniq keeps the first of each position, in order.
func uniq(pos []int) []int {
	seen := map[int]bool{}
	out := pos[:0:0]
	for _, i := range pos {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}
