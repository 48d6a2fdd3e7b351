package search

import (
	"math"
	"sort"
)

// HalvingRungs are the fidelities successive halving measures at: a ninth
// of the full measurement, a third, then in full. Each rung keeps the best
// 1/HalvingEta of the one before.
var HalvingRungs = []float64{1.0 / 9, 1.0 / 3, 1}

// HalvingEta is how many candidates of a rung compete for one place in the
// next.
const HalvingEta = 3

// halving is successive halving: a bracket of random points is measured
// briefly, the best third is measured longer, and the best third of those
// in full; then a new bracket starts while the budget lasts.
type halving struct {
	*memory
	bracket  int       // points a bracket starts with
	rung     int       // index into HalvingRungs
	members  []int     // the current rung's positions
	proposed int       // members proposed so far
	costs    []float64 // members' costs at this rung (+Inf: not usable)
	answered []bool
}

func newHalving(m *memory, evals int) *halving {
	return &halving{memory: m, bracket: max(evals, HalvingEta*HalvingEta)}
}

func (h *halving) Name() string { return "halving" }

// Next proposes the rest of the current rung; when the rung is answered it
// promotes the best and goes on. Call it after Tell of the last batch.
func (h *halving) Next(n int) []Point {
	if h.proposed == len(h.members) && h.allAnswered() {
		h.advance()
	}
	var out []Point
	for ; h.proposed < len(h.members) && len(out) < n; h.proposed++ {
		i := h.members[h.proposed]
		h.markSeen(i)
		p := h.sp.Point(i)
		p.Fidelity = HalvingRungs[h.rung]
		out = append(out, p)
	}
	return out
}

func (h *halving) allAnswered() bool {
	for _, a := range h.answered {
		if !a {
			return false
		}
	}
	return true
}

// advance promotes the best of an answered rung, or starts a bracket.
func (h *halving) advance() {
	if len(h.members) > 0 && h.rung+1 < len(HalvingRungs) {
		order := make([]int, len(h.members))
		for k := range order {
			order[k] = k
		}
		sort.SliceStable(order, func(a, b int) bool { return h.costs[order[a]] < h.costs[order[b]] })
		keep := int(math.Ceil(float64(len(order)) / HalvingEta))
		var next []int
		for _, k := range order[:keep] {
			if !math.IsInf(h.costs[k], 1) {
				next = append(next, h.members[k])
			}
		}
		if len(next) > 0 {
			h.start(h.rung+1, next)
			return
		}
	}
	var fresh []int
	for len(fresh) < min(h.bracket, h.nUnseen) {
		i := h.randomUnseen()
		if i < 0 {
			break
		}
		h.markSeen(i)
		fresh = append(fresh, i)
	}
	h.start(0, fresh)
}

func (h *halving) start(rung int, members []int) {
	h.rung, h.members, h.proposed = rung, members, 0
	h.costs = make([]float64, len(members))
	h.answered = make([]bool, len(members))
	for k := range h.costs {
		h.costs[k] = math.Inf(1)
	}
}

func (h *halving) Tell(rs []Result) {
	pos := h.record(rs)
	for k, r := range rs {
		if pos[k] < 0 || r.Point.Fidelity != HalvingRungs[h.rung] {
			continue
		}
		for m, i := range h.members {
			if i == pos[k] {
				h.answered[m] = true
				if r.usable() {
					h.costs[m] = r.Cost
				}
			}
		}
	}
}
