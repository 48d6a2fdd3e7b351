package sweep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	none := env()
	for _, c := range []struct {
		v    string
		env  func(string) string
		want Shard
		err  string // part of the error; "" for none
	}{
		{"0/1", none, Shard{0, 1}, ""},
		{"2/3", none, Shard{2, 3}, ""},
		{" 1 / 4 ", none, Shard{1, 4}, ""},
		{"0/0", none, Shard{}, `--shard "0/0": the count after / must be`},
		{"3/2", none, Shard{}, `--shard "3/2": the index must be a whole number from 0 to 1`},
		{"2/2", none, Shard{}, "from 0 to 1"},
		{"-1/2", none, Shard{}, "from 0 to 1"},
		{"x/y", none, Shard{}, `--shard "x/y"`},
		{"x/2", none, Shard{}, `--shard "x/2": the index`},
		{"1", none, Shard{}, "write i/n"},
		{"", none, Shard{}, "write i/n"},
		{"auto", none, Shard{}, "neither SLURM_ARRAY_TASK_ID"},
		{"auto", env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{3, 4}, ""},
		{"auto", env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{3, 4}, ""},
		{"auto", env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{}, "SLURM_ARRAY_TASK_ID gives shard 4 of 4"},
		{"auto", env("SLURM_ARRAY_TASK_ID", "1"), Shard{}, "SLURM_ARRAY_TASK_COUNT is not set"},
		{"auto/8", env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "6"), Shard{5, 8}, ""},
		{"auto", env("SLURM_ARRAY_TASK_ID", "one", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{}, `SLURM_ARRAY_TASK_ID="one" is not a whole number`},
		{"auto/3", env("JOB_COMPLETION_INDEX", "2"), Shard{2, 3}, ""},
		{"auto", env("JOB_COMPLETION_INDEX", "2", "MLTOP_SHARD_COUNT", "5"), Shard{2, 5}, ""},
		{"auto", env("JOB_COMPLETION_INDEX", "2"), Shard{}, "write --shard auto/N or set MLTOP_SHARD_COUNT=N"},
		{"auto/2", env("JOB_COMPLETION_INDEX", "2"), Shard{}, "JOB_COMPLETION_INDEX gives shard 2 of 2"},
		{"auto/0", env("JOB_COMPLETION_INDEX", "0"), Shard{}, "at least 1"},
	} {
		got, err := ParseShard(c.v, c.env)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %v %v, want %v", c.v, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want one with %q", c.v, err, c.err)
		}
	}
}

// FuzzParseShard: no value panics; an accepted shard is in range, and an
// error names the value.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/2", "auto", "auto/4", "x/y", "/", "1/", "9999999999999999999/2"} {
		f.Add(s, "1", "4")
	}
	f.Fuzz(func(t *testing.T, v, id, n string) {
		env := func(k string) string {
			switch k {
			case EnvJobIndex:
				return id
			case EnvShardCount:
				return n
			}
			return ""
		}
		sh, err := ParseShard(v, env)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", v)) {
				t.Errorf("error %q does not name %q", err, v)
			}
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Errorf("%q → %v", v, sh)
		}
	})
}

