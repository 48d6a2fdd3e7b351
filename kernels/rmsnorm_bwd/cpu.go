package rmsnormbwd

import (
	"math"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

func init() { host.RegisterKernel("rmsnorm_bwd", CPURMSNormBwd) }

// CPURMSNormBwd is the CPU RMSNorm backward (see the rmsnorm_bwd plan
// contract in kernels/rmsnorm_bwd/rmsnorm_bwd.go): group x owns rows [x·RPG, …). Per
// row, Σx² and Σ dY·w·x are accumulated in f32 in WG chunks combined as a
// tree (the GPU's per-thread partials), dX is written, and the row's
// dY·x·r is added to the group's dW partials; the partials go into dW with
// one atomic add per column at the end.
func CPURMSNormBwd(g *host.Group) {
	wg, rpg, d := g.Macro("WG"), g.Macro("RPG"), g.Macro("D")
	dt := g.DType()
	rows := g.Int("rows")
	eps := g.Float("eps")
	X, W, dY, dX, dW := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, dt), g.Arg(4, profiler.F32)
	w := g.Scratch(d)
	W.Load(0, w)
	x, dy, acc := g.Scratch(d), g.Scratch(d), g.Scratch(d)
	ss, dot := g.Scratch(wg), g.Scratch(wg)
	chunk := (d + wg - 1) / wg
	r0 := g.ID[0] * rpg
	if r0 >= rows {
		return
	}
	for r := r0; r < min(r0+rpg, rows); r++ {
		X.Load(r*d, x)
		dY.Load(r*d, dy)
		for t := range wg {
			var a, b float32
			for c := min(t*chunk, d); c < min((t+1)*chunk, d); c++ {
				a += x[c] * x[c]
				b += dy[c] * w[c] * x[c]
			}
			ss[t], dot[t] = a, b
		}
		for s := wg / 2; s > 0; s /= 2 {
			for t := range s {
				ss[t] += ss[t+s]
				dot[t] += dot[t+s]
			}
		}
		rinv := float32(1 / math.Sqrt(float64(ss[0]/float32(d)+eps)))
		k := rinv * rinv * rinv / float32(d) * dot[0]
		for c := range d {
			acc[c] += dy[c] * x[c] * rinv
			x[c] = rinv*w[c]*dy[c] - x[c]*k
		}
		dX.Store(r*d, x)
	}
	for c, v := range acc {
		dW.AtomicAdd(c, v)
	}
}
