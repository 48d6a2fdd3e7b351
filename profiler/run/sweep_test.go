package run_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

const scaleSweep = `sweeps:
  - kernel: test_scale
    dtypes: [f32, bf16]
    knobs:
      WG: [32, 64, 128]
    dims:
      N: [7, 100, 1000]
    where: ["N > 7 || WG == 128"]
`

func scaleStream(t *testing.T) *sweep.Stream {
	t.Helper()
	st, err := sweep.ParseStream("s.yaml", []byte(scaleSweep), profiler.DefaultOptions(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Sweep announces the exact count of a small sweep, then runs every job
// the stream makes, in order, each once; the spec the family refuses on
// the device is counted apart (it becomes an invalid row).
func TestSweepRunsTheStream(t *testing.T) {
	st := scaleStream(t)
	want, _, err := st.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dev := &fakeDevice{name: "a"}
	var plan run.SweepPlan
	sink := &memSink{}
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: dev,
		Announce: func(p run.SweepPlan) error { plan = p; return nil }}, sink)
	if err != nil {
		t.Fatal(err)
	}
	// 2 dtypes × (WG 128 at N 7, and 3 WG at N 100, 1000) = 14, of which
	// WG=128 N=7 (twice, one per dtype) breaks test_scale's rule.
	if !plan.Exact || plan.Specs != 12 || plan.Invalid != 2 || plan.Device == nil {
		t.Errorf("plan %+v, want 12 specs and 2 invalid, exact", plan)
	}
	if len(dev.ran) != len(want) || sum.Total != len(want) || len(sink.rows) != len(want) {
		t.Fatalf("ran %d, summary %d, rows %d; the sweep has %d", len(dev.ran), sum.Total, len(sink.rows), len(want))
	}
	for i, j := range want {
		if dev.ran[i] != j.Spec.Key() {
			t.Errorf("job %d ran %s, want %s", i, dev.ran[i], j.Spec.Key())
		}
	}
}

// An Announce error stops the sweep before anything runs; so does a
// cancelled context, before the announcement.
func TestSweepStopsBeforeRunning(t *testing.T) {
	dev := &fakeDevice{name: "a"}
	refused := errors.New("no")
	_, err := run.Sweep(context.Background(), run.SweepConfig{Source: scaleStream(t), Exec: dev,
		Announce: func(run.SweepPlan) error { return refused }})
	if !errors.Is(err, refused) || dev.count() != 0 {
		t.Errorf("refused: err %v, ran %d", err, dev.count())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	announced := false
	_, err = run.Sweep(ctx, run.SweepConfig{Source: scaleStream(t), Exec: dev,
		Announce: func(run.SweepPlan) error { announced = true; return nil }})
	if !errors.Is(err, context.Canceled) || announced || dev.count() != 0 {
		t.Errorf("cancelled: err %v, announced %v, ran %d", err, announced, dev.count())
	}
}

// The shards of a sweep run each of its specs exactly once between them;
// skipped specs are announced, handed to Skipped and not run.
func TestSweepShardsAndSkip(t *testing.T) {
	st := scaleStream(t)
	all, _, _ := st.Jobs(context.Background())
	skip := map[string]bool{all[0].Spec.Key(): true, all[5].Spec.Key(): true}
	ran := map[string]int{}
	for i := range 3 {
		dev := &fakeDevice{name: "a"}
		var skipped []string
		var plan run.SweepPlan
		sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: dev, Shard: sweep.Shard{Index: i, Count: 3}, Skip: skip,
			Skipped:  func(j profiler.Job) { skipped = append(skipped, j.Spec.Key()) },
			Announce: func(p run.SweepPlan) error { plan = p; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Skipped != len(skipped) || sum.Skipped != len(skipped) {
			t.Errorf("shard %d: plan skips %d, summary %d, Skipped got %d", i, plan.Skipped, sum.Skipped, len(skipped))
		}
		for _, k := range dev.ran {
			ran[k]++
		}
	}
	for _, j := range all {
		k := j.Spec.Key()
		if want := map[bool]int{true: 0, false: 1}[skip[k]]; ran[k] != want {
			t.Errorf("%s ran %d times, want %d", k, ran[k], want)
		}
	}
}

// endless is a SweepSource of about a billion specs (the walk never
// ends by itself); it counts the jobs it made.
type endless struct {
	mu   sync.Mutex
	made int
}

func (e *endless) job(i int) profiler.Job {
	return profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 100 + i}}, Options: profiler.DefaultOptions()}
}

