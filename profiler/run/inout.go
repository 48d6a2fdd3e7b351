package run

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// restorer returns what puts the plan's in-place buffers (role inout) back
// to their initial values before a timed rep, or nil when it has none: a
// device copy from the pristine copies where the backend copies on the
// device (profiler.Copier), else an upload of the cached initial bytes.
func (r *Runner) restorer(plan *profiler.Plan, bufs map[string]profiler.Buffer) func() error {
	var inout []profiler.BufferSpec
	for _, b := range plan.Buffers {
		if b.Role == profiler.InOut {
			inout = append(inout, b)
		}
	}
	if len(inout) == 0 {
		return nil
	}
	r.mu.Lock()
	set := r.inputs.cur
	r.mu.Unlock()
	return func() error {
		for _, b := range inout {
			buf := bufs[b.Name]
			if !b.Init.Generated() { // zeros
				if err := r.fill(buf, b.Bytes(), 0, &r.inputs.zero); err != nil {
					return fmt.Errorf("%s: %w", b.Name, err)
				}
				continue
			}
			if r.restore(b, buf) {
				continue
			}
			r.mu.Lock()
			raw := set.raw[b.Name]
			r.mu.Unlock()
			if int64(len(raw)) != b.Bytes() {
				return fmt.Errorf("%s: no initial values to restore (%d of %d bytes cached)", b.Name, len(raw), b.Bytes())
			}
			if err := r.backend.Upload(buf, raw); err != nil {
				return fmt.Errorf("%s: %w", b.Name, err)
			}
		}
		return nil
	}
}
