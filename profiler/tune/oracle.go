package tune

import (
	"errors"
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
// invalid before running, asked without the backend through the engine's
// own check (run.Runnable: the schema, the family's rules, its plan, the
// memory in the options' cache mode with their device_limits, a user kernel
// on the CPU backend), then the caller's extra rule (a sweep's where:
// filters). dev is the device as the backend reports it.
func allowed(dev profiler.DeviceInfo, base profiler.Spec, opt profiler.Options, extra func(profiler.Spec) error) func(map[string]int) error {
	cache := run.NewPlanCache(0) // the reason of a refusal is asked again: planned once
	return func(values map[string]int) error {
		job := profiler.Job{Spec: specAt(base, values), Options: opt}
		prep, ok := run.Runnable(job, dev, cache)
		if !ok {
			return refusal(job, dev, cache)
		}
		if extra != nil {
			return extra(prep.Spec)
		}
		return nil
	}
}

// refusal is why run.Runnable refused job: Prepare's error, or else the
// CPU backend's refusal of a user kernel's source.
func refusal(job profiler.Job, dev profiler.DeviceInfo, cache *run.PlanCache) error {
	dev = job.Options.Limits.Apply(dev)
	if _, err := run.Prepare(job.Spec, dev, run.PrepareOptions{Mode: job.Options.CacheMode(), Cache: cache}); err != nil {
		return err
	}
	return errors.New(profiler.CPUCannotRunUser(job.Spec.Kernel))
}
