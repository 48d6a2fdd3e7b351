package run

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// restorer returns what puts the plan's restored buffers (roles inout and
// scratch_reset, see Role.Restored) back to their initial values before a
// rep, or nil when it has none.
func (r *Runner) restorer(plan *profiler.Plan, bufs map[string]profiler.Buffer) func() error {
	return r.resetter(plan, bufs, profiler.Role.Restored)
}

// resetter returns what puts the plan's buffers whose role which accepts
// back to their initial values, or nil when there are none: a fill for
// zero and poison, else a device copy from the pristine copies where the
// backend copies on the device (profiler.Copier), else an upload of the
// cached initial bytes.
func (r *Runner) resetter(plan *profiler.Plan, bufs map[string]profiler.Buffer, which func(profiler.Role) bool) func() error {
	var reset []profiler.BufferSpec
	for _, b := range plan.Buffers {
		if which(b.Role) {
			reset = append(reset, b)
		}
	}
	if len(reset) == 0 {
		return nil
	}
	r.mu.Lock()
	set := r.inputs.cur
	r.mu.Unlock()
	return func() error {
		for _, b := range reset {
			buf := bufs[b.Name]
			switch {
			case b.Init == profiler.InitPoison: // a scratch_reset buffer may be poison (inout may not)
				if err := r.fillWhole(buf, 0xff, &r.inputs.poison); err != nil {
					return fmt.Errorf("%s: %w", b.Name, err)
				}
				continue
			case !b.Init.Generated(): // zeros
				if err := r.fillWhole(buf, 0, &r.inputs.zero); err != nil {
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

// runSetup runs the setup dispatches, if any, then puts the plan's
// scratch_reset buffers back to their initial values, so that the run
// after them starts from the state every timed rep starts from. The
// device time of the setup run counts in ph.VerifyGPU.
func (r *Runner) runSetup(setup []profiler.Launch, plan *profiler.Plan, bufs map[string]profiler.Buffer, ph *profiler.Phases) error {
	if len(setup) == 0 {
		return nil
	}
	if err := r.runVerification(setup, ph); err != nil {
		return fmt.Errorf("setup dispatch: %w", err)
	}
	reset := r.resetter(plan, bufs, func(role profiler.Role) bool { return role == profiler.ScratchReset })
	if reset == nil {
		return nil
	}
	if err := reset(); err != nil {
		return fmt.Errorf("resetting the scratch buffers after the setup dispatches: %w", err)
	}
	return nil
}

// runVerification runs the launches once, untimed by the stopping rule:
// the setup dispatches and the verification run before timing. Where the
// backend times its runs on the device (profiler.RunTimer), that time is
// added to ph.VerifyGPU: the GPU's share of the verify phase, which the
// sweep's summary counts as the device running kernels.
func (r *Runner) runVerification(launches []profiler.Launch, ph *profiler.Phases) error {
	rt, ok := r.backend.(profiler.RunTimer)
	if !ok {
		return r.backend.Run(launches)
	}
	sec, err := rt.RunTimed(launches)
	if err == nil && sec > 0 {
		ph.VerifyGPU += sec
	}
	return err
}
