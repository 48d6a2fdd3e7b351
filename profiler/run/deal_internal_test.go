package run

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// FuzzDealExactlyOnce: over random group sizes, costs and shard counts,
// the shards 0..n-1 of a sweep own each of its stream indices exactly
// once, a group's jobs sit on one shard unless it costs more than a
// shard's share, and the shards' shape counts add up.
func FuzzDealExactlyOnce(f *testing.F) {
	for _, s := range [][3]uint64{{1, 1, 4}, {2, 9, 3}, {3, 40, 8}, {4, 1, 1}, {5, 200, 16}, {6, 0, 2}} {
		f.Add(s[0], uint16(s[1]), uint8(s[2]))
	}
	f.Fuzz(func(t *testing.T, seed uint64, jobs uint16, n8 uint8) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		n := 1 + int(n8%20)
		all := int(jobs % 2000)
		// Stream indices dealt to groups at random, in stream order
		// within each group; costs from 0 (a refused spec) to large.
		groups := make([]ShapeGroup, 1+r.IntN(1+all/3))
		var total int64
		for i := range all {
			g := &groups[r.IntN(len(groups))]
			c := int64(r.IntN(4)) * int64(r.IntN(1_000_000))
			g.Jobs = append(g.Jobs, i)
			g.Costs = append(g.Costs, c)
			total += c
		}
		owner := make([]int, all)
		for i := range owner {
			owner[i] = -1
		}
		mine, split := 0, -1
		for part := range n {
			d := dealt(groups, all, part, n)
			for i := range all {
				if !d.Owns(i) {
					continue
				}
				if owner[i] >= 0 {
					t.Fatalf("index %d on shards %d and %d of %d", i, owner[i], part, n)
				}
				owner[i] = part
			}
			if d.Owns(all) || d.Owns(-1) {
				t.Fatalf("shard %d owns an index outside the sweep", part)
			}
			mine += d.deal.Mine
			if split >= 0 && d.deal.Split != split {
				t.Fatalf("shards disagree on the split shapes: %d, %d", split, d.deal.Split)
			}
			split = d.deal.Split
		}
		for i, o := range owner {
			if o < 0 {
				t.Fatalf("index %d of %d is on no shard of %d", i, all, n)
			}
		}
		holders := 0
		for _, g := range groups {
			on := map[int]bool{}
			var c int64
			for k, i := range g.Jobs {
				on[owner[i]] = true
				c += g.Costs[k]
			}
			holders += len(on)
			if len(on) > 1 && total > 0 && c*int64(n) <= total {
				t.Fatalf("a group of cost %d (total %d, %d shards) is on %d shards", c, total, n, len(on))
			}
		}
		if mine != holders {
			t.Fatalf("the shards count %d shapes between them, the groups are on %d", mine, holders)
		}
	})
}

// A shape the deal gave one shard is claimed in runs of ClaimUnitSpecs of
// its specs (in the sweep's order), so another shard can take the tail of
// a big shape; a shape cut over two shards is a unit on each.
func TestClaimUnitsAreRunsOfAShape(t *testing.T) {
	job := func(n int) profiler.Job {
		return profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": n}}}
	}
	var jobs []profiler.Job
	var to []int
	for i := range 20 { // shape A: 20 specs on shard 0, interleaved with shape B on shard 1
		jobs, to = append(jobs, job(100)), append(to, 0)
		if i < 3 {
			jobs, to = append(jobs, job(200)), append(to, 1)
		}
	}
	jobs, to = append(jobs, job(200)), append(to, 0) // B's last spec went to shard 0
	d := &dealtShard{deal: ShardDeal{Part: 0, Parts: 2}, to: to, jobs: jobs}
	keys := d.unitKeys()
	units := map[string][]int{}
	for i := range jobs {
		units[keys[i]] = append(units[keys[i]], i)
	}
	var sizes []int
	for _, is := range units {
		sizes = append(sizes, len(is))
	}
	slices.Sort(sizes)
	// A: 8, 8, 4; B: 3 on shard 1, 1 on shard 0
	if want := []int{1, 3, 4, 8, 8}; !slices.Equal(sizes, want) {
		t.Errorf("unit sizes %v, want %v", sizes, want)
	}
	if keys[0] != keys[2] || keys[0] == keys[len(jobs)-2] {
		t.Errorf("A's first specs share a unit, its last do not: %q %q %q", keys[0], keys[2], keys[len(jobs)-2])
	}
}
