package crossentropy

import (
	"math"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

func init() { host.RegisterKernel("cross_entropy", CPUCrossEntropy) }

// CPUCrossEntropy is the CPU fused cross entropy (see the cross_entropy plan
// contract in kernels/cross_entropy/cross_entropy.go): group x owns row x. Each of WG
// chunks keeps an online (max, Σexp) in f32, the chunks are merged, then
// loss = lse − x[target] and dX = exp(x − lse) − onehot; a pad row gets 0.
func CPUCrossEntropy(g *host.Group) {
	wg := g.Macro("WG")
	dt := g.DType()
	rows, vocab, pad := g.Int("rows"), g.Int("vocab"), g.Int("pad_id")
	r := g.ID[0]
	if r >= rows {
		return
	}
	X, tg, loss, dX := g.Arg(0, dt), g.Arg(1, profiler.I32), g.Arg(2, profiler.F32), g.Arg(3, dt)
	x := g.Scratch(vocab)
	target := int(tg.At(r))
	if target == pad {
		dX.Store(r*vocab, x) // zeros
		loss.Set(r, 0)
		return
	}
	X.Load(r*vocab, x)
	chunk := (vocab + wg - 1) / wg
	m, s := float32(math.Inf(-1)), float32(0)
	for t := range wg {
		lo, hi := min(t*chunk, vocab), min((t+1)*chunk, vocab)
		if lo == hi {
			continue
		}
		cm := x[lo]
		for _, v := range x[lo:hi] {
			cm = max(cm, v)
		}
		var cs float32
		for _, v := range x[lo:hi] {
			cs += float32(math.Exp(float64(v - cm)))
		}
		nm := max(m, cm)
		s = s*float32(math.Exp(float64(m-nm))) + cs*float32(math.Exp(float64(cm-nm)))
		m = nm
	}
	lse := m + float32(math.Log(float64(s)))
	loss.Set(r, lse-x[target])
	for c, v := range x {
		x[c] = float32(math.Exp(float64(v - lse)))
	}
	x[target]--
	dX.Store(r*vocab, x)
}
