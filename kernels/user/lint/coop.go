package lint

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mltop/mltop/kernels/user"
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
