package sdpamulti

import (
	"math"

	"github.com/mltop/mltop/kernels/kit/host"
)

func init() { host.RegisterKernel("sdpa_multi", CPUSDPAMulti) }

// CPUSDPAMulti is the CPU multi-query SDPA (see the sdpa_multi plan contract
// in kernels/sdpa_multi/sdpa_multi.go): group (h, r) computes O of query r, head h.
// As on the GPU, the TPG/32 warps take the visible keys round-robin, each
// keeping an online softmax in f32, and the warps are merged at the end.
func CPUSDPAMulti(g *host.Group) {
	tpg, d := g.Macro("TPG"), g.Macro("D")
	causal := g.Macro("CAUSAL") != 0
	dt := g.DType()
	nq, nh, hkv := g.Int("n_query"), g.Int("H"), g.Int("Hkv")
	base, stride := g.Int("base_kv"), g.Int("kv_stride")
	scale := g.Float("scale")
	h, r := g.ID[0], g.ID[1]
	if h >= nh || r >= nq {
		return
	}
	nw := tpg / 32
	n := base + nq
	if causal {
		n = base + r + 1
	}
	Q, K, V, O := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, dt)
	q := g.Scratch(d)
	Q.Load((r*nh+h)*d, q)
	for i := range q {
		q[i] *= scale
	}
	kvBase := h / (nh / hkv) * stride * d
	kr, vr := g.Scratch(d), g.Scratch(d)
	ms, ls := g.Scratch(nw), g.Scratch(nw)
	os := g.Scratch(nw * d)
	for w := range nw {
		m, l := float32(math.Inf(-1)), float32(0)
		o := os[w*d : (w+1)*d]
		for j := w; j < n; j += nw {
			K.Load(kvBase+j*d, kr)
			var s float32
			for i, v := range kr {
				s += q[i] * v
			}
			nm := max(m, s)
			f := float32(math.Exp(float64(m - nm)))
			p := float32(math.Exp(float64(s - nm)))
			l = l*f + p
			m = nm
			V.Load(kvBase+j*d, vr)
			for i, v := range vr {
				o[i] = o[i]*f + p*v
			}
		}
		ms[w], ls[w] = m, l
	}
	gm := float32(math.Inf(-1))
	for _, m := range ms {
		gm = max(gm, m)
	}
	var gl float32
	for w, m := range ms {
		if ls[w] > 0 {
			ms[w] = float32(math.Exp(float64(m - gm)))
			gl += ls[w] * ms[w]
		} else {
			ms[w] = 0 // a warp that saw no key
		}
	}
	out := kr
	clear(out)
	for w := range nw {
		c := ms[w] / gl
		for i := range out {
			out[i] += os[w*d+i] * c
		}
	}
	O.Store((r*nh+h)*d, out)
}
