package sweep

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/tune"
)

const searchSweep = `backend: cpu
search:
  strategy: evolutionary
  budget: 25%
  objective: gbps
  min_improvement: 0.01
  top: 2
  seed: 7
  shapes:
    - {N: 1000}
    - {N: 4000}
  header: out.h
sweeps:
  - kernel: test_scale
    knobs:
      WG: [32, 64, 128]
    where:
      - "WG * 10 <= N"
`

func TestParseSearchBlock(t *testing.T) {
	sw, err := Parse("s.yaml", []byte(searchSweep), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := Search{Strategy: "evolution", Budget: search.Budget{Fraction: 0.25}, Objective: tune.GBps, MinImprovement: 0.01, Top: 2, Seed: 7, Header: "out.h"}
	got := *sw.Search
	if len(got.Shapes) != 2 || got.Shapes[1]["N"] != 4000 {
		t.Errorf("shapes %v", got.Shapes)
	}
	got.Shapes = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("search = %+v, want %+v", got, want)
	}
	// Each shape replaces the dims, and where: sees the shape's N: 1000
	// keeps WG 32 and 64, 4000 all three.
	n := map[int]int{}
	for _, j := range sw.Jobs {
		n[j.Spec.Dims["N"]]++
	}
	if len(sw.Jobs) != 5 || n[1000] != 2 || n[4000] != 3 {
		t.Errorf("jobs per N: %v (total %d), want 2 at 1000 and 3 at 4000", n, len(sw.Jobs))
	}
	plain, err := Parse("s.yaml", []byte(goodSweep), profiler.DefaultOptions())
	if err != nil || plain.Search != nil {
		t.Errorf("a sweep without search: has Search %+v (%v)", plain.Search, err)
	}
}

func TestParseSearchErrors(t *testing.T) {
	for _, c := range []struct{ block, field, msg string }{
		{"  strategy: annealing", "search.strategy", `unknown strategy "annealing"`},
		{"  budget: 0", "search.budget", "number of evaluations"},
		{"  budget: [1, 2]", "", "budget"},
		{"  objective: p99_us", "search.objective", `objective "p99_us" is not a column`},
		{"  min_improvement: 2", "search.min_improvement", "fraction between 0"},
		{"  top: 0", "search.top", "at least 1"},
		{"  shapes: []", "search.shapes", "empty list"},
		{"  shapes:\n    - {N: 10}\n    - {N: 10}", "search.shapes[1]", "list each shape once"},
		{"  shapes:\n    - {M: 10}", "search.shapes[0].M", `no dim "M"`},
		{"  table: out.txt", "search.table", ".csv or .json"},
		{"  budgit: 5", "", "unknown field"},
	} {
		src := "search:\n" + c.block + "\nsweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64]}\n"
		_, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions())
		var ie *profiler.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.msg) || (c.field != "" && ie.Field != c.field) {
			t.Errorf("%q: %v (field %q), want %q at %q", c.block, err, fieldOf(ie), c.msg, c.field)
		}
	}
}

func fieldOf(ie *profiler.InputError) string {
	if ie == nil {
		return ""
	}
	return ie.Field
}
