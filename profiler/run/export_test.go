package run

import "github.com/mltop/mltop/profiler"

// Test hooks for the external tests of this package.
var (
	WithRoundTrip = withRoundTrip
	DecodeChecked = decodeChecked
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
