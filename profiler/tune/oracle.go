package tune

import (
	"maps"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// specAt is base with the knob values set.
func specAt(base profiler.Spec, values map[string]int) profiler.Spec {
	s := base.Clone()
	if s.Knobs == nil {
		s.Knobs = map[string]int{}
	}
	maps.Copy(s.Knobs, values)
	return s
}

// allowed is the constraint oracle of a search: what a sweep would call
// invalid before running, asked without the backend — the schema, the
// family's rules, its plan, the device's memory, a user kernel on the CPU
// backend — then the caller's extra rule (a sweep's where: filters).
func allowed(dev profiler.DeviceInfo, base profiler.Spec, opt profiler.Options, extra func(profiler.Spec) error) func(map[string]int) error {
	return func(values map[string]int) error {
		s := specAt(base, values)
		f, full, err := profiler.Resolve(s, dev)
		if err != nil {
			return err
		}
		plan, err := f.Plan(full, dev)
		if err != nil {
			return err
		}
		if err := run.CheckFit(plan, dev, full, opt.Hot); err != nil {
			return err
		}
		if dev.Backend == "cpu" {
			for _, d := range plan.Dispatches {
				if d.Program.Code != "" {
					return errCPUUserKernel
				}
			}
		}
		if extra != nil {
			return extra(full)
		}
		return nil
	}
}

type constError string

func (e constError) Error() string { return string(e) }

const errCPUUserKernel = constError("a user kernel's source does not run on the CPU backend")
