package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// testKnobs span 8·6·6·5 = 1440 configurations, about 1250 after the
// synthetic constraint.
var testKnobs = []Knob{
	{"WG", []int{32, 64, 128, 256, 512, 1024, 2048, 4096}},
	{"VEC", []int{1, 2, 4, 8, 16, 32}},
	{"RPG", []int{1, 2, 4, 8, 16, 32}},
	{"RB", []int{1, 2, 4, 8, 16}},
}

// drive runs s against l until it has spent budget evaluations (a brief
// measurement costs its fidelity) and returns the best full-fidelity cost.
func drive(t *testing.T, s Strategy, sp *Space, l *Landscape, budget float64, batch int) (best float64, spent float64) {
	t.Helper()
	best = math.Inf(1)
	seen := map[string]bool{}
	for spent < budget {
		ps := s.Next(batch)
		if len(ps) == 0 {
			break
		}
		var rs []Result
		for _, p := range ps {
			if spent >= budget {
				break
			}
			key := fmt.Sprint(p.Index, p.Fidelity)
			if seen[key] {
				t.Fatalf("%s proposed %s at fidelity %g twice", s.Name(), sp.Describe(p), p.Fidelity)
			}
			seen[key] = true
			spent += p.Fidelity
			r := l.Evaluate(sp, p)
			if r.Point.Fidelity >= 1 && !r.Invalid && r.Cost < best {
				best = r.Cost
			}
			rs = append(rs, r)
		}
		s.Tell(rs)
	}
	return best, spent
}

