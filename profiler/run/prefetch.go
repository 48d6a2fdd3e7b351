package run

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// CompileThreadsEnv sets how many programs a Runner compiles at once
// ahead of the spec it measures (a whole number from 1 to 1024); without it,
// see CompileWorkers.
const CompileThreadsEnv = "MLTOP_COMPILE_THREADS"

// maxCompileWorkers bounds the default pool: one NVRTC compile of a large
// unrolled kernel holds a few hundred MB.
const maxCompileWorkers = 16

// CompileWorkers is how many programs a Runner compiles at once ahead of
// the spec it measures: CompileThreadsEnv when set, else the host's cores
// but one per worker, shared among the workers of the host
// (HostWorkersEnv; 4 workers on 64 cores compile 15 programs each), at
// least 1, at most 16. NVRTC is single-threaded per program, CPU-bound and thread-safe; a
// sweep with an empty compile cache (the first run, or any run after a
// kernel was edited) waits on compiles, not on the GPU, so the pool uses
// the cores (with 8 of 16 cores a cold 448-spec sweep spent 88 of its
// 119 s waiting on NVRTC). GPU timing comes from device timestamps, so a
// busy host shifts launch gaps, not kernel times, and the one core left
// per worker is its device thread's. A bad CompileThreadsEnv is said on
// stderr once.
func CompileWorkers() int {
	hostWorkers, _ := strconv.Atoi(os.Getenv(HostWorkersEnv))
	n, warning := compileWorkersFor(runtime.NumCPU(), hostWorkers, os.Getenv(CompileThreadsEnv))
	if warning != "" {
		compileWarning.Do(func() { fmt.Fprintln(os.Stderr, warning) })
	}
	return n
}

var compileWarning sync.Once

// compileWorkersFor is CompileWorkers for a host of cores cores shared by
// hostWorkers workers (0 or 1: this one alone), with override the value
// of CompileThreadsEnv.
func compileWorkersFor(cores, hostWorkers int, override string) (n int, warning string) {
	workers := max(1, hostWorkers)
	n = max(1, min((cores-workers)/workers, maxCompileWorkers))
	if override == "" {
		return n, ""
	}
	if v, err := strconv.Atoi(override); err == nil && v > 0 && v <= maxCompileThreads {
		return v, ""
	}
	return n, fmt.Sprintf("mltop: %s=%q is not a whole number of compiles from 1 to %d: %d run at once; set it to a count such as 4, or unset it", CompileThreadsEnv, override, maxCompileThreads, n)
}

// maxCompileThreads bounds CompileThreadsEnv: each compile goroutine
// holds an OS thread of its own for the pool's life (inBackground), and
// past Go's 10000 threads the process dies.
const maxCompileThreads = 1024

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
	inBackground() // compiles ahead: the device thread and other workers come first
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
// precompiler on the Runner's compile pool (then loads them ahead, where
// the backend is a Preloader), and starts making the inputs
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
			pl, loads := r.backend.(Preloader)
			r.pool.submit(r.workers, func() {
				pc.Precompile(prog)
				if loads { // queued: the compile pool does not wait for the load gate
					r.loader.submit(1, func() { r.preload(pl, key, prog) })
				}
			})
		}
	}
}
