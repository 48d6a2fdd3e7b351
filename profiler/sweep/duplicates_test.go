package sweep

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A value repeated in a list, or two entries that expand to the same spec
// with the same options, is one spec: it runs once, and the count of
// dropped jobs is on the sweep. The same spec with other options is not a
// duplicate.
func TestDuplicateAxisValuesAreOneSpec(t *testing.T) {
	for _, c := range []struct {
		name        string
		src         string
		jobs, dupes int
	}{
		{"no repeats", "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, bf16]\n    knobs:\n      WG: [32, 64]\n", 4, 0},
		{"repeated dtype and knob", "sweeps:\n  - kernel: test_scale\n    dtypes: [bf16, bf16]\n    knobs:\n      WG: [32, 32]\n", 1, 3},
		{"repeated dim", "sweeps:\n  - kernel: test_scale\n    dims:\n      N: [100, 1000, 100]\n", 2, 1},
		{"overlapping entries", "sweeps:\n  - kernel: test_scale\n    knobs:\n      WG: [32, 64]\n  - kernel: test_scale\n    knobs:\n      WG: [64, 128]\n", 3, 1},
		{"same spec, other options", "sweeps:\n  - kernel: test_scale\n    knobs:\n      WG: [32]\n  - kernel: test_scale\n    knobs:\n      WG: [32]\n    options:\n      cache: hot\n", 2, 0},
	} {
		sw, err := Parse("d.yaml", []byte(c.src), profiler.DefaultOptions())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(sw.Jobs) != c.jobs || sw.Duplicates != c.dupes {
			t.Errorf("%s: %d jobs, %d duplicates; want %d, %d", c.name, len(sw.Jobs), sw.Duplicates, c.jobs, c.dupes)
		}
		seen := map[string]int{}
		for _, j := range sw.Jobs {
			seen[j.Spec.Key()+string(j.Options.Cache)]++
		}
		for k, n := range seen {
			if n > 1 {
				t.Errorf("%s: %s runs %d times", c.name, k, n)
			}
		}
		note := sw.DuplicatesNote()
		if (c.dupes == 0) != (note == "") {
			t.Errorf("%s: note %q with %d duplicates", c.name, note, c.dupes)
		}
		if c.dupes > 0 && (!strings.Contains(note, "d.yaml") || !strings.HasSuffix(note, "\n")) {
			t.Errorf("%s: note %q", c.name, note)
		}
	}
}

// The first of the duplicates is kept, in order.
func TestDuplicatesKeepTheFirst(t *testing.T) {
	sw, err := Parse("d.yaml", []byte("sweeps:\n  - kernel: test_scale\n    knobs:\n      WG: [64, 32, 64, 128, 32]\n"), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, j := range sw.Jobs {
		got = append(got, j.Spec.Knobs["WG"])
	}
	if len(got) != 3 || got[0] != 64 || got[1] != 32 || got[2] != 128 {
		t.Errorf("WG order %v, want [64 32 128]", got)
	}
	if sw.DuplicatesNote() != "mltop: dropped 2 duplicate specs from d.yaml (a value repeated in a list, or sweeps that overlap): each spec runs once\n" {
		t.Errorf("note %q", sw.DuplicatesNote())
	}
}

// A Stream's banner line counts the duplicates of its last whole walk,
// or estimates them from its last sample ("about"), and says nothing
// before either or when there are none.
func TestStreamDuplicatesNote(t *testing.T) {
	const repeats = "sweeps:\n  - kernel: test_scale\n    dtypes: [bf16, bf16]\n    knobs:\n      WG: [32, 32]\n"
	const plain = "sweeps:\n  - kernel: test_scale\n    knobs:\n      WG: [32, 64]\n"
	open := func(src string) *Stream {
		st, err := ParseStream("d.yaml", []byte(src), profiler.DefaultOptions(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	walk := func(st *Stream) { st.Each(context.Background(), func(int, profiler.Job) bool { return true }) }
	sample := func(st *Stream) { st.Sample(400, 1) }
	want := "mltop: dropped 3 duplicate specs from d.yaml (a value repeated in a list, or sweeps that overlap): each spec runs once\n"
	for _, c := range []struct {
		name, src string
		do        []func(*Stream)
		want      string // "about": an estimate
	}{
		{"not walked", repeats, nil, ""},
		{"walked", repeats, []func(*Stream){walk}, want},
		{"sampled", repeats, []func(*Stream){sample}, "about"},
		{"sampled, then walked", repeats, []func(*Stream){sample, walk}, want},
		{"walked, then sampled", repeats, []func(*Stream){walk, sample}, want},
		{"no duplicates", plain, []func(*Stream){walk, sample}, ""},
	} {
		st := open(c.src)
		for _, f := range c.do {
			f(st)
		}
		got := st.DuplicatesNote()
		switch {
		case c.want == "about":
			if !strings.HasPrefix(got, "mltop: dropped about ") || !strings.Contains(got, " duplicate specs from d.yaml") {
				t.Errorf("%s: %q, want an estimate", c.name, got)
			}
		case got != c.want:
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// A walk stopped early counts nothing.
	st := open(repeats)
	st.Each(context.Background(), func(int, profiler.Job) bool { return false })
	if got := st.DuplicatesNote(); got != "" {
		t.Errorf("stopped walk: %q", got)
	}
}
