package sweep

import (
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
