package softmaxbwd

import (
	"github.com/mltop/mltop/kernels/kit/host"
)

func init() { host.RegisterKernel("softmax_bwd", CPUSoftmaxBwd) }

// CPUSoftmaxBwd is the CPU softmax backward (see the softmax_bwd plan
// contract): group x owns row x. The row is split into WG contiguous
// chunks, one partial Σ dY·Y per chunk (the GPU's per-thread partials),
// combined by a pairwise tree as the GPU's threadgroup reduction does; then
// dX = Y·(dY − Σ).
func CPUSoftmaxBwd(g *host.Group) {
	wg := g.Macro("WG")
	dt := g.DType()
	cols := g.Int("cols")
	row := g.ID[0]
	if row >= g.Int("rows") {
		return
	}
	Y, dY, dX := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt)
	y := g.Scratch(cols)
	dy := g.Scratch(cols)
	part := g.Scratch(wg)
	off := row * cols
	Y.Load(off, y)
	dY.Load(off, dy)

	chunk := (cols + wg - 1) / wg
	for w := range wg {
		lo := min(w*chunk, cols)
		hi := min(lo+chunk, cols)
		var a float32
		for c := lo; c < hi; c++ {
			a += dy[c] * y[c]
		}
		part[w] = a
	}
	for stride := wg / 2; stride > 0; stride /= 2 {
		for w := range stride {
			part[w] += part[w+stride]
		}
	}
	sum := part[0]
	for c := range y {
		dy[c] = y[c] * (dy[c] - sum)
	}
	dX.Store(off, dy)
}
