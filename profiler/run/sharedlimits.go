package run

import (
	"errors"
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// SharedLimits are the per-group limits every GPU of a backend shares:
// they hold without a device, so a sweep counted away from its GPU (a
// --dry-run of a CUDA sweep on a laptop) still refuses the specs no GPU
// of the backend runs.
type SharedLimits struct {
	Backend string // the backend the specs are planned for: "cuda", "metal", "cpu" (no limits: it refuses user kernels)
	GPUs    string // how a reason names its GPUs: "CUDA GPU", "Apple GPU"
	Threads int    // threads per group
	// StaticTGM caps the threadgroup memory a kernel declares (CUDA's
	// static __shared__ arrays: 48 KiB); 0: no cap of its own.
	StaticTGM int
	// TGM caps all of a group's threadgroup memory, with any opt-in.
	TGM int
}

// refuses says why no GPU of l's backend runs job j's spec; nil when one
// may (or when the spec does not plan without a device: the run says
// why). The spec is planned on a device that gives no limits of its own.
func (l *SharedLimits) refuses(j profiler.Job, cache *PlanCache) (why error) {
	defer func() {
		if recover() != nil { // a family that needs a real device's figures to plan
			why = nil
		}
	}()
	dev := profiler.DeviceInfo{Backend: l.Backend, Name: "every " + l.GPUs}
	prep, err := Prepare(j.Spec, dev, PrepareOptions{Mode: j.Options.CacheMode(), Cache: cache, SkipFit: true})
	var refusal *profiler.BackendRefusal
	if errors.As(err, &refusal) {
		return err // no device of the backend runs it (a user kernel without its source)
	}
	if err != nil || prep.Plan == nil {
		return nil
	}
	if l.Backend == "cpu" {
		return cpuRefuses(j.Spec, prep.Plan)
	}
	for _, d := range prep.Plan.Dispatches {
		if err := l.over(d); err != nil {
			return err
		}
	}
	return nil
}

// over says which shared limit dispatch d goes over; nil for none.
func (l *SharedLimits) over(d profiler.Dispatch) error {
	if n := d.Threads(); l.Threads > 0 && n > l.Threads {
		return fmt.Errorf("dispatch %s: %d threads per group (threads %v); no %s runs more than %d: lower the threads", d.Name, n, d.Group, l.GPUs, l.Threads)
	}
	total := d.TGMBytes()
	if static := total - d.DynamicTGM; l.StaticTGM > 0 && static > l.StaticTGM {
		return fmt.Errorf("dispatch %s: %d B of static shared memory per block (%s); no %s gives static arrays more than %d B (%d KiB): make the large arrays dynamic (extern __shared__, dynamic_tgm)",
			d.Name, static, d.TGMParts(), l.GPUs, l.StaticTGM, l.StaticTGM>>10)
	}
	if l.TGM > 0 && total > l.TGM {
		return fmt.Errorf("dispatch %s: %d B of threadgroup memory per group (%s); no %s gives a group more than %d B (%d KiB)", d.Name, total, d.TGMParts(), l.GPUs, l.TGM, l.TGM>>10)
	}
	return nil
}

// String is "1024 threads per group, 48 KiB of static shared memory per
// group, 227 KiB in all".
func (l *SharedLimits) String() string {
	s := fmt.Sprintf("%d threads per group", l.Threads)
	if l.StaticTGM > 0 {
		return s + fmt.Sprintf(", %d KiB of static shared memory per block, %d KiB in all", l.StaticTGM>>10, l.TGM>>10)
	}
	return s + fmt.Sprintf(", %d KiB of threadgroup memory", l.TGM>>10)
}