// Walk counts the jobs made by this walk (the count walk's are forgotten).
func (e *endless) Walk(ctx context.Context, yield func(int, profiler.Job) bool) error {
	e.mu.Lock()
	e.made = 0
	e.mu.Unlock()
	for i := 0; ; i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e.mu.Lock()
		e.made++
		e.mu.Unlock()
		if !yield(i, e.job(i)) {
			return nil
		}
	}
}

func (e *endless) Size() int64 { return 1e9 }

// Sample keeps one combination in four.
func (e *endless) Sample(n int, seed uint64) ([]profiler.Job, error) {
	var out []profiler.Job
	for i := range n / 4 {
		out = append(out, e.job(i))
	}
	return out, nil
}

func (e *endless) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.made
}

// A sweep too large to walk is announced from a sample, as such; then the
// run loop makes the jobs as it runs them, never more than its look-ahead
// beyond the one running.
func TestSweepOfABillionSpecs(t *testing.T) {
	src := &endless{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var plan run.SweepPlan
	var worst int
	exec := &aheadCounter{src: src, stopAt: 50, cancel: cancel, worst: &worst}
	sum, err := run.Sweep(ctx, run.SweepConfig{Source: src, Exec: exec,
		Announce: func(p run.SweepPlan) error { plan = p; return nil }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if plan.Exact || plan.Sampled != run.SampleSize || plan.Specs != 250_000_000 {
		t.Errorf("plan %+v, want 250 000 000 specs from a sample", plan)
	}
	if limit := 2*run.Lookahead() + 3; worst > limit {
		t.Errorf("the loop made %d jobs beyond the one running, more than %d", worst, limit)
	}
	if sum.NotRun == 0 {
		t.Errorf("summary %+v: no specs left after the cancel", sum)
	}
}

// aheadCounter runs specs and notes how many jobs the source has made
// beyond the one running; it cancels after stopAt runs.
type aheadCounter struct {
	src    *endless
	ran    int
	stopAt int
	cancel func()
	worst  *int
}

func (a *aheadCounter) Device() profiler.DeviceInfo { return profiler.DeviceInfo{Backend: "fake"} }
func (a *aheadCounter) Close() error                { return nil }
func (a *aheadCounter) Run(_ context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	a.ran++
	*a.worst = max(*a.worst, a.src.count()-a.ran)
	if a.ran == a.stopAt {
		a.cancel()
	}
	return profiler.Result{Spec: s, Status: profiler.StatusOK}
}

// slowSource is a sweep of n jobs of distinct shapes whose walk number
// slowWalk (the first is 1) is slower than CountTime, so a plan made on it
// is sampled; its first dear jobs have a long time limit (a dear spec).
type slowSource struct {
	n, slowWalk, dear int
	walks             int
}

func (s *slowSource) job(i int) profiler.Job {
	j := profiler.Job{Spec: scaleSpec(100+i, 32), Options: profiler.DefaultOptions()}
	if i < s.dear {
		j.Options.Stop.MaxTime = 60
	}
	return j
}

func (s *slowSource) Walk(ctx context.Context, yield func(int, profiler.Job) bool) error {
	s.walks++
	for i := range s.n {
		if s.walks == s.slowWalk && i < s.n*3/10 {
			time.Sleep(run.CountTime * 4 / time.Duration(s.n))
		}
		if !yield(i, s.job(i)) {
			return nil
		}
	}
	return nil
}
func (s *slowSource) Size() int64 { return int64(s.n) }
func (s *slowSource) Sample(n int, _ uint64) ([]profiler.Job, error) {
	var out []profiler.Job
	for i := range n {
		out = append(out, s.job(i%s.n))
	}
	return out, nil
}

// A sampled plan is announced first; the skipped specs reach Skipped
// after it, each once, and before Start.
func TestSweepSampledSkipsAfterTheAnnouncement(t *testing.T) {
	src := &slowSource{n: 300, slowWalk: 1}
	skip := map[string]bool{src.job(3).Spec.Key(): true, src.job(200).Spec.Key(): true}
	var order []string
	dev := &fakeDevice{name: "a"}
	_, err := run.Sweep(context.Background(), run.SweepConfig{Source: src, Exec: dev, Skip: skip,
		Skipped: func(j profiler.Job) { order = append(order, "skipped") },
		Announce: func(p run.SweepPlan) error {
			if p.Exact {
				t.Error("the slow walk was not sampled")
			}
			order = append(order, "announce")
			return nil
		},
		Start: func(run.SweepPlan) (run.Hooks, error) { order = append(order, "start"); return run.Hooks{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"announce", "skipped", "skipped", "start"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if dev.count() != 298 {
		t.Errorf("ran %d, want 298", dev.count())
	}
}
