package tune

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/mltop/mltop/cpu"
	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
)

// cpuLandscape is rmsnorm_bwd f32, rows=64 D=512, over WG × VEC × RPG ×
// RB (ST=0) as `mltop --config … --csv` recorded it on the CPU backend:
// 384 specs, 195 ok and 189 invalid by the family's rules.
const cpuLandscape = "testdata/rmsnorm_bwd_cpu.csv"

var cpuKnobs = []search.Knob{
	{Name: "WG", Values: []int{32, 64, 128, 256, 512, 1024}},
	{Name: "VEC", Values: []int{1, 2, 4, 8}},
	{Name: "RPG", Values: []int{1, 4, 16, 64}},
	{Name: "RB", Values: []int{1, 2, 4, 8}},
}

func cpuReplay(t *testing.T) (*Replay, float64) {
	t.Helper()
	b, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ReplayCSV(b.Info(), cpuLandscape)
	if err != nil {
		t.Fatal(err)
	}
	rows := must(sink.ReadCSV(cpuLandscape))
	best := math.Inf(1)
	for _, r := range rows {
		if r.Status == profiler.StatusOK {
			best = min(best, r.Stats.Median)
		}
	}
	return rep, best
}

func cpuConfig(strategy, budget string, seed uint64) Config {
	return Config{Base: profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.F32, Knobs: map[string]int{"ST": 0}, Dims: map[string]int{"rows": 64, "D": 512}},
		Knobs: cpuKnobs, Strategy: strategy, Seed: seed, Budget: must(search.ParseBudget(budget)), Options: profiler.DefaultOptions()}
}

// Replaying a CSV the CPU backend recorded: the family's rules refuse the
// invalid rows before anything runs, and an exhaustive search finds the
// file's best row.
func TestReplayCPULandscapeExhaustive(t *testing.T) {
	rep, best := cpuReplay(t)
	out, err := Search(context.Background(), rep, cpuConfig("tpe", "1000", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Exhaustive || out.Space != 195 || out.Excluded != 189 {
		t.Errorf("exhaustive %v over %d configurations (%d refused): want 195 allowed and 189 refused by the rules", out.Exhaustive, out.Space, out.Excluded)
	}
	if out.Winner().Stats.Median != best {
		t.Errorf("winner %.1f ns, the file's best %.1f", out.Winner().Stats.Median, best)
	}
}

// On the recorded landscape TPE and evolution with a fifth of the budget
// end within 5% of the best in the median over seeds, and nearer than
// random search.
func TestReplayCPULandscapeSearch(t *testing.T) {
	rep, best := cpuReplay(t)
	gaps := func(strategy string) float64 {
		var g []float64
		for seed := range uint64(9) {
			out, err := Search(context.Background(), rep, cpuConfig(strategy, "20%", seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			g = append(g, out.Winner().Stats.Median/best-1)
		}
		slices.Sort(g)
		return g[len(g)/2]
	}
	random := gaps("random")
	for _, s := range []string{"tpe", "evolution"} {
		g := gaps(s)
		t.Logf("%s: median gap %.1f%% (random %.1f%%)", s, 100*g, 100*random)
		if g > 0.05 || g > random {
			t.Errorf("%s: median gap %.1f%%: want ≤ 5%% and no worse than random's %.1f%%", s, 100*g, 100*random)
		}
	}
}
