package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

// shapeOf is the shape group of a spec, as the deal keys it (the seed is
// the same in these sweeps).
func shapeOf(s profiler.Spec) string { return s.ShapeKey() }

// The shards of a small sweep, each run on its own device with its own
// flags, run every spec exactly once between them; a shape is on one
// shard unless the plan says it was cut; each shard announces its own
// count, dealt by shape.
func TestSweepShardsDealShapes(t *testing.T) {
	for _, c := range []struct {
		name string
		yaml string
		n    int
		cut  bool // some shape must be cut over several shards
		// apart: the shapes of these N must be on different shards (their
		// cost, not their count of specs, asks it)
		apart []int
	}{
		{"many shapes", "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, bf16]\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 1000, 10000, 100000, 1000000]}\n", 3, false, nil},
		{"one shape", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: 5000}\n", 3, true, nil},
		{"fewer shapes than shards", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 200]}\n", 4, true, nil},
		{"uneven costs", "sweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 200, 300]}\n  - kernel: test_scale\n    options: {time_limit: 60}\n    knobs: {WG: [32, 64]}\n    dims: {N: [500, 600]}\n", 2, false, []int{500, 600}},
		{"one shard", scaleSweep, 1, false, nil},
		{"invalid specs among them", scaleSweep, 4, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := sweep.ParseStream("s.yaml", []byte(c.yaml), profiler.DefaultOptions(), sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			all, _, err := st.Jobs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ran := map[string]int{}
			on := map[string]map[int]bool{} // shape → shards
			split := -1
			for i := range c.n {
				dev := &fakeDevice{name: fmt.Sprint("gpu", i)}
				var plan run.SweepPlan
				cfg := run.SweepConfig{Source: st, Exec: dev, Shard: sweep.Shard{Index: i, Count: c.n},
					Announce: func(p run.SweepPlan) error { plan = p; return nil }}
				if i%2 == 1 { // other flags on this shard: the deal must not change
					cfg.Options = func(o profiler.Options) profiler.Options { o.Stop.MaxTime *= 7; return o }
				}
				if _, err := run.Sweep(context.Background(), cfg); err != nil {
					t.Fatal(err)
				}
				if got := plan.Specs + plan.Invalid + plan.Skipped; got != len(dev.ran) {
					t.Errorf("shard %d announced %d specs, ran %d", i, got, len(dev.ran))
				}
				if c.n > 1 && (!plan.Deal.ByShape || plan.Deal.Part != i || plan.Deal.Parts != c.n) {
					t.Errorf("shard %d: deal %+v, want by shape", i, plan.Deal)
				}
				if split >= 0 && plan.Deal.Split != split {
					t.Errorf("shard %d says %d shapes were cut, shard 0 %d", i, plan.Deal.Split, split)
				}
				split = plan.Deal.Split
				shapes := map[string]bool{}
				for _, k := range dev.ran {
					ran[k]++
					for _, j := range all {
						if j.Spec.Key() == k {
							shapes[shapeOf(j.Spec)] = true
							if on[shapeOf(j.Spec)] == nil {
								on[shapeOf(j.Spec)] = map[int]bool{}
							}
							on[shapeOf(j.Spec)][i] = true
						}
					}
				}
				if c.n > 1 && len(shapes) != plan.Deal.Mine {
					t.Errorf("shard %d ran %d shapes, says %d", i, len(shapes), plan.Deal.Mine)
				}
			}
			for _, j := range all {
				if ran[j.Spec.Key()] != 1 {
					t.Errorf("%s ran %d times over %d shards", j.Spec.Key(), ran[j.Spec.Key()], c.n)
				}
			}
			cut := 0
			for _, shards := range on {
				if len(shards) > 1 {
					cut++
				}
			}
			if c.n > 1 && cut != split {
				t.Errorf("%d shapes are on several shards, the plan says %d", cut, split)
			}
			if len(c.apart) == 2 {
				shapeOfN := func(n int) string {
					for _, j := range all {
						if j.Spec.Dims["N"] == n {
							return shapeOf(j.Spec)
						}
					}
					t.Fatalf("no spec has N=%d", n)
					return ""
				}
				a, b := shapeOfN(c.apart[0]), shapeOfN(c.apart[1])
				if len(on[a]) == 0 || len(on[b]) == 0 {
					t.Fatalf("N=%d ran on %v, N=%d on %v", c.apart[0], on[a], c.apart[1], on[b])
				}
				for s := range on[a] {
					if on[b][s] {
						t.Errorf("the dear shapes N=%d and N=%d are both on shard %d", c.apart[0], c.apart[1], s)
					}
				}
			}
			if c.cut != (cut > 0) {
				t.Errorf("%d shapes cut; want some: %v", cut, c.cut)
			}
		})
	}
}

