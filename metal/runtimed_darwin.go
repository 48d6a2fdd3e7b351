//go:build darwin

package metal

import (
	"github.com/mltop/mltop/metal/mtl"
	"github.com/mltop/mltop/profiler"
)

// RunTimed runs the launches in one command buffer, waits, and returns
// its GPUStartTime to GPUEndTime in seconds (profiler.RunTimer): the
// device's time in the runner's verification run. Run is RunTimed without
// the time. A buffer whose GPU times are not usable gives 0 (not timed), not
// an error: the run itself went through.
func (b *Backend) RunTimed(ls []profiler.Launch) (float64, error) {
	ps, err := prepare(ls)
	if err != nil {
		return 0, err
	}
	var sec float64
	err = b.do(func() error {
		cb := b.queue.CommandBuffer()
		for i := range ps {
			b.encode(cb, &ps[i], mtl.SampleSpan{})
		}
		if err := commitWait(cb); err != nil {
			return err
		}
		if ns, err := CmdBufDuration(cb.GPUStartTime(), cb.GPUEndTime()); err == nil {
			sec = ns / 1e9
		}
		return nil
	})
	return sec, err
}
