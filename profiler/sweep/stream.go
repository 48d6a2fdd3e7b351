package sweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// Stream is a sweep file checked and compiled, whose specs are made one at
// a time, in sweep order, when asked for (Each, Sample): a sweep of
// millions of specs is counted, estimated, filtered and sharded in memory
// that does not grow with it.
//
// Its order and its duplicates are Load's: dims outermost and knobs
// innermost, each entry of `sweeps:` after the one before; a spec made
// again (a value repeated in a list, or an earlier entry that makes the
// same spec with the same options) is dropped and counted.
type Stream struct {
	File         string
	Backend      string // "" when the file does not say
	DeviceLimits *profiler.DeviceLimitsYAML
	// Search is the file's search: block (nil: measure every spec);
	// with shapes, each entry is compiled once per shape (search.go).
	Search  *Search
	entries []*entry
	// dropped is what the last walk to the end (Each) dropped as
	// duplicates, or an estimate from the last Sample; 0 before either.
	// Atomic: a sweep's feed walks the stream on its own goroutine.
	dropped      atomic.Int64
	droppedExact atomic.Bool
}

// entry is one compiled item of `sweeps:`.
type entry struct {
	kernel  string
	sc      profiler.Schema
	opt     profiler.Options
	dtypes  []profiler.DType
	dfirst  []int // dfirst[k]: where dtypes[k] first occurs in dtypes
	axes    []axis
	first   [][]int // first[a][k]: where axes[a].values[k] first occurs
	filters []*expr.Program
	sx      sweepCtx
	where   []string // the filters' sources, for their errors
	earlier []*entry // entries before it with its kernel and options
	size    int64    // combinations before filters and duplicates
}

// Counts is what a walk over a Stream found.
type Counts struct {
	Jobs       int // specs kept (after `where:`, duplicates dropped)
	Duplicates int // specs dropped as duplicates
}

// LoadStream reads and checks a sweep file without expanding it. It
// refuses what Load refuses, except the errors only expansion finds (a
// filter that fails on a spec, filters that keep nothing): Each returns
// those.
func LoadStream(path string, base profiler.Options, o Options) (*Stream, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	return ParseStream(path, src, base, o)
}

// Size is the number of combinations of the sweep's values, before
// `where:` filters and duplicates: an upper bound of its specs, known at
// once.
func (st *Stream) Size() int64 {
	var n int64
	for _, e := range st.entries {
		n = satAdd(n, e.size)
	}
	return n
}

// Kernels are the families the sweep runs, once each, in order.
func (st *Stream) Kernels() []string {
	var ks []string
	for _, e := range st.entries {
		if !slices.Contains(ks, e.kernel) {
			ks = append(ks, e.kernel)
		}
	}
	return ks
}

// Each calls yield with each job of the sweep and its index among the
// jobs kept, in sweep order, until yield returns false or ctx is done
// (ctx.Err() is then returned). It returns what it counted so far.
func (st *Stream) Each(ctx context.Context, yield func(i int, j profiler.Job) bool) (Counts, error) {
	var c Counts
	for _, e := range st.entries {
		more, err := e.walk(ctx, &c, yield)
		if err != nil || !more {
			return c, err
		}
	}
	st.dropped.Store(int64(c.Duplicates))
	st.droppedExact.Store(true)
	return c, nil
}

// DuplicatesNote is the banner's line that tells how many duplicate specs
// the sweep drops ("" when none): counted by the last walk that reached
// the end, else estimated from the last Sample ("about"), else "" (no
// walk or sample yet).
func (st *Stream) DuplicatesNote() string {
	n := st.dropped.Load()
	if n <= 0 {
		return ""
	}
	count := profiler.Plural(int(n), "duplicate spec", "duplicate specs")
	if !st.droppedExact.Load() {
		count = "about " + count
	}
	return duplicatesNote(count, st.File)
}

// Walk is Each without the counts (run.SweepSource).
func (st *Stream) Walk(ctx context.Context, yield func(i int, j profiler.Job) bool) error {
	_, err := st.Each(ctx, yield)
	return err
}

// walk is Each over one entry; false when yield asked to stop.
func (e *entry) walk(ctx context.Context, c *Counts, yield func(int, profiler.Job) bool) (bool, error) {
	idx := make([]int, len(e.axes))
	keptAny := false
	for d := range e.dtypes {
		for n := 0; ; n++ {
			if n%1024 == 0 && ctx.Err() != nil {
				return false, ctx.Err()
			}
			job, kept, dup, err := e.at(d, idx)
			if err != nil {
				return false, err
			}
			keptAny = keptAny || kept
			switch {
			case dup:
				c.Duplicates++
			case kept:
				if !yield(c.Jobs, job) {
					return false, nil
				}
				c.Jobs++
			}
			if !odometer(idx, e.axes) {
				break
			}
		}
	}
	if !keptAny {
		return false, e.sx.at("where", "the `where` filters leave no specs to run: loosen them")
	}
	return true, nil
}

// odometer steps idx to the next combination, the last axis fastest;
// false after the last.
func odometer(idx []int, axes []axis) bool {
	for a := len(axes) - 1; a >= 0; a-- {
		idx[a]++
		if idx[a] < len(axes[a].values) {
			return true
		}
		idx[a] = 0
	}
	return false
}

