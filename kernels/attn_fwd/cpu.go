package attnfwd

import (
	"math"

	"github.com/mltop/mltop/kernels/attention"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

func init() { host.RegisterKernel("attn_fwd", CPUAttnFwd) }

// CPUAttnFwd is the CPU attention forward (see the attn_fwd plan contract).
// One group owns BQ query rows of one (batch, head): it decodes its Q tile
// once (pre-scaled), then walks the keys in BK tiles, keeping the online
// softmax state (row max m, row sum l, O accumulator) in f32 tile scratch.
// WM and WN only matter to the GPU kernels' warp layout; here BQ and BK are
// the loop blocking factors.
func CPUAttnFwd(g *host.Group) {
	bq, bk, d := g.Macro("BQ"), g.Macro("BK"), g.Macro("D")
	causal := g.Macro("CAUSAL") != 0
	dt := g.DType()
	hN, hkv := g.Int("H"), g.Int("Hkv")
	lq, lk := g.Int("Lq"), g.Int("Lk")
	scale := g.Float("scale")
	Q, K, V := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt)
	O, L := g.Arg(3, dt), g.Arg(4, profiler.F32)

	b, h := g.ID[2], g.ID[1]
	q0 := g.ID[0] * bq
	nq := min(bq, lq-q0)
	if nq <= 0 {
		return
	}
	kvh := h / (hN / hkv)
	qBase := ((b*hN+h)*lq + q0) * d
	kvBase := (b*hkv + kvh) * lk * d

	// visible(i) is how many keys row i sees (bottom-right causal mask).
	visible := func(i int) int {
		if !causal {
			return lk
		}
		return min(max(i+lk-lq+1, 0), lk)
	}
	kEnd := visible(q0 + nq - 1) // the last row sees the most keys

	qt := g.Scratch(nq * d)
	kt := g.Scratch(bk * d)
	vt := g.Scratch(bk * d)
	acc := g.Scratch(nq * d)
	s := g.Scratch(nq * bk)
	m := g.Scratch(nq)
	l := g.Scratch(nq)
	Q.Load(qBase, qt)
	for i := range qt {
		qt[i] *= scale
	}
	for r := range m {
		m[r] = float32(math.Inf(-1))
	}

	for k0 := 0; k0 < kEnd; k0 += bk {
		nk := min(bk, kEnd-k0)
		kTile, vTile := kt[:nk*d], vt[:nk*d]
		K.Load(kvBase+k0*d, kTile)
		V.Load(kvBase+k0*d, vTile)
		sTile := s[:nq*nk]
		attention.ScoreTile(qt, kTile, sTile, nq, nk, d)
		for r := range nq {
			sr := sTile[r*nk : (r+1)*nk]
			n := min(nk, visible(q0+r)-k0) // keys of this tile row r sees
			if n <= 0 {
				clear(sr) // p = 0: the row's state is unchanged
				continue
			}
			mx := m[r]
			for _, v := range sr[:n] {
				mx = max(mx, v)
			}
			corr := attention.Expf(m[r] - mx) // 0 on the row's first tile (m = -inf)
			var sum float32
			for j, v := range sr[:n] {
				p := attention.Expf(v - mx)
				sr[j] = p
				sum += p
			}
			clear(sr[n:]) // masked keys
			l[r] = l[r]*corr + sum
			m[r] = mx
			if corr != 1 {
				ar := acc[r*d : (r+1)*d]
				for c := range ar {
					ar[c] *= corr
				}
			}
		}
		attention.PVTile(acc, sTile, vTile, nq, nk, d)
	}

	for r := range nq {
		ar := acc[r*d : (r+1)*d]
		row := (b*hN+h)*lq + q0 + r
		if l[r] == 0 { // the row saw no key
			clear(ar)
			L.Set(row, float32(math.Inf(-1)))
		} else {
			inv := 1 / l[r]
			for c := range ar {
				ar[c] *= inv
			}
			L.Set(row, m[r]+float32(math.Log(float64(l[r]))))
		}
	}
	O.Store(qBase, acc)
}
