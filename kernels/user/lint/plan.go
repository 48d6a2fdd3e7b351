package lint

import (
	"github.com/mltop/mltop/profiler"
)

// planned are the distinct programs of a language's default specs (one
// per dtype), with the dtype each was made for.
type planned struct {
	progs []profiler.Program
	dts   []profiler.DType
}

// planStep plans the default spec of each dtype for each source language
// on a device without limits. A spec that does not plan is an error.
func planStep(r *Result) map[string]planned {
	f := r.Family
	out := map[string]planned{}
	for _, lang := range f.Languages() {
		var pl planned
		seen := map[string]bool{}
		ok := true
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
			plan, err := f.Plan(s, profiler.DeviceInfo{Backend: lang, Name: "mltop check"})
			if err != nil {
				r.add(Error, StepPlan, f.Path(), 0, 0, "%s: the default spec does not plan: %v", s, err)
				ok = false
				break
			}
			for _, d := range append(plan.Setup, plan.Dispatches...) {
				if key := d.Program.Entry + "\x00" + d.Program.Code; d.Zero == "" && !seen[key] {
					seen[key] = true
					pl.progs = append(pl.progs, d.Program)
					pl.dts = append(pl.dts, dt)
				}
			}
		}
		if ok {
			out[lang] = pl
		}
	}
	return out
}
