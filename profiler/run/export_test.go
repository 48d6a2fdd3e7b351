package run

import (
	"time"

	"github.com/mltop/mltop/profiler"
)

// Test hooks for the external tests of this package.
var (
	WithRoundTrip = withRoundTrip
	Slab          = slab
)

// ProgramKey is programKey for the external tests.
var ProgramKey = programKey

// CompilePool exposes the Runner's compile pool to the external tests.
type CompilePool struct{ p compilePool }

func (c *CompilePool) Submit(size int, f func()) { c.p.submit(size, f) }
func (c *CompilePool) Queued() int {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return len(c.p.queue)
}
func (c *CompilePool) Close() { c.p.close() }

var WarmupFor = warmupFor

// OverCompiledThreads is overCompiledThreads, for the budget tests.
var OverCompiledThreads = overCompiledThreads

// OrderJobs is orderJobs for the external tests.
var OrderJobs = orderJobs

const WarmBusyWindow = warmBusyWindow

var CheckedRanges = checkedRanges

// CountResults is a Summary of results, as a sweep counts them.
func CountResults(rs []profiler.Result) Summary {
	var s Summary
	for _, r := range rs {
		s.count(r)
	}
	return s
}

// RescaleIters is rescaleIters for the external tests.
var RescaleIters = rescaleIters

// SharedCounts says how many shared files r made and how many it read
// from another worker (ShareHostWork).
func (r *Runner) SharedCounts() (made, loaded int64) {
	if r.shared == nil {
		return 0, 0
	}
	return r.shared.made.Load(), r.shared.loaded.Load()
}

// HostWorkAhead waits (up to 5 s) for the host work Prefetch started and
// says whether j's inputs and reference are at hand.
func (r *Runner) HostWorkAhead(j profiler.Job) (inputs, ref bool) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		busy := r.prefetching
		r.mu.Unlock()
		if !busy {
			break
		}
	}
	prep, err := Prepare(j.Spec, r.dev, PrepareOptions{SkipFit: true})
	if err != nil {
		return false, false
	}
	opt := j.Options.WithDefaults()
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.inputs.find(inputKey(prep.Spec, opt.Seed))
	return set != nil && len(set.data) > 0, r.refs[refKey(prep.Spec, opt)] != nil
}

// RangePlaces is where each byte offset of qs lies in ranges (offs, lens)
// downloaded back to back, looked up in the order given.
func RangePlaces(offs, lens, qs []int64) []int64 {
	ri := newRangeIndex(offs, lens)
	out := make([]int64, len(qs))
	for i, q := range qs {
		out[i] = ri.find(q)
	}
	return out
}

// PID is the process id of the pool's current worker (0: none).
func (p *WorkerPool) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil || p.w.cmd.Process == nil {
		return 0
	}
	return p.w.cmd.Process.Pid
}

// InputBudget is the Runner's input cache bound (see inputBudget).
func (r *Runner) InputBudget() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inputBudget
}

// SetInputBudget sets it.
func (r *Runner) SetInputBudget(n int64) {
	r.mu.Lock()
	r.inputBudget = n
	r.mu.Unlock()
}

// WaitHostWorkStarted waits (up to 5 s) until the making of j's inputs
// ahead has begun (its set exists).
func (r *Runner) WaitHostWorkStarted(j profiler.Job) bool {
	prep, err := Prepare(j.Spec, r.dev, PrepareOptions{SkipFit: true})
	if err != nil {
		return false
	}
	key := inputKey(prep.Spec, j.Options.WithDefaults().Seed)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		found := r.inputs.find(key) != nil
		r.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// AcquireStartSlot is acquireStartSlot, for tests that hold a worker's turn.
var AcquireStartSlot = acquireStartSlot

// LoadsAhead waits (up to 5 s) until no load ahead is in flight and at
// least n programs' loads ahead are recorded and not yet taken by a spec,
// and returns how many are.
func (r *Runner) LoadsAhead(n int) int {
	got := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		got = len(r.aheadLoads)
		busy := len(r.loading) > 0
		r.mu.Unlock()
		if got >= n && !busy {
			break
		}
	}
	return got
}

// ShutLoads shuts the runner's load gate, as a measurement's warm-up does.
func (r *Runner) ShutLoads() { r.gate.shutOut() }

// WaitLoading waits (up to 5 s) until a load ahead has begun (it may wait
// for the gate).
func (r *Runner) WaitLoading() bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		busy := len(r.loading) > 0
		r.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}
