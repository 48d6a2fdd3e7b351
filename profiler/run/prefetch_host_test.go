package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// aheadBackend compiles ahead (a GPU backend, as far as the Runner knows).
type aheadBackend struct{ enginetest.MemBackend }

func (*aheadBackend) Precompile(profiler.Program) {}

// runOK runs j on r and stops the test unless it is ok.
func runOK(t *testing.T, r *run.Runner, j profiler.Job) {
	t.Helper()
	if res := r.Run(context.Background(), j.Spec, j.Options, nil); res.Status != profiler.StatusOK {
		t.Fatalf("N=%d: %s %s", j.Spec.Dims["N"], res.Status, res.Error)
	}
}

func scaleJob(n int) profiler.Job {
	return profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"N": n}}, Options: enginetest.QuickOptions()}
}

// While a spec is measured, the next shape's inputs and float64 reference
// are made ahead; its spec then runs on them.
func TestPrefetchMakesTheNextShapesHostWork(t *testing.T) {
	enginetest.Register()
	r := run.NewRunner(&aheadBackend{})
	defer r.Close()
	a, b := scaleJob(4096), scaleJob(8192)
	runOK(t, r, a)
	r.Prefetch(b)
	inputs, ref := r.HostWorkAhead(b)
	if !inputs || !ref {
		t.Fatalf("after Prefetch: inputs at hand %v, reference %v; want both", inputs, ref)
	}
	res := r.Run(context.Background(), b.Spec, b.Options, nil)
	if res.Status != profiler.StatusOK || res.Verdict == nil || !res.Verdict.Pass {
		t.Fatalf("the prefetched shape: %s %s", res.Status, res.Error)
	}
	// a shape already at hand is not made again, and one prefetch at a time
	r.Prefetch(a)
	if inputs, _ := r.HostWorkAhead(a); !inputs {
		t.Error("the first shape's inputs were dropped")
	}
}

// A backend that measures on the host (the CPU backend: no Precompiler)
// gets nothing made ahead: it would take the cores it times on.
func TestNoHostWorkAheadOnHostBackends(t *testing.T) {
	enginetest.Register()
	r := run.NewRunner(&enginetest.MemBackend{})
	defer r.Close()
	b := scaleJob(8192)
	r.Prefetch(b)
	if inputs, ref := r.HostWorkAhead(b); inputs || ref {
		t.Errorf("inputs %v, reference %v made ahead on a host backend", inputs, ref)
	}
}

// panicRefFamily is test_scale whose float64 reference panics.
type panicRefFamily struct{ enginetest.ScaleFamily }

func (panicRefFamily) Name() string { return "test_scale_panicref" }
func (panicRefFamily) Reference(profiler.Spec, profiler.Inputs, int, uint64) (*profiler.Reference, error) {
	panic("reference (test)")
}

var registerPanicRef sync.Once