func gapsOver(t *testing.T, name string, seeds int, frac float64) (gaps []float64, size int) {
	for seed := range uint64(seeds) {
		l := Synthetic(seed+1, testKnobs)
		sp, err := NewSpace(testKnobs, l.Allow)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := l.Best(sp)
		budget := Budget{Fraction: frac}.EvalsFor(sp.Size())
		s, err := New(name, sp, seed, budget)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := drive(t, s, sp, l, float64(budget), 4)
		gaps = append(gaps, got/want-1)
		size = sp.Size()
	}
	return gaps, size
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// TPE and evolution reach within 2% of the exhaustive best with 10% of
// the evaluations, in the median over 10 seeded landscapes, and beat random
// search at the same budget.
func TestStrategiesFindNearBestWithTenPercent(t *testing.T) {
	randGaps, size := gapsOver(t, "random", 10, 0.10)
	if size < 1000 {
		t.Fatalf("the landscape has %d configurations: the test wants at least 1000", size)
	}
	for _, name := range []string{"tpe", "evolution"} {
		gaps, _ := gapsOver(t, name, 10, 0.10)
		t.Logf("%s: median gap %.2f%% (random %.2f%%), gaps %.3f", name, 100*median(gaps), 100*median(randGaps), gaps)
		if median(gaps) > 0.02 {
			t.Errorf("%s: median gap to the best %.2f%% > 2%% (gaps %.3f)", name, 100*median(gaps), gaps)
		}
		if median(gaps) >= median(randGaps) {
			t.Errorf("%s: median gap %.2f%% does not beat random's %.2f%%", name, 100*median(gaps), 100*median(randGaps))
		}
	}
}

// Successive halving spends most of its budget on brief measurements and
// still ends near the best.
func TestHalvingPromotesContenders(t *testing.T) {
	gaps, _ := gapsOver(t, "halving", 10, 0.10)
	if median(gaps) > 0.05 {
		t.Errorf("halving: median gap %.2f%% > 5%% (gaps %.3f)", 100*median(gaps), gaps)
	}
	l := Synthetic(3, testKnobs)
	sp, _ := NewSpace(testKnobs, l.Allow)
	s, _ := New("halving", sp, 1, 90)
	brief, full := 0, 0
	for range 20 {
		ps := s.Next(100)
		var rs []Result
		for _, p := range ps {
			if p.Fidelity < 1 {
				brief++
			} else {
				full++
			}
			rs = append(rs, l.Evaluate(sp, p))
		}
		s.Tell(rs)
	}
	if brief <= 3*full || full == 0 {
		t.Errorf("halving measured %d briefly and %d in full: want most brief, some full", brief, full)
	}
}

// Same seed, same proposals; another seed, other proposals.
func TestStrategiesAreDeterministic(t *testing.T) {
	l := Synthetic(7, testKnobs)
	sp, _ := NewSpace(testKnobs, l.Allow)
	for _, name := range Names {
		run := func(seed uint64) []string {
			s, _ := New(name, sp, seed, 60)
			var got []string
			for range 10 {
				ps := s.Next(6)
				var rs []Result
				for _, p := range ps {
					got = append(got, sp.Describe(p))
					rs = append(rs, l.Evaluate(sp, p))
				}
				s.Tell(rs)
			}
			return got
		}
		a, b, c := run(1), run(1), run(2)
		if !slices.Equal(a, b) {
			t.Errorf("%s: two runs with seed 1 differ", name)
		}
		if name != "exhaustive" && slices.Equal(a, c) {
			t.Errorf("%s: seeds 1 and 2 propose the same points", name)
		}
	}
}

// Points refused at run time are never proposed again, and told points
// (a resumed search) are not proposed.
func TestInvalidAndToldPointsAreNotProposedAgain(t *testing.T) {
	knobs := testKnobs[:2]
	sp, _ := NewSpace(knobs, nil)
	for _, name := range Names {
		s, _ := New(name, sp, 5, sp.Size())
		told := []Result{{Point: sp.Point(0), Invalid: true}, {Point: sp.Point(1), Cost: 5}}
		s.Tell(told)
		n := 0
		for {
			ps := s.Next(7)
			if len(ps) == 0 {
				break
			}
			var rs []Result
			for _, p := range ps {
				i, _ := sp.find(p.Index)
				if p.Fidelity >= 1 && (i == 0 || i == 1) {
					t.Fatalf("%s proposed told point %s", name, sp.Describe(p))
				}
				if p.Fidelity >= 1 {
					n++
				}
				rs = append(rs, Result{Point: p, Invalid: i%5 == 0, Cost: float64(i)})
			}
			s.Tell(rs)
			if n > 10*sp.Size() {
				t.Fatalf("%s does not stop", name)
			}
		}
		if name == "random" || name == "exhaustive" || name == "tpe" || name == "evolution" {
			if n != sp.Size()-2 {
				t.Errorf("%s measured %d points in full, want every other one of %d", name, n, sp.Size()-2)
			}
		}
	}
}

func TestNewSpace(t *testing.T) {
	sp, err := NewSpace(testKnobs[:2], func(v map[string]int) error {
		if v["WG"]*v["VEC"] > 1024 {
			return errors.New("too many")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Size()+sp.Excluded != 48 || sp.Excluded == 0 {
		t.Errorf("size %d + excluded %d: want 48 with some excluded", sp.Size(), sp.Excluded)
	}
	if i, ok := sp.Find(map[string]int{"WG": 64, "VEC": 4}); !ok || sp.Describe(sp.Point(i)) != "WG=64 VEC=4" {
		t.Errorf("Find WG=64 VEC=4: %d %v", i, ok)
	}
	if _, ok := sp.Find(map[string]int{"WG": 4096, "VEC": 32}); ok {
		t.Error("Find returned a refused configuration")
	}
	_, err = NewSpace(testKnobs, func(map[string]int) error { return errors.New("WG too large for this device") })
	if !errors.Is(err, ErrEmpty) || !containsAll(err.Error(), "1440", "WG=32 VEC=1 RPG=1 RB=1", "WG too large") {
		t.Errorf("empty space: %v", err)
	}
	if _, err := NewSpace([]Knob{{"X", nil}}, nil); err == nil {
		t.Error("a knob without values was accepted")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Budget
		size int
		n    int
	}{
		{"60", Budget{Evals: 60}, 1000, 60},
		{"5%", Budget{Fraction: 0.05}, 1000, 50},
		{"0.1", Budget{Fraction: 0.1}, 1001, 101},
		{"90s", Budget{Time: 90 * time.Second}, 400, 400},
		{"2m", Budget{Time: 2 * time.Minute}, 10, 10},
	} {
		b, err := ParseBudget(c.in)
		if err != nil || b != c.want || b.EvalsFor(c.size) != c.n {
			t.Errorf("ParseBudget(%q) = %+v, %v, evals %d: want %+v, %d", c.in, b, err, b.EvalsFor(c.size), c.want, c.n)
		}
	}
	if s, s60 := (Budget{Evals: 1}).String(), (Budget{Evals: 60}).String(); s != "1 evaluation" || s60 != "60 evaluations" {
		t.Errorf("budgets read %q and %q", s, s60)
	}
	for bad, want := range map[string]string{
		"": "use a number of evaluations", "abc": "use a number of evaluations", "5x": "use a number of evaluations",
		"0": "allows no evaluation: give at least 1", "-5": "allows no evaluation",
		"150%": "at most 100%", "0%": "more than 0%",
		"1.5": "nor a whole number of evaluations", "1.0": "nor a whole number",
		"0s": "leaves no time to search",
	} {
		if _, err := ParseBudget(bad); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseBudget(%q) = %v: want an error naming the value and %q", bad, err, want)
		}
	}
}

func TestUnknownStrategy(t *testing.T) {
	sp, _ := NewSpace(testKnobs[:1], nil)
	if _, err := New("annealing", sp, 1, 10); err == nil || !strings.Contains(err.Error(), "tpe, evolution") {
		t.Errorf("New(annealing) = %v", err)
	}
	for alias, want := range map[string]string{"bayes": "tpe", "Evolutionary": "evolution", "successive_halving": "halving"} {
		if got, ok := Canonical(alias); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v", alias, got, ok)
		}
	}
}
