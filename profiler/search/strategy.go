package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Strategy proposes points and learns from their results. Next returns up
// to n points not proposed or told before (successive halving may propose
// a point again at a higher fidelity); an empty batch means it has nothing
// more to propose. Tell takes results of any points of the space,
// proposed or not (a resumed search tells the rows already measured).
type Strategy interface {
	Name() string
	Next(n int) []Point
	Tell(rs []Result)
}

// Names are the strategies New knows, as a user writes them.
var Names = []string{"tpe", "evolution", "halving", "random", "exhaustive"}

var aliases = map[string]string{
	"bayes": "tpe", "bayesian": "tpe",
	"evolutionary": "evolution", "evo": "evolution", "ga": "evolution",
	"successive_halving": "halving", "sh": "halving",
	"grid": "exhaustive", "all": "exhaustive",
}

// Canonical is the strategy name for name or one of its aliases; false
// for an unknown name.
func Canonical(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[n]; ok {
		n = a
	}
	return n, slices.Contains(Names, n)
}

// New makes the strategy called name over sp, seeded, planning for evals
// evaluations (the budget; strategies size their start-up phase by it).
func New(name string, sp *Space, seed uint64, evals int) (Strategy, error) {
	n, ok := Canonical(name)
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q: use one of %s", name, strings.Join(Names, ", "))
	}
	m := newMemory(sp, seed)
	evals = max(evals, 1)
	switch n {
	case "tpe":
		return newTPE(m, evals), nil
	case "evolution":
		return newEvolution(m, evals), nil
	case "halving":
		return newHalving(m, evals), nil
	case "random":
		return &random{m}, nil
	}
	return &exhaustive{memory: m}, nil
}

// memory is what every strategy keeps: which positions were proposed or
// told, their best full-fidelity cost, and which were invalid.
type memory struct {
	sp      *Space
	rng     *rand.Rand
	seen    []bool    // proposed or told
	cost    []float64 // full-fidelity cost of a usable result
	known   []bool    // cost holds a value
	bad     []bool    // invalid or failed
	order   []int     // a seeded permutation of positions: the random stream
	next    int       // first position of order that may be unseen
	nUnseen int
	told    []int // positions with a full-fidelity outcome, in the order told
}

func newMemory(sp *Space, seed uint64) *memory {
	n := sp.Size()
	rng := rand.New(rand.NewPCG(seed, 0x6d6c746f70)) // "mltop"
	return &memory{sp: sp, rng: rng, seen: make([]bool, n), cost: make([]float64, n), known: make([]bool, n),
		bad: make([]bool, n), order: rng.Perm(n), nUnseen: n}
}

func (m *memory) markSeen(i int) {
	if !m.seen[i] {
		m.seen[i] = true
		m.nUnseen--
	}
}

// randomUnseen is the next unseen position of the seeded permutation, or
// -1 when every position is seen.
func (m *memory) randomUnseen() int {
	for ; m.next < len(m.order); m.next++ {
		if i := m.order[m.next]; !m.seen[i] {
			return i
		}
	}
	return -1
}

// record stores rs; it returns each result's position (-1 off the space).
func (m *memory) record(rs []Result) []int {
	pos := make([]int, len(rs))
	for k, r := range rs {
		i, ok := m.sp.find(r.Point.Index)
		if !ok {
			pos[k] = -1
			continue
		}
		pos[k] = i
		m.markSeen(i)
		switch {
		case !r.usable():
			m.bad[i] = true
		case r.Point.Fidelity >= 1 && (!m.known[i] || r.Cost < m.cost[i]):
			m.cost[i], m.known[i] = r.Cost, true
		}
		if r.Point.Fidelity >= 1 || !r.usable() {
			m.told = append(m.told, i)
		}
	}
	return pos
}

// take proposes position i: marks it seen and makes its point.
func (m *memory) take(i int) Point {
	m.markSeen(i)
	return m.sp.Point(i)
}

// randomBatch is up to n unseen positions from the random stream.
func (m *memory) randomBatch(n int) []Point {
	var out []Point
	for len(out) < n {
		i := m.randomUnseen()
		if i < 0 {
			break
		}
		out = append(out, m.take(i))
	}
	return out
}

// random proposes unseen points in a seeded random order.
type random struct{ *memory }

func (r *random) Name() string         { return "random" }
func (r *random) Next(n int) []Point   { return r.randomBatch(n) }
func (r *random) Tell(rs []Result)     { r.record(rs) }
func (e *exhaustive) Name() string     { return "exhaustive" }
func (e *exhaustive) Tell(rs []Result) { e.record(rs) }

// exhaustive proposes every point in the space's order.
type exhaustive struct {
	*memory
	at int
}

func (e *exhaustive) Next(n int) []Point {
	var out []Point
	for ; e.at < e.sp.Size() && len(out) < n; e.at++ {
		if !e.seen[e.at] {
			out = append(out, e.take(e.at))
		}
	}
	return out
}
