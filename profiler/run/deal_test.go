package run_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mltop/mltop/profiler/run"
)

// groupsOf makes shape groups of the given sizes, every job of group g
// costing costs[g] (costs[0] when costs is shorter), their stream indices
// interleaved as a sweep file orders them (dims outer, knobs inner: a
// group's jobs are consecutive).
func groupsOf(sizes []int, costs ...int64) []run.ShapeGroup {
	var gs []run.ShapeGroup
	i := 0
	for g, n := range sizes {
		c := costs[0]
		if g < len(costs) {
			c = costs[g]
		}
		var sg run.ShapeGroup
		for range n {
			sg.Jobs = append(sg.Jobs, i)
			sg.Costs = append(sg.Costs, c)
			i++
		}
		gs = append(gs, sg)
	}
	return gs
}

// dealStats checks what every deal must hold and returns the shards'
// spec counts and costs: every shard index in range; a group held by one
// shard unless it costs more than the total over n; a shard's part of a
// cut group consecutive in the group.
func dealStats(t *testing.T, gs []run.ShapeGroup, n int, owners [][]int) (counts []int, loads []int64) {
	t.Helper()
	counts, loads = make([]int, n), make([]int64, n)
	var total int64
	for _, g := range gs {
		for _, c := range g.Costs {
			total += c
		}
	}
	cost := func(g run.ShapeGroup, k int) int64 { return g.Costs[k] }
	if total == 0 { // every job counts as 1
		cost = func(run.ShapeGroup, int) int64 { return 1 }
		for _, g := range gs {
			total += int64(len(g.Jobs))
		}
	}
	if len(owners) != len(gs) {
		t.Fatalf("%d owner lists for %d groups", len(owners), len(gs))
	}
	for gi, g := range gs {
		if len(owners[gi]) != len(g.Jobs) {
			t.Fatalf("group %d: %d owners for %d jobs", gi, len(owners[gi]), len(g.Jobs))
		}
		var sum int64
		seen := map[int]bool{}
		for k, s := range owners[gi] {
			if s < 0 || s >= n {
				t.Fatalf("group %d job %d on shard %d of %d", gi, k, s, n)
			}
			if k > 0 && s != owners[gi][k-1] && seen[s] {
				t.Errorf("group %d: shard %d holds two runs of it, not one chunk: %v", gi, s, owners[gi])
			}
			seen[s] = true
			counts[s]++
			loads[s] += cost(g, k)
			sum += cost(g, k)
		}
		if len(seen) > 1 && sum*int64(n) <= total {
			t.Errorf("group %d (cost %d of %d, n %d) cut over %d shards though it fits one", gi, sum, total, n, len(seen))
		}
	}
	return counts, loads
}

func TestDealGroups(t *testing.T) {
	for _, c := range []struct {
		name   string
		groups []run.ShapeGroup
		n      int
		counts []int   // specs per shard; nil: not checked
		slack  float64 // max shard cost ≤ (1+slack)·total/n; 0: not checked
	}{
		{"one shape, 100 specs, 4 shards", groupsOf([]int{100}, 7), 4, []int{25, 25, 25, 25}, 0.001},
		{"one shape on one shard", groupsOf([]int{100}, 7), 1, []int{100}, 0.001},
		{"many shapes, whole", groupsOf([]int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, 5), 4, []int{30, 30, 30, 30}, 0.001},
		{"fewer shapes than shards", groupsOf([]int{30, 30}, 2), 4, []int{15, 15, 15, 15}, 0.001},
		{"three shapes, eight shards", groupsOf([]int{40, 40, 40}, 1), 8, []int{15, 15, 15, 15, 15, 15, 15, 15}, 0.001},
		// total 120 over 2: 50 | 30+20 → 50+10 | 50+10
		{"uneven costs", groupsOf([]int{1, 1, 1, 1, 1}, 50, 30, 20, 10, 10), 2, []int{2, 3}, 0.001},
		// total 240 over 2: 12 specs (120) of the dear shape | its 8 others (80) + the 4 cheap shapes (40)
		{"dear shape cut, cheap ones whole", groupsOf([]int{20, 5, 5, 5, 5}, 10, 2, 2, 2, 2), 2, []int{12, 28}, 0.001},
		{"zero costs count as one each", groupsOf([]int{6, 6}, 0), 3, []int{4, 4, 4}, 0.001},
		{"more shards than specs", groupsOf([]int{2, 1}, 3), 5, []int{1, 1, 1, 0, 0}, 0},
		{"no specs", nil, 3, []int{0, 0, 0}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			owners := run.DealGroups(c.groups, c.n)
			counts, loads := dealStats(t, c.groups, c.n, owners)
			if c.counts != nil && !slices.Equal(counts, c.counts) {
				t.Errorf("specs per shard %v, want %v", counts, c.counts)
			}
			var total int64
			for _, l := range loads {
				total += l
			}
			if ideal := float64(total) / float64(c.n); c.slack > 0 && float64(slices.Max(loads)) > (1+c.slack)*ideal {
				t.Errorf("shard costs %v: the largest is more than %g × the ideal %g", loads, 1+c.slack, ideal)
			}
			if again := run.DealGroups(c.groups, c.n); !slices.EqualFunc(again, owners, slices.Equal) {
				t.Errorf("a second deal differs:\n%v\n%v", owners, again)
			}
		})
	}
}

// Many shapes of uneven sizes and costs: no shape is cut when each fits a
// shard, and the shards' costs are within 3% of the ideal.
func TestDealGroupsBalancesManyShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 50 {
		var gs []run.ShapeGroup
		i := 0
		for range 100 + r.IntN(200) {
			var g run.ShapeGroup
			c := int64(1 + r.IntN(1000))
			for range 1 + r.IntN(20) {
				g.Jobs = append(g.Jobs, i)
				g.Costs = append(g.Costs, c+int64(r.IntN(10)))
				i++
			}
			gs = append(gs, g)
		}
		n := 2 + r.IntN(7)
		_, loads := dealStats(t, gs, n, run.DealGroups(gs, n))
		var total int64
		for _, l := range loads {
			total += l
		}
		if ideal := float64(total) / float64(n); float64(slices.Max(loads)) > 1.03*ideal {
			t.Fatalf("iteration %d, %d shards: costs %v, ideal %g", iter, n, loads, ideal)
		}
	}
}
