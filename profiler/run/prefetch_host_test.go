package run_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// aheadBackend compiles ahead (a GPU backend, as far as the Runner knows).
type aheadBackend struct{ enginetest.MemBackend }

func (*aheadBackend) Precompile(profiler.Program) {}

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
	if res := r.Run(context.Background(), a.Spec, a.Options, nil); res.Status != profiler.StatusOK {
		t.Fatalf("first shape: %s %s", res.Status, res.Error)
	}
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