// randomSweep writes one random sweep over test_scale twice: the second
// text has every map's keys, every list and the sweeps in another order.
func randomSweep(r *rand.Rand) (string, string) {
	type entry struct{ lines [][]string }
	pick := func(all []string) []string {
		var out []string
		for _, v := range all {
			if r.IntN(2) == 0 {
				out = append(out, v)
			}
		}
		if len(out) == 0 {
			out = all[:1]
		}
		return out
	}
	ints := func(lo, hi int) []string {
		var out []string
		for k := 0; k < 1+r.IntN(4); k++ {
			v := fmt.Sprint(lo + r.IntN(hi-lo))
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out
	}
	var sweeps []entry
	for range 1 + r.IntN(3) {
		e := entry{lines: [][]string{
			{"dtypes", strings.Join(pick([]string{"f32", "f16", "bf16"}), ", ")},
			{"knobs", "WG: [" + strings.Join(pick([]string{"32", "64", "128"}), ", ") + "]"},
			{"dims", "N: [" + strings.Join(ints(1, 1<<22), ", ") + "]"},
			{"flags", "broken: [" + strings.Join(pick([]string{"false", "true"}), ", ") + "]"},
		}}
		sweeps = append(sweeps, e)
	}
	write := func(shuffle bool) string {
		var b strings.Builder
		b.WriteString("backend: cpu\ndefaults: {time_limit: 2, min_time: 0.01}\nsweeps:\n")
		order := slices.Clone(sweeps)
		if shuffle {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, e := range order {
			lines := slices.Clone(e.lines)
			if shuffle {
				r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
			}
			b.WriteString("  - kernel: test_scale\n")
			for _, l := range lines {
				v := l[1]
				if shuffle && l[0] != "dtypes" { // reverse the list inside: [a, b] → [b, a]
					name, list, _ := strings.Cut(v, ": ")
					items := strings.Split(strings.Trim(list, "[]"), ", ")
					slices.Reverse(items)
					v = name + ": [" + strings.Join(items, ", ") + "]"
				}
				if l[0] == "dtypes" {
					fmt.Fprintf(&b, "    dtypes: [%s]\n", v)
				} else {
					fmt.Fprintf(&b, "    %s: {%s}\n", l[0], v)
				}
			}
		}
		return b.String()
	}
	return write(false), write(true)
}

func keysOf(jobs []profiler.Job) []string {
	var k []string
	for _, j := range jobs {
		k = append(k, j.Spec.Key())
	}
	slices.Sort(k)
	return k
}

// Property: over random sweeps and shard counts, the shards are pairwise
// disjoint, their union is the sweep, the same spec set written in another
// key order gives the same partition, and no shard costs more than an even
// share plus the largest spec.
func TestPartitionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 15))
	for iter := range 200 {
		a, b := randomSweep(r)
		swA, err := Parse("a.yaml", []byte(a), profiler.DefaultOptions())
		if err != nil {
			t.Fatalf("%v\n%s", err, a)
		}
		swB, err := Parse("b.yaml", []byte(b), profiler.DefaultOptions())
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if !slices.Equal(keysOf(swA.Jobs), keysOf(swB.Jobs)) {
			t.Fatalf("iteration %d: the two texts expand to different specs\n%s\n%s", iter, a, b)
		}
		n := 1 + r.IntN(7)
		seen := map[string]int{}
		var total, maxCost float64
		for _, j := range swA.Jobs {
			total += Cost(j)
			maxCost = math.Max(maxCost, Cost(j))
		}
		for i := range n {
			pa := Partition(swA.Jobs, Shard{i, n})
			pb := Partition(swB.Jobs, Shard{i, n})
			if !slices.Equal(keysOf(pa), keysOf(pb)) {
				t.Fatalf("iteration %d shard %d/%d: the reordered sweep gives another shard\n%v\n%v", iter, i, n, keysOf(pa), keysOf(pb))
			}
			cost := 0.0
			for _, j := range pa {
				seen[j.Spec.Key()]++
				cost += Cost(j)
			}
			if cost > total/float64(n)+maxCost+1e-6 {
				t.Errorf("iteration %d shard %d/%d costs %.3f of %.3f, more than an even share plus the largest spec (%.3f)", iter, i, n, cost, total, maxCost)
			}
		}
		for _, j := range swA.Jobs {
			if seen[j.Spec.Key()] != 1 {
				t.Fatalf("iteration %d: %s is in %d shards of %d", iter, j.Spec.Key(), seen[j.Spec.Key()], n)
			}
		}
		if len(seen) != len(swA.Jobs) {
			t.Fatalf("iteration %d: shards hold %d specs, the sweep %d", iter, len(seen), len(swA.Jobs))
		}
	}
}

// The partition follows the cost, not the count: one spec that moves 8 TB
// costs as much as many small ones, so it gets a shard nearly to itself.
func TestPartitionBalancesCost(t *testing.T) {
	sw, err := Parse("c.yaml", []byte(`backend: cpu
defaults: {time_limit: 10, min_time: 0.01, warmup: 0.01}
sweeps:
  - kernel: test_scale
    dtypes: [f32]
    knobs: {WG: [32, 64, 128]}
    dims: {N: [100, 200, 300, 400]}
  - kernel: test_scale
    dtypes: [f32]
    knobs: {WG: 32}
    dims: {N: 1099511627776}
`), profiler.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	heavy := sw.Jobs[len(sw.Jobs)-1]
	if Cost(heavy) < 10*Cost(sw.Jobs[0]) {
		t.Fatalf("heavy spec costs %.3f, a light one %.3f: the model does not see the bytes", Cost(heavy), Cost(sw.Jobs[0]))
	}
	for i := range 2 {
		p := Partition(sw.Jobs, Shard{i, 2})
		if slices.ContainsFunc(p, func(j profiler.Job) bool { return j.Spec.Key() == heavy.Spec.Key() }) && len(p) != 1 {
			t.Errorf("the heavy spec shares its shard with %d light ones; a count-balanced split would give 6", len(p)-1)
		}
	}
}
