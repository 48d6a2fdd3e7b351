package run_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// preloadingBackend loads programs ahead (run.Preloader), failing to for
// those in failLoad, and fails to compile those in failCompile; it
// records what it loaded ahead and what it compiled in a spec's turn.
type preloadingBackend struct {
	enginetest.MemBackend

	mu                    sync.Mutex
	preloaded, compiled   []string
	failLoad, failCompile map[string]bool
	calledLoad            chan string // each Preload's program, when not nil
	precompiled           chan string // each Precompile's program, when not nil
}

func (b *preloadingBackend) Precompile(p profiler.Program) {
	if b.precompiled != nil {
		b.precompiled <- progName(p)
	}
}

func (b *preloadingBackend) Preload(p profiler.Program) (profiler.Kernel, error) {
	if b.calledLoad != nil {
		b.calledLoad <- progName(p)
	}
	time.Sleep(time.Millisecond) // a load takes time: the spec's Ahead phase is not 0
	b.mu.Lock()
	defer b.mu.Unlock()
	b.preloaded = append(b.preloaded, progName(p))
	if b.failLoad[progName(p)] {
		return nil, errors.New("cuModuleLoadData: out of memory (test)")
	}
	return b.MemBackend.Compile(p)
}

func (b *preloadingBackend) Compile(p profiler.Program) (profiler.Kernel, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.compiled = append(b.compiled, progName(p))
	if b.failCompile[progName(p)] {
		return nil, errors.New("error: expected ';' (test)")
	}
	return b.MemBackend.Compile(p)
}

func wgJob(wg int) profiler.Job {
	sp := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": 64}}
	return profiler.Job{Spec: sp, Options: enginetest.QuickOptions()}
}

// A kernel loaded ahead is the one the spec runs: it is not compiled or
// loaded again in the spec's turn, and the load's time is the spec's
// Ahead phase, once.
func TestRunnerUsesKernelLoadedAhead(t *testing.T) {
	b := &preloadingBackend{}
	r := run.NewRunner(b)
	defer r.Close()
	jobs := []profiler.Job{wgJob(32), wgJob(64), wgJob(128)}
	for _, j := range jobs {
		r.Prefetch(j)
	}
	if n := r.LoadsAhead(3); n != 3 {
		t.Fatalf("%d programs loaded ahead, want 3", n)
	}
	for _, j := range jobs {
		res := r.Run(context.Background(), j.Spec, j.Options, nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("%s: %s (%s)", j.Spec, res.Status, res.Error)
		}
		if res.Phases.Ahead <= 0 {
			t.Errorf("%s: Ahead phase %v, want the load's time", j.Spec, res.Phases.Ahead)
		}
	}
	again := r.Run(context.Background(), jobs[0].Spec, jobs[0].Options, nil)
	if again.Phases.Ahead != 0 {
		t.Errorf("a kernel's load ahead counted twice: the second spec that runs it has Ahead %v", again.Phases.Ahead)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.compiled) != 0 {
		t.Errorf("compiled in the specs' turn %v, want nothing (all loaded ahead)", b.compiled)
	}
	slices.Sort(b.preloaded)
	if want := []string{"scale 128", "scale 32", "scale 64"}; !slices.Equal(b.preloaded, want) {
		t.Errorf("loaded ahead %v, want %v", b.preloaded, want)
	}
}

// A load ahead that fails is done again in the spec's turn: the spec runs
// and says so in a note. When its own compile fails too, that error is
// the spec's, without the note.
func TestRunnerLoadAheadFailureFallsBack(t *testing.T) {
	b := &preloadingBackend{failLoad: map[string]bool{"scale 64": true, "scale 128": true}, failCompile: map[string]bool{"scale 128": true}}
	r := run.NewRunner(b)
	defer r.Close()
	for _, wg := range []int{64, 128} {
		r.Prefetch(wgJob(wg))
	}
	if n := r.LoadsAhead(2); n != 2 {
		t.Fatalf("%d loads ahead recorded, want 2", n)
	}
	j := wgJob(64)
	res := r.Run(context.Background(), j.Spec, j.Options, nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("after a failed load ahead: %s (%s), want ok", res.Status, res.Error)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.Contains(n, "ahead failed") && strings.Contains(n, "out of memory (test)")
	}) {
		t.Errorf("notes %q do not say the load ahead failed and why", res.Notes)
	}
	if res.Phases.Ahead != 0 {
		t.Errorf("a failed load ahead counted as Ahead %v", res.Phases.Ahead)
	}
	j = wgJob(128)
	res = r.Run(context.Background(), j.Spec, j.Options, nil)
	if res.Status != profiler.StatusCompileError || !strings.Contains(res.Error, "expected ';' (test)") {
		t.Errorf("both loads failed: %s (%s), want compile_error with the compile's own error", res.Status, res.Error)
	}
	if strings.Contains(res.Error, "out of memory") || len(res.Notes) > 0 && slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "ahead") }) {
		t.Errorf("the spec's compile error carries the load ahead's: %q, notes %q", res.Error, res.Notes)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if want := []string{"scale 64", "scale 128"}; !slices.Equal(b.compiled, want) {
		t.Errorf("compiled in the specs' turn %v, want %v", b.compiled, want)
	}
}

// Close does not wait for a load ahead that waits for the gate (a spec
// being timed), and that load never runs.
func TestRunnerCloseStopsWaitingLoads(t *testing.T) {
	b := &preloadingBackend{calledLoad: make(chan string, 8)}
	r := run.NewRunner(b)
	r.ShutLoads()
	r.Prefetch(wgJob(32))
	if !r.WaitLoading() {
		t.Fatal("the load ahead never reached the gate")
	}
	closed := make(chan struct{})
	go func() {
		r.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on a load ahead waiting for the gate")
	}
	select {
	case p := <-b.calledLoad:
		t.Errorf("%s was loaded ahead after Close", p)
	default:
	}
}

// While a spec is timed (the load gate shut), the loads ahead wait, but
// the compile pool goes on compiling the programs ahead.
func TestCompilePoolDoesNotWaitForLoads(t *testing.T) {
	b := &preloadingBackend{calledLoad: make(chan string, 8), precompiled: make(chan string, 8)}
	r := run.NewRunner(b)
	defer r.Close()
	r.ShutLoads()
	jobs := []profiler.Job{wgJob(32), wgJob(64), wgJob(128)}
	for _, j := range jobs {
		r.Prefetch(j)
	}
	var got []string
	for range jobs {
		select {
		case p := <-b.precompiled:
			got = append(got, p)
		case <-time.After(10 * time.Second):
			t.Fatalf("precompiled only %v with the load gate shut", got)
		}
	}
	select {
	case p := <-b.calledLoad:
		t.Errorf("%s loaded ahead with the gate shut", p)
	default:
	}
}