// A reference that panics while it is made ahead does not leave its spec
// waiting for it: the spec makes it again and is recorded as crashed.
func TestPrefetchedReferenceThatPanics(t *testing.T) {
	enginetest.Register()
	registerPanicRef.Do(func() { profiler.Register(panicRefFamily{}) })
	r := run.NewRunner(&aheadBackend{})
	defer r.Close()
	j := scaleJob(4096)
	j.Spec.Kernel = "test_scale_panicref"
	r.Prefetch(j)
	r.HostWorkAhead(j)
	done := make(chan profiler.Result, 1)
	go func() { done <- r.Run(context.Background(), j.Spec, j.Options, nil) }()
	select {
	case res := <-done:
		if res.Status != profiler.StatusCrashed || !strings.Contains(res.Error, "reference (test)") {
			t.Errorf("status %s: %s; want crashed by the reference's panic", res.Status, res.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the spec still waits for the reference made ahead")
	}
}

// ctrl-C while a spec waits for its shape's inputs made ahead: it stops at
// once, cancelled.
func TestCancelWhileInputsAreMadeAhead(t *testing.T) {
	enginetest.Register()
	r := run.NewRunner(&aheadBackend{})
	defer r.Close()
	j := scaleJob(1 << 26) // 256 MiB of inputs: seconds to make
	r.Prefetch(j)
	if !r.WaitHostWorkStarted(j) { // else Run would make them in place
		t.Fatal("the inputs were not being made ahead")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	res := r.Run(ctx, j.Spec, j.Options, nil)
	if res.Status != profiler.StatusCancelled {
		t.Errorf("status %s (%s), want cancelled", res.Status, res.Error)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to stop", d)
	}
	r.HostWorkAhead(j) // let the prefetch end before the next test
}

// A shape's inputs are made ahead when they fit in half of the input
// cache's budget, and the budget is a share of the host's memory: an
// eighth of it over the workers of the host, between 1 and 16 GiB.
func TestHostWorkAheadWithinTheInputBudget(t *testing.T) {
	enginetest.Register()
	saved := run.HostMemory
	defer func() { run.HostMemory = saved }()
	for _, tc := range []struct {
		avail   int64
		workers int
		want    int64
	}{
		{avail: 256 << 30, workers: 1, want: 16 << 30},
		{avail: 256 << 30, workers: 4, want: 8 << 30},
		{avail: 64 << 30, workers: 2, want: 4 << 30},
		{avail: 4 << 30, workers: 8, want: 1 << 30},
		{avail: 0, workers: 1, want: 1 << 30}, // unknown
	} {
		run.HostMemory = func() (int64, string) { return tc.avail, "test" }
		r := run.NewRunner(&aheadBackend{})
		r.ShareHost(tc.workers)
		if got := r.InputBudget(); got != tc.want {
			t.Errorf("%d GiB available, %d workers: budget %d MiB, want %d MiB", tc.avail>>30, tc.workers, got>>20, tc.want>>20)
		}
		r.Close()
	}
	b := scaleJob(8192) // 8192 f32 inputs: 32 KiB of values, 32 KiB encoded
	for _, tc := range []struct {
		budget int64
		ahead  bool
	}{{64 << 10, false}, {256 << 10, true}} {
		r := run.NewRunner(&aheadBackend{})
		r.SetInputBudget(tc.budget)
		r.Prefetch(b)
		if inputs, _ := r.HostWorkAhead(b); inputs != tc.ahead {
			t.Errorf("budget %d KiB: inputs made ahead %v, want %v", tc.budget>>10, inputs, tc.ahead)
		}
		r.Close()
	}
}

// Several shapes asked for ahead are made one after the other, in order,
// while the sets made ahead and not yet used fit in half of the budget;
// running a spec of one uses its set and makes room for the next.
func TestHostWorkAheadOfSeveralShapes(t *testing.T) {
	enginetest.Register()
	b, c, d := scaleJob(8192), scaleJob(4096), scaleJob(2048) // 64, 32 and 16 KiB of values and bytes
	for _, tc := range []struct {
		name   string
		budget int64
		want   []bool // b, c, d made ahead
	}{
		{"room for all", 1 << 20, []bool{true, true, true}},
		{"room for b and d", 2 * (64 + 16) << 10, []bool{true, false, true}},
		{"room for none", 16 << 10, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run.NewRunner(&aheadBackend{})
			defer r.Close()
			r.SetInputBudget(tc.budget)
			for _, j := range []profiler.Job{b, c, d} {
				r.Prefetch(j)
			}
			for i, j := range []profiler.Job{b, c, d} {
				if inputs, _ := r.HostWorkAhead(j); inputs != tc.want[i] {
					t.Errorf("shape %d: inputs made ahead %v, want %v", j.Spec.Dims["N"], inputs, tc.want[i])
				}
			}
		})
	}
	// using a set made ahead frees its room for the next shape asked for
	r := run.NewRunner(&aheadBackend{})
	defer r.Close()
	r.SetInputBudget(2 * 66 << 10) // one shape of b's size ahead at a time
	r.Prefetch(b)
	r.HostWorkAhead(b)
	e := scaleJob(8193)
	r.Prefetch(e)
	if inputs, _ := r.HostWorkAhead(e); inputs {
		t.Fatal("a second shape was made ahead beyond the budget")
	}
	runOK(t, r, b)
	r.Prefetch(e)
	if inputs, _ := r.HostWorkAhead(e); !inputs {
		t.Error("after b ran, the next shape was not made ahead")
	}
}

// A set made ahead that a spec passes by (another device took its shape)
// stops holding room from the shapes made ahead after it.
func TestPassedSetsMadeAheadFreeTheirRoom(t *testing.T) {
	enginetest.Register()
	r := run.NewRunner(&aheadBackend{})
	defer r.Close()
	r.SetInputBudget(2 * 100 << 10)                           // 100 KiB ahead
	b, c, e := scaleJob(8192), scaleJob(4096), scaleJob(8193) // 64, 32 and 64 KiB
	r.Prefetch(b)
	r.Prefetch(c)
	if in, _ := r.HostWorkAhead(c); !in {
		t.Fatal("c was not made ahead")
	}
	runOK(t, r, c)
	r.Prefetch(e)
	if in, _ := r.HostWorkAhead(e); !in {
		t.Error("b, passed by, still holds its room: e was not made ahead")
	}
}

// Close stops the shapes queued ahead: none is made after it.
func TestCloseStopsHostWorkAhead(t *testing.T) {
	enginetest.Register()
	r := run.NewRunner(&aheadBackend{})
	big, small := scaleJob(1<<24), scaleJob(4096) // 128 MiB: long enough to Close during it
	r.Prefetch(big)
	r.Prefetch(small)
	r.Close()
	if in, _ := r.HostWorkAhead(small); in {
		t.Error("a shape queued ahead was made after Close")
	}
}