// listSource is n jobs of distinct shapes that says it has size
// combinations.
type listSource struct {
	n    int
	size int64
}

func (l listSource) job(i int) profiler.Job {
	return profiler.Job{Spec: scaleSpec(100+i, 32), Options: profiler.DefaultOptions()}
}

func (l listSource) Walk(ctx context.Context, yield func(int, profiler.Job) bool) error {
	for i := range l.n {
		if !yield(i, l.job(i)) {
			return nil
		}
	}
	return nil
}
func (l listSource) Size() int64 { return l.size }
func (l listSource) Sample(n int, _ uint64) ([]profiler.Job, error) {
	var out []profiler.Job
	for i := range n {
		out = append(out, l.job(i%l.n))
	}
	return out, nil
}

// A sweep too large to hold is dealt spec by spec (k mod n): one of more
// than ShapeDealCombos combinations without walking it, one of more than
// OrderLimit specs after counting them; a smaller one by shape.
func TestShardsOfLargeSweepsDealInTurn(t *testing.T) {
	for _, c := range []struct {
		name    string
		src     listSource
		byShape bool
	}{
		{"small", listSource{n: 40, size: 40}, true},
		{"many combinations", listSource{n: 40, size: run.ShapeDealCombos + 1}, false},
		{"many specs", listSource{n: run.OrderLimit + 1, size: run.OrderLimit + 1}, false},
		{"OrderLimit specs", listSource{n: run.OrderLimit, size: run.ShapeDealCombos}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := run.PlanSweep(context.Background(), run.SweepConfig{Source: c.src, Shard: sweep.Shard{Index: 1, Count: 3}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Deal.ByShape != c.byShape || p.Deal.Part != 1 || p.Deal.Parts != 3 {
				t.Errorf("deal %+v, want by shape %v", p.Deal, c.byShape)
			}
			// equal costs, distinct shapes: by shape or in turn, a third each
			if want := c.src.n / 3; p.Exact && (p.Specs < want || p.Specs > want+1) {
				t.Errorf("shard 1 of 3 holds %d of %d specs", p.Specs, c.src.n)
			}
		})
	}
}

// A shard dealt by shape whose count walk is too slow is estimated from a
// sample scaled by its own share of the specs, not by 1/n: the dear specs
// leave the shard that holds them fewer.
func TestSampledShardScalesByItsShare(t *testing.T) {
	for part := range 2 {
		sh := sweep.Shard{Index: part, Count: 2}
		exact, err := run.PlanSweep(context.Background(), run.SweepConfig{Source: &slowSource{n: 1000, dear: 11}, Shard: sh}, nil, nil)
		if err != nil || !exact.Exact {
			t.Fatalf("exact plan %+v, %v", exact, err)
		}
		// walk 1 deals, walk 2 counts: it is the slow one
		sampled, err := run.PlanSweep(context.Background(), run.SweepConfig{Source: &slowSource{n: 1000, dear: 11, slowWalk: 2}, Shard: sh}, nil, nil)
		if err != nil || sampled.Exact {
			t.Fatalf("sampled plan %+v, %v", sampled, err)
		}
		if sampled.Specs != exact.Specs || exact.Specs == 500 {
			t.Errorf("shard %d: sampled %d specs, counted %d (of 1000, the dear ones make it uneven)", part, sampled.Specs, exact.Specs)
		}
	}
}