// at makes the job of dtype d and axis indices idx, and says whether the
// filters keep it and whether it is a duplicate of a spec made before.
func (e *entry) at(d int, idx []int) (job profiler.Job, kept, dup bool, err error) {
	sp := e.spec(e.dtypes[d], func(a int) int { return e.axes[a].values[idx[a]] })
	ok, err := e.keeps(sp)
	if err != nil || !ok {
		return profiler.Job{}, false, false, err
	}
	if e.dfirst[d] != d {
		return profiler.Job{}, true, true, nil
	}
	for a := range e.axes {
		if e.first[a][idx[a]] != idx[a] {
			return profiler.Job{}, true, true, nil
		}
	}
	for _, p := range e.earlier {
		if has, err := p.makes(sp); err != nil || has {
			return profiler.Job{}, true, has, err
		}
	}
	return profiler.Job{Spec: sp, Options: e.opt}, true, false, nil
}

// spec is the entry's spec of dtype dt whose axis a has value val(a).
func (e *entry) spec(dt profiler.DType, val func(a int) int) profiler.Spec {
	sp := profiler.Spec{Kernel: e.kernel, DType: dt}
	for a, ax := range e.axes {
		for _, n := range ax.names {
			_ = sp.Set(e.sc, n, val(a))
		}
	}
	return sp.WithDefaults(e.sc)
}

// keeps says whether every `where:` filter holds for sp.
func (e *entry) keeps(sp profiler.Spec) (bool, error) {
	if len(e.filters) == 0 {
		return true, nil
	}
	env := whereEnv(e.sc, sp)
	for i, f := range e.filters {
		ok, err := f.Bool(env)
		if err != nil {
			sub := e.sx.item("where", i)
			return false, whereError(e.sx.file, e.sx.field(sub), e.kernel, e.sx.pos(sub), fmt.Errorf("%w (for %s)", err, sp))
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// makes says whether the entry makes sp (a spec of its kernel): its dtype
// and axis values are among the entry's, its other values are the
// defaults, and the filters keep it.
func (e *entry) makes(sp profiler.Spec) (bool, error) {
	if !slices.Contains(e.dtypes, sp.DType) {
		return false, nil
	}
	vals := make([]int, len(e.axes))
	for a, ax := range e.axes {
		v, ok := value(sp, ax)
		if !ok || !slices.Contains(ax.values, v) {
			return false, nil
		}
		vals[a] = v
	}
	mine := e.spec(sp.DType, func(a int) int { return vals[a] })
	if mine.Key() != sp.Key() {
		return false, nil
	}
	return e.keeps(sp)
}

// value is the value sp gives every name of ax (false when they differ).
func value(sp profiler.Spec, ax axis) (int, bool) {
	get := func(n string) int {
		if ax.kind == "flag" {
			if sp.Flags[n] {
				return 1
			}
			return 0
		}
		if ax.kind == "knob" {
			return sp.Knobs[n]
		}
		return sp.Dims[n]
	}
	v := get(ax.names[0])
	for _, n := range ax.names[1:] {
		if get(n) != v {
			return 0, false
		}
	}
	return v, true
}

// Sample draws n combinations uniformly from the sweep's Size and returns
// the jobs among them that Each would yield (kept, not duplicates), in
// the order drawn. With a fixed seed it draws the same ones. It is how a
// sweep too large to walk in a moment is estimated: Size × len(kept)/n
// specs, each like the ones sampled.
func (st *Stream) Sample(n int, seed uint64) ([]profiler.Job, error) {
	total := st.Size()
	if total == 0 || n <= 0 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var kept []profiler.Job
	dups := 0
	for range n {
		r := rng.Int64N(total)
		e := st.entries[0]
		for _, e = range st.entries {
			if r < e.size {
				break
			}
			r -= e.size
		}
		idx := make([]int, len(e.axes))
		for a := len(e.axes) - 1; a >= 0; a-- {
			k := int64(len(e.axes[a].values))
			idx[a] = int(r % k)
			r /= k
		}
		job, ok, dup, err := e.at(int(r%int64(len(e.dtypes))), idx)
		if err != nil {
			return nil, err
		}
		if ok && !dup {
			kept = append(kept, job)
		}
		if dup {
			dups++
		}
	}
	if !st.droppedExact.Load() {
		st.dropped.Store(int64(math.Round(float64(total) * float64(dups) / float64(n))))
	}
	return kept, nil
}

// Jobs expands the whole stream (for sweeps known to be small: a file the
// TUI loads, `mltop merge --config`).
func (st *Stream) Jobs(ctx context.Context) ([]profiler.Job, Counts, error) {
	var jobs []profiler.Job
	c, err := st.Each(ctx, func(_ int, j profiler.Job) bool {
		jobs = append(jobs, j)
		return true
	})
	return jobs, c, err
}

// compileEntry checks one item of `sweeps:` and makes it an entry; the
// entries before it find its duplicates.
func compileEntry(s SweepYAML, base profiler.Options, sx sweepCtx, before []*entry) (*entry, error) {
	e, err := checkEntry(s, base, sx)
	if err != nil {
		return nil, err
	}
	e.dfirst = firstOccurrence(e.dtypes)
	e.size = int64(len(e.dtypes))
	seen := map[string]string{}
	for _, ax := range e.axes {
		e.first = append(e.first, firstOccurrence(ax.values))
		e.size = satMul(e.size, int64(len(ax.values)))
		for _, n := range ax.names {
			if prev, ok := seen[n]; ok {
				return nil, sx.at(ax.kind+"s", fmt.Sprintf("%s is set twice (by %s and by %s): set it once", n, prev, ax.key))
			}
			seen[n] = ax.key
		}
	}
	for _, p := range before {
		if p.kernel == e.kernel && reflect.DeepEqual(p.opt, e.opt) {
			e.earlier = append(e.earlier, p)
		}
	}
	return e, nil
}

// firstOccurrence maps each position of vs to the first position of its value.
func firstOccurrence[T comparable](vs []T) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = slices.Index(vs, v)
	}
	return out
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
