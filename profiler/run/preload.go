package run

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Preloader is implemented by backends that can load a compiled program
// onto the device off their device thread (CUDA: the module loaded on a
// second thread with the context current), so that the spec that runs it
// finds its kernel ready. The Runner calls Preload after the program's
// Precompile, from one loader goroutine (one load at a time, the compile
// pool never waits for it) and never while a spec's samples are timed
// (see loadGate). It must be safe to call beside the device
// thread's work. An error is not the spec's: the spec compiles and loads
// the program in its turn (Compile), and reports that error if it fails
// too.
type Preloader interface {
	Preload(p profiler.Program) (profiler.Kernel, error)
}

// aheadLoad is how a program's load ahead went, until the first spec that
// runs it takes it (kernel): the time it took (that spec's Phases.Ahead),
// or why it failed (a note on that spec when its own load works).
type aheadLoad struct {
	took time.Duration
	err  error
}

// errRunnerClosed: the Runner closed before a load ahead could start.
var errRunnerClosed = errors.New("the runner was closed")

// preload loads program p (key: programKey) ahead on pl, unless it is
// loaded or being loaded already. One load at a time: the device thread,
// reaching the spec, waits for at most the one in flight.
func (r *Runner) preload(pl Preloader, key string, p profiler.Program) {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	r.mu.Lock()
	_, done := r.kernels[key]
	if done || r.loading[key] != nil || r.closed {
		r.mu.Unlock()
		return
	}
	loaded := make(chan struct{})
	r.loading[key] = loaded
	r.mu.Unlock()
	k, took, err := r.loadAhead(pl, p)
	r.mu.Lock()
	delete(r.loading, key)
	if err == nil {
		r.kernels[key] = k
	}
	if !errors.Is(err, errRunnerClosed) {
		r.aheadLoads[key] = aheadLoad{took: took, err: err}
	}
	r.mu.Unlock()
	close(loaded)
}

// loadAhead is pl.Preload(p) inside the load gate; a panic is an error.
func (r *Runner) loadAhead(pl Preloader, p profiler.Program) (k profiler.Kernel, took time.Duration, err error) {
	if !r.gate.enter() {
		return nil, 0, errRunnerClosed
	}
	defer r.gate.leave()
	defer func() {
		if v := recover(); v != nil {
			k, err = nil, fmt.Errorf("panic: %v", v)
		}
	}()
	start := time.Now()
	k, err = pl.Preload(p)
	return k, time.Since(start), err
}

// loadGate keeps the loads ahead out of a spec's timed launches: a module
// load touches the device (under CUDA's lazy loading it may synchronize
// the context), which the GPU timestamps must not see. The measurement
// shuts the gate as its warm-up starts (no load starts after), drains it
// before the first timed launch (the load in flight ends during the
// warm-up), and opens it when the timed launches are over.
type loadGate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	shut    bool // a spec is warming up or timed: no load starts
	loading int  // loads in flight
	closed  bool // the Runner closed: no load starts, ever
}

func (g *loadGate) wake() *sync.Cond {
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	return g.cond
}

// enter waits until no spec is timed and counts a load in; false: the
// Runner closed, load nothing.
func (g *loadGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.shut && !g.closed {
		g.wake().Wait()
	}
	if g.closed {
		return false
	}
	g.loading++
	return true
}

// leave counts a load out.
func (g *loadGate) leave() {
	g.mu.Lock()
	g.loading--
	g.wake().Broadcast()
	g.mu.Unlock()
}

// close lets no load start again, and wakes those waiting to.
func (g *loadGate) close() {
	g.mu.Lock()
	g.closed = true
	g.wake().Broadcast()
	g.mu.Unlock()
}

// shutOut stops new loads from starting (the warm-up begins).
func (g *loadGate) shutOut() {
	g.mu.Lock()
	g.shut = true
	g.mu.Unlock()
}

// drain waits until no load is in flight (before the first timed launch).
func (g *loadGate) drain() {
	g.mu.Lock()
	for g.loading > 0 {
		g.wake().Wait()
	}
	g.mu.Unlock()
}

// open lets loads start again (the timed launches are over).
func (g *loadGate) open() {
	g.mu.Lock()
	g.shut = false
	g.wake().Broadcast()
	g.mu.Unlock()
}
