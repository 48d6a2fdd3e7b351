package sweep

import (
	"context"
	"fmt"
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

// Property: over random sweeps and shard counts, the shards of a stream
// (Shard.Owns over Each's indices) are pairwise disjoint, their union is
// the sweep, and their sizes differ by at most one.
func TestShardProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 15))
	for iter := range 200 {
		a, _ := randomSweep(r)
		st, err := ParseStream("a.yaml", []byte(a), profiler.DefaultOptions(), Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, a)
		}
		all, _, err := st.Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := 1 + r.IntN(7)
		seen := map[string]int{}
		lo, hi := len(all), 0
		for i := range n {
			sh := Shard{i, n}
			size := 0
			st.Each(context.Background(), func(k int, j profiler.Job) bool {
				if sh.Owns(k) {
					seen[j.Spec.Key()]++
					size++
				}
				return true
			})
			lo, hi = min(lo, size), max(hi, size)
		}
		for _, j := range all {
			if seen[j.Spec.Key()] != 1 {
				t.Fatalf("iteration %d: %s is in %d shards of %d", iter, j.Spec.Key(), seen[j.Spec.Key()], n)
			}
		}
		if len(seen) != len(all) || hi-lo > 1 {
			t.Fatalf("iteration %d: shards hold %d specs (sizes %d to %d), the sweep %d", iter, len(seen), lo, hi, len(all))
		}
	}
}
