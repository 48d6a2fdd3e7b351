package search

// evolution is a steady-state genetic search: after a random first
// population, each child comes from two parents picked by tournament among
// the measured points (invalid and failed points never win one), crossed
// over knob by knob, then mutated to neighbouring values. A child that is
// refused or already seen is bred again (a few tries) before falling back
// to a random unseen point.
type evolution struct {
	*memory
	population int // random points before breeding
	tournament int
}

func newEvolution(m *memory, evals int) *evolution {
	return &evolution{memory: m, population: min(max(evals/8, 6), 24), tournament: 3}
}

func (e *evolution) Name() string     { return "evolution" }
func (e *evolution) Tell(rs []Result) { e.record(rs) }

func (e *evolution) Next(n int) []Point {
	var out []Point
	for len(out) < n && e.nUnseen > 0 {
		parents := e.measured()
		if len(e.told) < e.population || len(parents) < 2 {
			out = append(out, e.randomBatch(1)...)
			continue
		}
		i := -1
		for try := 0; try < 40 && i < 0; try++ {
			i = e.child(parents)
		}
		if i < 0 {
			i = e.randomUnseen()
		}
		if i < 0 {
			break
		}
		out = append(out, e.take(i))
	}
	return out
}

// measured lists the positions with a full-fidelity cost.
func (e *evolution) measured() []int {
	var out []int
	for _, i := range uniq(e.told) {
		if e.known[i] {
			out = append(out, i)
		}
	}
	return out
}

// pick is the best of a few random members of pool.
func (e *evolution) pick(pool []int) int {
	best := pool[e.rng.IntN(len(pool))]
	for range e.tournament - 1 {
		if c := pool[e.rng.IntN(len(pool))]; e.cost[c] < e.cost[best] {
			best = c
		}
	}
	return best
}

// child breeds one candidate; -1 when it is refused or seen.
func (e *evolution) child(pool []int) int {
	a, b := e.sp.cands[e.pick(pool)], e.sp.cands[e.pick(pool)]
	idx := make([]int, len(a))
	cross := e.rng.Float64() < 0.7
	for k := range idx {
		idx[k] = a[k]
		if cross && e.rng.IntN(2) == 0 {
			idx[k] = b[k]
		}
	}
	// Mutate each knob with probability 1/d, and at least one.
	d := len(idx)
	mutated := false
	for k := range idx {
		if e.rng.IntN(d) == 0 {
			idx[k] = e.step(k, idx[k])
			mutated = true
		}
	}
	if !mutated {
		k := e.rng.IntN(d)
		idx[k] = e.step(k, idx[k])
	}
	i, ok := e.sp.find(idx)
	if !ok || e.seen[i] {
		return -1
	}
	return i
}

// step moves value index v of knob k to a neighbour: ±1, sometimes ±2,
// and one time in eight to any value.
func (e *evolution) step(k, v int) int {
	n := len(e.sp.Knobs[k].Values)
	if n == 1 {
		return v
	}
	d := 1
	switch e.rng.IntN(8) {
	case 0, 1:
		d = 2
	case 2: // a long jump now and then gets over a ridge
		return e.rng.IntN(n)
	}
	if e.rng.IntN(2) == 0 {
		d = -d
	}
	return min(max(v+d, 0), n-1)
}
