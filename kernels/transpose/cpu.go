package transpose

import (
	"github.com/mltop/mltop/kernels/kit/host"
)

func init() { host.RegisterKernel("transpose", CPUTranspose) }

// CPUTranspose is the CPU transpose (see the transpose plan contract in
// kernels/transpose/transpose.go): group (x, y) stages the TILE×TILE tile of X at
// rows y·TILE, columns x·TILE, and writes it transposed into Y.
func CPUTranspose(g *host.Group) {
	tile := g.Macro("TILE")
	dt := g.DType()
	rows, cols := g.Int("rows"), g.Int("cols")
	r0, c0 := g.ID[1]*tile, g.ID[0]*tile
	if r0 >= rows || c0 >= cols {
		return
	}
	th, tw := min(tile, rows-r0), min(tile, cols-c0)
	X, Y := g.Arg(0, dt), g.Arg(1, dt)
	buf := g.Scratch(tile * tile)
	for r := range th {
		X.Load((r0+r)*cols+c0, buf[r*tile:r*tile+tw])
	}
	col := g.Scratch(th)
	for c := range tw {
		for r := range th {
			col[r] = buf[r*tile+c]
		}
		Y.Store((c0+c)*rows+r0, col)
	}
}
