package run

import (
	"runtime"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// Precompiler is implemented by backends that can compile a program ahead
// of time, off their device thread (CUDA: NVRTC into the compile cache).
// Precompile compiles p and returns when it is done (it may block for the
// whole compile); it must be safe to call from several goroutines at once
// and must never fail loudly: the real Compile reports errors when the spec
// runs (a failed precompile is simply compiled again there, so the error
// lands on the spec it belongs to). The Runner calls it from a bounded pool
// of goroutines (see CompileWorkers).
type Precompiler interface {
	Precompile(p profiler.Program)
}

// Prefetcher is an Executor that can start preparing a job it will be
// asked to run later, so compiling upcoming specs (and making the inputs
// and reference of the next shape) overlaps measuring the current one.
type Prefetcher interface {
	Prefetch(j profiler.Job)
}

// CompileWorkers is how many programs a Runner compiles at once ahead of
// the spec it measures: half the host's cores, at least 1, at most 8.
// NVRTC is CPU-bound and thread-safe, and the measurement needs one core
// (the device thread) plus a little: GPU timing comes from device events,
// so a busy host shifts launch gaps, not kernel times; half the cores
// leaves the device thread and the OS room.
func CompileWorkers() int { return max(1, min(runtime.NumCPU()/2, 8)) }

// Lookahead is how many specs after the current one Jobs hands to a
// Prefetcher: twice the compile workers, so that the pool has work while
// the nearest specs finish compiling, and no more (a sweep stopped early
// wastes at most that many compiles).
func Lookahead() int { return 2 * CompileWorkers() }

// compilePool runs precompiles on a fixed number of goroutines in the
// order they were asked for (first in, first out: the nearest upcoming
// spec is compiled first).
type compilePool struct {
	once  sync.Once
	mu    sync.Mutex
	cond  *sync.Cond
	queue []func()
	size  int
	stop  bool
}

func (p *compilePool) submit(size int, f func()) {
	p.once.Do(func() {
		p.cond = sync.NewCond(&p.mu)
		p.size = size
		for range size {
			go p.loop()
		}
	})
	p.mu.Lock()
	if !p.stop {
		p.queue = append(p.queue, f)
		p.cond.Signal()
	}
	p.mu.Unlock()
}

func (p *compilePool) loop() {
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.stop {
			p.cond.Wait()
		}
		if p.stop {
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		f()
	}
}

// close drops the queued work and ends the goroutines once their current
// compile returns.
func (p *compilePool) close() {
	p.mu.Lock()
	p.stop = true
	p.queue = nil
	if p.cond != nil {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// Prefetch plans j's spec and queues its programs for the backend's
// precompiler on the Runner's compile pool, and starts making the inputs
// and reference of its shape when they are not at hand (see
// prefetchHostWork). It returns at once.
func (r *Runner) Prefetch(j profiler.Job) {
	pc, ok := r.backend.(Precompiler)
	if !ok {
		return
	}
	prep, err := Prepare(j.Spec, r.dev, PrepareOptions{SkipFit: true, Cache: r.plans})
	if err != nil {
		return
	}
	r.prefetchHostWork(prep, j.Options.WithDefaults())
	plan := prep.Plan
	for _, ds := range [][]profiler.Dispatch{plan.Setup, plan.Dispatches} {
		for _, d := range ds {
			if d.Zero != "" {
				continue
			}
			key := programKey(d.Program)
			r.mu.Lock()
			_, done := r.kernels[key]
			queued := r.queued[key]
			if !done && !queued {
				r.queued[key] = true
			}
			r.mu.Unlock()
			if done || queued {
				continue
			}
			prog := d.Program
			r.pool.submit(r.workers, func() {
				pc.Precompile(prog)
			})
		}
	}
}
