package gateddeltachunk

import (
	"math"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

func init() { host.RegisterKernel("gated_delta", CPUGatedDeltaChunk) }

// CPUGatedDeltaChunk is the CPU gated delta rule chunk recurrence (see the
// gated_delta_chunk plan contract in kernels/gated_delta_chunk/gated_delta_chunk.go): group
// (x, h, b) owns state rows [x·BV, …) of head h, batch b, kept in f32
// scratch across the chunks, with the bf16 round trip of the gated Vn
// between the gate and the outer update.
func CPUGatedDeltaChunk(g *host.Group) {
	bt, bv, kd := g.Macro("BT"), g.Macro("BV"), g.Macro("K")
	nb, t, nh, hg, vd := g.Int("B"), g.Int("T"), g.Int("H"), g.Int("Hg"), g.Int("V")
	x, h, b := g.ID[0], g.ID[1], g.ID[2]
	v0 := x * bv
	if b >= nb || h >= nh || v0 >= vd {
		return
	}
	bf := profiler.BF16
	kT, wT, uT := g.Arg(0, bf), g.Arg(1, bf), g.Arg(2, bf)
	gT, h0 := g.Arg(3, profiler.F32), g.Arg(4, profiler.F32)
	hOut, vNew, final := g.Arg(5, bf), g.Arg(6, bf), g.Arg(7, profiler.F32)
	nt := t / bt
	hk := h / (nh / hg)
	S := g.Scratch(bv * kd)
	h0.Load(((b*nh+h)*vd+v0)*kd, S)
	wk := g.Scratch(bt * kd)
	vn := g.Scratch(bt * bv)
	urow := g.Scratch(bv)
	gv := g.Scratch(bt)
	for c := range nt {
		hOut.Store((((b*nt+c)*nh+h)*vd+v0)*kd, S)
		t0 := c * bt
		for i := range bt {
			wT.Load(((b*t+t0+i)*nh+h)*kd, wk[i*kd:(i+1)*kd])
		}
		for i := range bt {
			gv[i] = gT.At((b*t+t0+i)*nh + h)
		}
		gl := gv[bt-1]
		for i := range bt {
			uT.Load(((b*t+t0+i)*nh+h)*vd+v0, urow)
			gate := float32(math.Exp(float64(gl - gv[i])))
			for v := range bv {
				var dot float32
				sv := S[v*kd : (v+1)*kd]
				for kk, wv := range wk[i*kd : (i+1)*kd] {
					dot += wv * sv[kk]
				}
				r := urow[v] - dot
				urow[v] = r
				vn[i*bv+v] = bf.Round(r * gate)
			}
			vNew.Store(((b*t+t0+i)*nh+h)*vd+v0, urow)
		}
		for i := range bt {
			kT.Load(((b*t+t0+i)*hg+hk)*kd, wk[i*kd:(i+1)*kd])
		}
		decay := float32(math.Exp(float64(gl)))
		for v := range bv {
			sv := S[v*kd : (v+1)*kd]
			for kk := range sv {
				sv[kk] *= decay
			}
			for i := range bt {
				a := vn[i*bv+v]
				for kk, kv := range wk[i*kd : (i+1)*kd] {
					sv[kk] += a * kv
				}
			}
		}
	}
	final.Store(((b*nh+h)*vd+v0)*kd, S)
}
