package run

import "github.com/mltop/mltop/profiler"

// Precompiler is implemented by backends that can compile a program ahead
// of time, off their device thread (CUDA: NVRTC into the compile cache).
// Precompile must return at once and never fail loudly: the real Compile
// reports errors when the spec runs.
type Precompiler interface {
	Precompile(p profiler.Program)
}

// Prefetcher is an Executor that can start preparing a spec it will be
// asked to run next, so compiling the next spec overlaps measuring the
// current one.
type Prefetcher interface {
	Prefetch(s profiler.Spec)
}

// Prefetch plans s and hands its programs to the backend's precompiler.
func (r *Runner) Prefetch(s profiler.Spec) {
	pc, ok := r.backend.(Precompiler)
	if !ok {
		return
	}
	f, full, err := profiler.Resolve(s, r.dev)
	if err != nil {
		return
	}
	plan, err := f.Plan(full, r.dev)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, ds := range [][]profiler.Dispatch{plan.Setup, plan.Dispatches} {
		for _, d := range ds {
			if d.Zero != "" || seen[programKey(d.Program)] {
				continue
			}
			seen[programKey(d.Program)] = true
			r.mu.Lock()
			_, done := r.kernels[programKey(d.Program)]
			r.mu.Unlock()
			if !done {
				pc.Precompile(d.Program)
			}
		}
	}
}
