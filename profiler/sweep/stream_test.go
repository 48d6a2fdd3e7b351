package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const bigStreamYAML = `sweeps:
  - kernel: test_scale
    dtypes: [f32, f16, bf16]
    knobs:
      WG: [32, 64, 128, 64]
    dims:
      N: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
    flags:
      broken: [false, true]
    where: ["N % 3 != 0 || WG == 32"]
  - kernel: test_scale
    knobs:
      WG: [64, 128]
    dims:
      N: [5, 500]
`

func parseStream(t *testing.T, src string) *Stream {
	t.Helper()
	st, err := ParseStream("s.yaml", []byte(src), profiler.DefaultOptions(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A walk over the stream yields, one by one, the jobs an expanded Load
// holds, in its order, with its duplicate count, and indexes them 0, 1, ….
func TestStreamMatchesExpansion(t *testing.T) {
	st := parseStream(t, bigStreamYAML)
	sw, err := Parse("s.yaml", []byte(bigStreamYAML), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	c, err := st.Each(context.Background(), func(i int, j profiler.Job) bool {
		if i != len(keys) {
			t.Fatalf("index %d for job %d", i, len(keys))
		}
		keys = append(keys, j.Spec.Key())
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs != len(sw.Jobs) || c.Duplicates != sw.Duplicates || len(keys) != len(sw.Jobs) {
		t.Fatalf("stream %+v (%d yielded), expansion %d jobs %d duplicates", c, len(keys), len(sw.Jobs), sw.Duplicates)
	}
	seen := map[string]bool{}
	for i, k := range keys {
		if k != sw.Jobs[i].Spec.Key() {
			t.Fatalf("job %d: %s, expansion has %s", i, k, sw.Jobs[i].Spec.Key())
		}
		if seen[k] {
			t.Fatalf("%s yielded twice", k)
		}
		seen[k] = true
	}
	// 3 dtypes × 3 WG × 2 flags × (14 N kept for WG 64/128, 20 for 32) = 288
	// kept, of which the repeated WG 64 doubles 6·14 = 84; the second
	// entry's N=5 specs (f32, broken=false) are in the first.
	if c.Jobs != 288+4-2 || c.Duplicates != 84+2 {
		t.Errorf("counts %+v, want 290 jobs and 86 duplicates", c)
	}
	if st.Size() != 3*4*20*2+4 {
		t.Errorf("Size %d, want %d", st.Size(), 3*4*20*2+4)
	}
}

// yield returning false stops the walk; a cancelled context stops it
// with the context's error.
func TestStreamStops(t *testing.T) {
	st := parseStream(t, bigStreamYAML)
	n := 0
	if _, err := st.Each(context.Background(), func(int, profiler.Job) bool { n++; return n < 5 }); err != nil || n != 5 {
		t.Errorf("stopped after %d jobs (err %v), want 5", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n = 0
	_, err := st.Each(ctx, func(int, profiler.Job) bool { n++; return true })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled walk: %d jobs, err %v", n, err)
	}
}

// Sample draws the same jobs for a seed, only jobs the walk yields, and
// about the share of Size they are.
func TestStreamSample(t *testing.T) {
	st := parseStream(t, bigStreamYAML)
	jobs, _, err := st.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]bool{}
	for _, j := range jobs {
		valid[j.Spec.Key()] = true
	}
	a, err := st.Sample(4000, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.Sample(4000, 7)
	if len(a) != len(b) || len(a) == 0 || a[0].Spec.Key() != b[0].Spec.Key() {
		t.Fatalf("two samples with one seed differ: %d and %d jobs", len(a), len(b))
	}
	for _, j := range a {
		if !valid[j.Spec.Key()] {
			t.Fatalf("sampled %s, which the walk does not yield", j.Spec)
		}
	}
	share, want := float64(len(a))/4000, float64(len(jobs))/float64(st.Size())
	if share < want-0.05 || share > want+0.05 {
		t.Errorf("sample keeps %.3f, the sweep %.3f", share, want)
	}
}

// Errors only a walk finds: a filter that fails on a spec, filters that
// keep nothing; and a name set by two keys, found at once.
func TestStreamErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"sweeps:\n  - kernel: test_scale\n    dims:\n      N: [1, 2]\n    where: [\"N / (N - 1) > 0\"]\n", "division by zero"},
		{"sweeps:\n  - kernel: test_scale\n    dims:\n      N: [1, 2]\n    where: [\"N > 5\"]\n", "leave no specs"},
	} {
		st := parseStream(t, c.src)
		if _, err := st.Each(context.Background(), func(int, profiler.Job) bool { return true }); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.src, err, c.want)
		}
	}
	_, err := ParseStream("s.yaml", []byte("sweeps:\n  - kernel: test_scale\n    dims:\n      N: [1]\n      \"N, N\": [2]\n"), profiler.DefaultOptions(), Options{})
	if err == nil || !strings.Contains(err.Error(), "N is set twice") {
		t.Errorf("a name set by two keys: %v", err)
	}
}

// Owns deals the stream's indices to the shards in turn: every index to
// exactly one shard, and the shards' sizes differ by at most one.
func TestShardOwns(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		sizes := make([]int, n)
		for i := range 100 {
			owners := 0
			for k := range n {
				if (Shard{k, n}).Owns(i) {
					owners++
					sizes[k]++
				}
			}
			if owners != 1 {
				t.Fatalf("%d shards: index %d has %d owners", n, i, owners)
			}
		}
		if sizes[0]-sizes[n-1] > 1 {
			t.Errorf("%d shards: sizes %v", n, sizes)
		}
	}
}
