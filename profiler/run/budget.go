package run

import (
	"errors"
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// BuildBudget holds a dispatch's named TGM items against the device limit
// and the compiler's figures (attrs may be zero when nothing was compiled).
func BuildBudget(d *profiler.Dispatch, dev profiler.DeviceInfo, attrs profiler.KernelAttrs) profiler.BudgetReport {
	b := profiler.BudgetReport{Dispatch: d.Name, Items: d.TGM, Total: d.TGMBytes(), Limit: profiler.TGMLimit(dev, d), CompilerTGM: attrs.StaticTGM, Threads: d.Threads(), MaxThreads: attrs.MaxThreads}
	if b.Limit > 0 && b.Total > b.Limit {
		b.Warnings = append(b.Warnings, fmt.Sprintf("TGM %d B exceeds the %d B limit by %d B", b.Total, b.Limit, b.Total-b.Limit))
	}
	if attrs.MaxThreads > 0 && b.Threads > attrs.MaxThreads {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d threads requested but the compiled kernel allows %d (its launch bounds or register use)", b.Threads, attrs.MaxThreads))
	}
	if TGMItemsDisagree(d, attrs.StaticTGM) {
		b.Warnings = append(b.Warnings, fmt.Sprintf("compiler reports %d B static + %d B dynamic TGM, the plan's items sum to %d B", attrs.StaticTGM, d.DynamicTGM, b.Total))
	}
	if attrs.SpillBytes > 0 {
		w := fmt.Sprintf("%d B of register spills", attrs.SpillBytes)
		if r := dev.LocalReserve; r > 0 && attrs.SpillBytes > r {
			// See cuda.LocalReserveEnv.
			w += fmt.Sprintf(", beyond the %d B per thread of local memory reserved at start-up: it grows at the kernel's first launch, wherever earlier buffers left room, so its time can move a few %% from run to run; MLTOP_CUDA_LOCAL_RESERVE=%d reserves enough", r, (attrs.SpillBytes+1023)&^1023)
		}
		b.Warnings = append(b.Warnings, w)
	}
	return b
}

// TGMItemsDisagree says whether d's named TGM items do not add up to the
// static threadgroup memory the compiler reports plus d's dynamic bytes,
// so that the budget built from the items is wrong (false when either is
// unknown). A shortfall of the items under 16 bytes is padding, not a
// wrong plan: Metal allocates in 16-byte granules, CUDA aligns arrays.
func TGMItemsDisagree(d *profiler.Dispatch, static int) bool {
	diff := static + d.DynamicTGM - d.TGMBytes()
	return static > 0 && d.TGMBytes() > 0 && (diff >= 16 || diff < 0)
}

// EstimateOccupancy is the limit-table estimate of resident groups per unit
// from threads, TGM and (when known) registers per thread, by
// profiler.BlocksPerUnit. Backends with a better source (the CUDA driver)
// answer themselves; Metal and the TUI's preview use this.
func EstimateOccupancy(dev profiler.DeviceInfo, d *profiler.Dispatch, attrs profiler.KernelAttrs) profiler.Occupancy {
	o := profiler.Occupancy{Dispatch: d.Name, Estimate: true, Registers: attrs.Registers, SpillBytes: attrs.SpillBytes, Source: "limits table"}
	threads := d.Threads()
	if threads == 0 || dev.MaxThreadsPerUnit == 0 {
		o.Reason = fmt.Sprintf("%s reports no per-%s limits", dev.Backend, unitName(dev))
		return o
	}
	n, limiter := profiler.BlocksPerUnit(dev, profiler.Block{Threads: threads, SharedBytes: d.TGMBytes(), Registers: attrs.Registers})
	o.Available = true
	o.GroupsPerUnit = n
	o.Limiter = limiter
	o.ThreadsPct = 100 * float64(n*threads) / float64(dev.MaxThreadsPerUnit)
	return o
}

func unitName(dev profiler.DeviceInfo) string {
	if dev.UnitName != "" {
		return dev.UnitName
	}
	return "unit"
}

// Preview is what the TUI shows before anything runs: the plan's budget and
// an occupancy estimate for the current knobs.
type Preview struct {
	Spec      profiler.Spec
	Plan      *profiler.Plan
	Budget    []profiler.BudgetReport
	Occupancy []profiler.Occupancy
	Err       error // the family's rules rejected the spec (the reason is shown in red)
}

// MakePreview plans s against dev without touching a device.
func MakePreview(s profiler.Spec, dev profiler.DeviceInfo) Preview {
	prep, err := Prepare(s, dev, PrepareOptions{SkipFit: true})
	p := Preview{Spec: prep.Spec, Err: err}
	plan := prep.Plan
	if err != nil {
		var pe *PrepareError
		if !errors.As(err, &pe) || pe.Stage != StageRules {
			return p
		}
		// Families refuse what breaks their rules. Prepare again without
		// the TGM limit: when that is the only rule broken, the budget can
		// show how far over the limit the tile is.
		unlimited := dev
		unlimited.TGMPerGroup, unlimited.TGMPerGroupOptIn = 1<<30, 0
		again, uerr := Prepare(s, unlimited, PrepareOptions{SkipFit: true})
		if uerr != nil {
			return p
		}
		plan = again.Plan
	}
	p.Plan = plan
	for i := range plan.Dispatches {
		d := &plan.Dispatches[i]
		if d.Zero != "" {
			continue
		}
		p.Budget = append(p.Budget, BuildBudget(d, dev, profiler.KernelAttrs{}))
		p.Occupancy = append(p.Occupancy, EstimateOccupancy(dev, d, profiler.KernelAttrs{}))
	}
	return p
}

// overCompiledThreads is the first launch whose threads per group are more
// than its compiled kernel allows (the driver's or the pipeline's maximum:
// a CUDA kernel's __launch_bounds__, or its registers), as an error that
// makes the spec invalid before anything is allocated: the GPU would
// refuse the launch.
func overCompiledThreads(launches []profiler.Launch) error {
	for _, l := range launches {
		if l.Kernel == nil {
			continue
		}
		if most := l.Kernel.Attrs().MaxThreads; most > 0 && l.Dispatch.Threads() > most {
			return fmt.Errorf("dispatch %s: %d threads per group, but its compiled kernel allows %d (its __launch_bounds__, or the registers it uses): lower the threads expression or the knobs it reads", l.Dispatch.Name, l.Dispatch.Threads(), most)
		}
	}
	return nil
}
