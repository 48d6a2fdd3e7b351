package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Landscape is a cost for every configuration of some knobs: a stand-in
// for a GPU when testing strategies and drivers. Allow is the constraint
// known before running (pass it to NewSpace); Measure also refuses the
// configurations only a run finds invalid.
type Landscape struct {
	Knobs []Knob
	Allow Constraint
	cost  map[string]float64 // by ValuesKey
	// hidden are configurations Allow passes that a run refuses.
	hidden map[string]bool
}

// ValuesKey identifies a configuration by its knob values, in knobs' order.
func ValuesKey(knobs []Knob, values map[string]int) string {
	var b strings.Builder
	for k, kn := range knobs {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(values[kn.Name]))
	}
	return b.String()
}

// ErrRefusedAtRun is what Measure says of a configuration only a run refuses.
var ErrRefusedAtRun = errors.New("refused when run")

// Measure is the cost of a configuration, ErrRefusedAtRun for one only a
// run refuses, or an error for one the landscape does not hold.
func (l *Landscape) Measure(values map[string]int) (float64, error) {
	key := ValuesKey(l.Knobs, values)
	if l.hidden[key] {
		return 0, ErrRefusedAtRun
	}
	c, ok := l.cost[key]
	if !ok {
		return 0, fmt.Errorf("configuration %s is not in the landscape", key)
	}
	return c, nil
}

// Evaluate measures p of sp as a search Result.
func (l *Landscape) Evaluate(sp *Space, p Point) Result {
	c, err := l.Measure(sp.Values(p))
	if err != nil {
		return Result{Point: p, Invalid: true}
	}
	return Result{Point: p, Cost: c}
}

// Best is the lowest cost over sp's configurations that run, found by
// measuring every one; ok is false when none runs.
func (l *Landscape) Best(sp *Space) (best float64, ok bool) {
	best = math.Inf(1)
	for i := range sp.Size() {
		if c, err := l.Measure(sp.Values(sp.Point(i))); err == nil && c < best {
			best, ok = c, true
		}
	}
	return best, ok
}

// Synthetic makes a landscape with the structure tile-geometry timings
// have: a smooth bowl around a seeded optimum (each knob has a best value
// and costs grow away from it), ridges (one knob pair pays a penalty when
// their indices line up, as with bank conflicts), a region the constraint
// refuses (the first two knobs both large, as WG·VEC past a limit), holes
// only a run finds (about 4% of points, and one corner), and multiplicative
// noise of 2% fixed per point. Costs are in ns around 100 µs.
func Synthetic(seed uint64, knobs []Knob) *Landscape {
	rng := rand.New(rand.NewPCG(seed, 0x6c616e64)) // "land"
	d := len(knobs)
	centre, weight := make([]float64, d), make([]float64, d)
	for k := range d {
		centre[k] = 0.15 + 0.7*rng.Float64()
		weight[k] = 0.5 + 1.5*rng.Float64()
	}
	norm := func(k, i int) float64 {
		if n := len(knobs[k].Values); n > 1 {
			return float64(i) / float64(n-1)
		}
		return 0
	}
	l := &Landscape{Knobs: knobs, cost: map[string]float64{}, hidden: map[string]bool{}}
	idxOf := func(values map[string]int) []int {
		idx := make([]int, d)
		for k, kn := range knobs {
			for i, v := range kn.Values {
				if v == values[kn.Name] {
					idx[k] = i
				}
			}
		}
		return idx
	}
	l.Allow = func(values map[string]int) error {
		if idx := idxOf(values); d >= 2 && norm(0, idx[0])+norm(1, idx[1]) > 1.6 {
			return fmt.Errorf("%s and %s too large together", knobs[0].Name, knobs[1].Name)
		}
		return nil
	}
	idx := make([]int, d)
	values := map[string]int{}
	for {
		for k, kn := range knobs {
			values[kn.Name] = kn.Values[idx[k]]
		}
		var bowl, ridge float64
		for k := range d {
			x := norm(k, idx[k]) - centre[k]
			bowl += weight[k] * x * x
		}
		if d >= 3 && (idx[1]+idx[2])%3 == 0 {
			ridge += 0.12
		}
		if d >= 4 && idx[3] == idx[0] {
			ridge += 0.08
		}
		key := ValuesKey(knobs, values)
		l.cost[key] = 1e5 * (1 + 3*bowl + ridge) * math.Exp(0.02*rng.NormFloat64())
		if rng.Float64() < 0.04 || (d >= 4 && norm(2, idx[2]) > 0.85 && norm(3, idx[3]) < 0.15) {
			l.hidden[key] = true
		}
		if !nextIndex(idx, knobs) {
			return l
		}
	}
}
