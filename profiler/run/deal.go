package run

import (
	"cmp"
	"math/bits"
	"slices"
)

// ShapeGroup is the jobs of one shape of a sweep: their indices in the
// sweep's stream, in stream order, and the cost of each (Costs[k] is
// Jobs[k]'s, in any unit, ≥ 0).
type ShapeGroup struct {
	Jobs  []int
	Costs []int64
}

// DealGroups deals a sweep's shape groups to n shards: out[g][k] is the
// shard of groups[g].Jobs[k].
//
// A group that costs no more than the sweep's total over n (a shard's
// share) stays whole. The dearer groups, largest first, are laid end to
// end and cut at every multiple of a shard's share (each job goes to the
// cut its cost's midpoint falls in), so that each such cut fills a shard
// and a group is cut only where it must be: with fewer shapes than
// shards every shard still gets work. The pieces, largest first (the
// lowest first stream index on a tie), each go to the shard with the
// least cost so far (the lowest index on a tie).
//
// It is a pure function of its arguments: every shard that calls it with
// the same groups gets the same partition. Costs are integers so that the
// partition does not depend on how a platform rounds floating point;
// their sum must stay below 2⁶². With a total cost of zero every job
// counts as 1. Time and memory grow with the jobs, not with n.
func DealGroups(groups []ShapeGroup, n int) [][]int {
	d := dealer{groups: groups, n: uint64(max(n, 1))}
	for _, g := range groups {
		for _, c := range g.Costs {
			d.total += uint64(max(c, 0))
		}
	}
	if d.total == 0 {
		d.unit = true
		for _, g := range groups {
			d.total += uint64(len(g.Jobs))
		}
	}
	var pieces, dear []piece
	for gi, g := range groups {
		if len(g.Jobs) == 0 {
			continue
		}
		p := piece{first: g.Jobs[0]}
		for k := range g.Jobs {
			p.slots = append(p.slots, slot{gi, k})
			p.cost += d.cost(gi, k)
		}
		if d.exceeds(p.cost) {
			dear = append(dear, p)
		} else {
			pieces = append(pieces, p)
		}
	}
	pieces = append(pieces, d.cut(dear)...)
	slices.SortStableFunc(pieces, byCost)
	out := make([][]int, len(groups))
	for gi, g := range groups {
		out[gi] = make([]int, len(g.Jobs))
	}
	shards := loads{n: int(d.n)}
	for _, p := range pieces {
		to := shards.take(p.cost)
		for _, s := range p.slots {
			out[s.group][s.pos] = to
		}
	}
	return out
}

// dealer is what DealGroups' steps share.
type dealer struct {
	groups []ShapeGroup
	n      uint64
	total  uint64
	unit   bool // every job costs 1 (the costs are all 0)
}

func (d *dealer) cost(g, k int) uint64 {
	if d.unit {
		return 1
	}
	return uint64(max(d.groups[g].Costs[k], 0))
}

// exceeds says whether c is more than a shard's share, total/n: c·n >
// total, in 128 bits.
func (d *dealer) exceeds(c uint64) bool {
	hi, lo := bits.Mul64(c, d.n)
	return hi > 0 || lo > d.total
}

// cut lays the dear groups end to end, largest first, and cuts them at
// every multiple of a shard's share: a job whose cost's midpoint lies at
// x from the start goes to cut ⌊x·n/total⌋ (the products in 128 bits).
// A cut that holds jobs of two groups is one piece: it goes to one shard.
func (d *dealer) cut(dear []piece) []piece {
	slices.SortStableFunc(dear, byCost)
	var cuts []piece
	var before uint64 // cost of the jobs laid before this one
	for _, g := range dear {
		for _, s := range g.slots {
			c := d.cost(s.group, s.pos)
			hi, lo := bits.Mul64(d.n, 2*before+c)
			at, _ := bits.Div64(hi, lo, 2*d.total) // 2·before+c ≤ 2·total: at most n
			for uint64(len(cuts)) <= at {
				cuts = append(cuts, piece{})
			}
			p := &cuts[at]
			if len(p.slots) == 0 {
				p.first = d.groups[s.group].Jobs[s.pos]
			}
			p.slots = append(p.slots, s)
			p.cost += c
			before += c
		}
	}
	return slices.DeleteFunc(cuts, func(p piece) bool { return len(p.slots) == 0 })
}

// piece is jobs that go to one shard together: a whole group, or a cut
// of the dear ones. first is the stream index of its first job (the
// tie-break between pieces of equal cost).
type piece struct {
	slots []slot
	first int
	cost  uint64
}

// slot is job pos of group group.
type slot struct{ group, pos int }

// byCost orders pieces largest first, then by their first job.
func byCost(a, b piece) int {
	if c := cmp.Compare(b.cost, a.cost); c != 0 {
		return c
	}
	return cmp.Compare(a.first, b.first)
}

// loads are the shards' costs so far: a min-heap, by (cost, index), of
// the shards given a piece, and the untouched shards next..n-1 (cost 0).
type loads struct {
	heap []load
	next int
	n    int
}

type load struct {
	cost  uint64
	shard int
}

func (a load) less(b load) bool {
	return a.cost < b.cost || a.cost == b.cost && a.shard < b.shard
}

// take adds cost to the least-loaded shard (the lowest index on a tie)
// and returns it.
func (l *loads) take(cost uint64) int {
	if l.next < l.n && (len(l.heap) == 0 || (load{0, l.next}).less(l.heap[0])) {
		l.heap = append(l.heap, load{cost, l.next})
		l.next++
		l.up(len(l.heap) - 1)
		return l.next - 1
	}
	to := l.heap[0].shard
	l.heap[0].cost += cost
	l.down(0)
	return to
}

func (l *loads) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !l.heap[i].less(l.heap[p]) {
			return
		}
		l.heap[i], l.heap[p] = l.heap[p], l.heap[i]
		i = p
	}
}

func (l *loads) down(i int) {
	for {
		m := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(l.heap) && l.heap[c].less(l.heap[m]) {
				m = c
			}
		}
		if m == i {
			return
		}
		l.heap[i], l.heap[m] = l.heap[m], l.heap[i]
		i = m
	}
}
