package scaffold

import (
	"fmt"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// markCooperative makes the dispatch of a CUDA kernel that waits on a
// grid-wide barrier (this_grid().sync(), user.GridSyncs) cooperative,
// with a grid capped at what is resident at once.
func (c *context) markCooperative(p *plan, d *dispatch, sig csrc.Signature) {
	if c.lang != "cuda" {
		return
	}
	syncs := user.GridSyncs(c.src, sig.Entry)
	if len(syncs) == 0 {
		return
	}
	s := syncs[0]
	d.cooperative = fmt.Sprintf("%s %s waits for every block: all must be resident at once", p.lines.at(s.Line), s.Call)
	d.grid[0] = fmt.Sprintf("min(%s, %s)", d.grid[0], user.MaxCoresident)
}
