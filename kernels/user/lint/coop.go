package lint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
)

// lintGridSync notes the dispatches whose device values are a stand-in
// here, and warns about a dispatch whose CUDA kernel waits on a
// grid-wide barrier (this_grid().sync(), g.sync() on a grid_group,
// cg::sync(grid)) but is not `cooperative: true`: launched plainly, the
// blocks of a grid larger than what is resident at once never all reach
// the barrier, and even a small grid's barrier is undefined (a hang or a
// crash).
func lintGridSync(r *Result, code string) {
	f := r.Family
	path := f.SourcePath("cuda")
	for _, d := range f.DispatchInfos() {
		if d.DeviceValues {
			line, col := f.Pos(fmt.Sprintf("$.dispatches[%d].grid", d.Index))
			r.add(Note, StepSource, f.Path(), line, col, "%s", user.StandInNote(d.Name))
		}
		syncs := user.GridSyncs(code, d.Entry)
		if d.Cooperative || len(syncs) == 0 {
			continue
		}
		var at []string
		for _, s := range syncs {
			at = append(at, fmt.Sprintf("%s:%d %s (in %s)", filepath.Base(path), s.Line, s.Call, s.Func))
		}
		line, col := f.Pos(fmt.Sprintf("$.dispatches[%d]", d.Index))
		r.add(Warning, StepSource, f.Path(), line, col,
			"dispatch %s waits on a grid-wide barrier (%s) but is launched plainly, where that barrier is undefined (a hang or a crash): add `cooperative: true` to dispatches[%d], with a grid that fits on the device at once: `grid: [max_coresident]`, or min(<your grid>, max_coresident) for a kernel with a grid-stride loop",
			d.Name, strings.Join(at, ", "), d.Index)
	}
}

// lintCooperativeGrids warns about a `cooperative: true` dispatch whose
// grid, at the tiny shape or the default shape, has more blocks than are
// co-resident on the stand-in device (an H100: what max_coresident is
// here): a cooperative launch of more blocks than fit at once is refused
// by the GPU, so a run at that shape fails however correct the kernel.
func lintCooperativeGrids(r *Result) {
	f := r.Family
	if !slices.ContainsFunc(f.DispatchInfos(), func(d user.DispatchInfo) bool { return d.Cooperative }) {
		return
	}
	dev := profiler.DeviceInfo{Backend: "cuda", Name: "mltop check"}
	dt := f.Schema().DTypes[0]
	if slices.Contains(f.Schema().DTypes, profiler.F32) {
		dt = profiler.F32
	}
	specs := []profiler.Spec{profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())}
	if tiny, _, err := f.TinySpec(dt); err == nil && tiny.String() != specs[0].String() {
		specs = append([]profiler.Spec{tiny}, specs...)
	}
	over := map[string][]string{} // dispatch → where its grid is too large
	var order []string
	for _, s := range specs {
		plan, err := f.Plan(s, dev)
		if err != nil {
			continue // the plan step reports it
		}
		for _, d := range append(plan.Setup, plan.Dispatches...) {
			blocks := d.Grid[0] * d.Grid[1] * d.Grid[2]
			most := user.Coresident(dev, &d)
			if !d.Cooperative || blocks <= most {
				continue
			}
			if over[d.Name] == nil {
				order = append(order, d.Name)
			}
			over[d.Name] = append(over[d.Name], fmt.Sprintf("%d blocks at %s, over the %d co-resident at once", blocks, s, most))
		}
	}
	for _, name := range order {
		line, col := dispatchPos(f, name)
		r.add(Warning, StepPlan, f.Path(), line, col,
			"dispatch %s is `cooperative: true` but its grid has %s on the stand-in device (an H100's %d SMs): the GPU refuses a cooperative launch of more blocks than fit at once; write the grid as `max_coresident`, or min(<your grid>, max_coresident) for a kernel with a grid-stride loop",
			name, strings.Join(over[name], "; "), user.StandInSMs)
	}
}
