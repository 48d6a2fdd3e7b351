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
		{"  budget: 0", "search.budget", "allows no evaluation: give at least 1"},
		{"  budget: [1, 2]", "", "budget"},
		{"  objective: p99_us", "search.objective", `objective "p99_us" is not a column`},
		{"  min_improvement: 2", "search.min_improvement", "fraction between 0"},
		{"  top: 0", "search.top", "at least 1"},
		{"  top: two", "search.top", "top=two"},
		{"  seed: -1", "search.seed", "seed -1: use a whole number"},
		{"  shapes: []", "search.shapes", "empty list"},
		{"  shapes:\n    - {N: 10}\n    - {N: 10}", "search.shapes[1]", "list each shape once"},
		{"  shapes:\n    - {M: 10}", "search.shapes[0].M", `no dim "M"`},
		{"  table: out.txt", "search.table", ".csv or .json"},
		{"  budgit: 5", "", "unknown field \"budgit\": check the spelling; did you mean budget? the keys at search are"},
		{"", "", "unknown field \"serch\": check the spelling; did you mean search? the keys at the top level are backend, defaults, device_limits, sweeps, search"},
	} {
		head := "search:\n" + c.block
		if c.block == "" {
			head = "serch:\n  budget: 5"
		}
		src := head + "\nsweeps:\n  - kernel: test_scale\n    knobs: {WG: [32, 64]}\n"
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

// The streaming loader carries the block; with shapes it makes one entry
// per shape (Size counts them before where:), and Makes answers for a spec
// without the sweep expanded: in the sweep, filtered out, another shape.
func TestStreamSearchAndMakes(t *testing.T) {
	st, err := ParseStream("s.yaml", []byte(searchSweep), profiler.DefaultOptions(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Search == nil || st.Search.Strategy != "evolution" || len(st.Search.Shapes) != 2 {
		t.Fatalf("Search = %+v", st.Search)
	}
	if st.Size() != 6 {
		t.Errorf("Size %d, want 2 shapes × 3 WG", st.Size())
	}
	spec := func(wg, n int) profiler.Spec {
		s := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}
		f, _ := profiler.Lookup("test_scale")
		return s.WithDefaults(f.Schema())
	}
	for _, c := range []struct {
		wg, n int
		want  bool
	}{{64, 1000, true}, {128, 4000, true}, {128, 1000, false}, {64, 2000, false}, {256, 4000, false}} {
		if got, err := st.Makes(spec(c.wg, c.n)); err != nil || got != c.want {
			t.Errorf("Makes(WG=%d N=%d) = %v, %v; want %v", c.wg, c.n, got, err, c.want)
		}
	}
}

// TestUnknownShapeDimsAllReported: every dim of every shape of a search
// block that the kernel lacks is named in one error, in file order, with
// the entry's own unknown names, each at its file:line:col with its hint.
// One search block checked for two entries of a kernel says each once.
func TestUnknownShapeDimsAllReported(t *testing.T) {
	checkNameErrors(t, []nameErrorCase{
		{"every unknown dim of every shape, with the entries' names",
			"search:\n  shapes:\n    - {M: 10, NN: 5}\n    - {N: 10, K: 3}\nsweeps:\n  - kernel: test_scale\n    knobs: {WGG: 32}\n  - kernel: test_scale\n    knobs: {WG: 64}\n",
			[]string{
				`s.yaml:3:11: search.shapes[0].M: test_scale has no dim "M": dims are N`,
				`s.yaml:3:19: search.shapes[0].NN: test_scale has no dim "NN": dims are N`,
				`s.yaml:4:18: search.shapes[1].K: test_scale has no dim "K": dims are N`,
				`s.yaml:7:18: sweeps[0].knobs.WGG: test_scale has no knob "WGG": did you mean WG? knobs are WG`,
			}},
		{"a knob written as a shape's dim",
			"search:\n  shapes:\n    - {N: 10, WG: 3, broken: 1}\nsweeps:\n  - kernel: test_scale\n",
			[]string{
				`s.yaml:3:19: search.shapes[0].WG: test_scale has no dim "WG": WG is a knob (put it under knobs:); dims are N`,
				`s.yaml:3:30: search.shapes[0].broken: test_scale has no dim "broken": broken is a flag (put it under flags:); dims are N`,
			}},
	})
}
