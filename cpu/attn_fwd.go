package cpu

import (
	"math"

	"github.com/mltop/mltop/profiler"
)

func init() { RegisterKernel("attn_fwd", AttnFwd) }

// AttnFwd is the CPU attention forward (see the attn_fwd plan contract).
// One group owns BQ query rows of one (batch, head): it decodes its Q tile
// once (pre-scaled), then walks the keys in BK tiles, keeping the online
// softmax state (row max m, row sum l, O accumulator) in f32 tile scratch.
// WM and WN only matter to the GPU kernels' warp layout; here BQ and BK are
// the loop blocking factors.
func AttnFwd(g *Group) {
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
	s := g.Scratch(bk)
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
		K.Load(kvBase+k0*d, kt[:nk*d])
		V.Load(kvBase+k0*d, vt[:nk*d])
		for r := range nq {
			n := min(nk, visible(q0+r)-k0) // keys of this tile row r sees
			if n <= 0 {
				continue
			}
			qr := qt[r*d : (r+1)*d]
			sr := s[:n]
			scores(qr, kt, sr, d)
			mx := m[r]
			for _, v := range sr {
				mx = max(mx, v)
			}
			corr := expf(m[r] - mx) // 0 on the first tile (m = -inf)
			var sum float32
			for j, v := range sr {
				p := expf(v - mx)
				sr[j] = p
				sum += p
			}
			l[r] = l[r]*corr + sum
			m[r] = mx
			ar := acc[r*d : (r+1)*d]
			if corr != 1 {
				for c := range ar {
					ar[c] *= corr
				}
			}
			accumulatePV(ar, sr, vt, d)
		}
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

// scores sets s[j] = q·k_j for the first len(s) rows of the K tile kt.
// Four keys at a time share each load of q.
func scores(q, kt, s []float32, d int) {
	q = q[:d]
	j := 0
	for ; j+4 <= len(s); j += 4 {
		k0 := kt[j*d : j*d+d]
		k1 := kt[(j+1)*d : (j+1)*d+d]
		k2 := kt[(j+2)*d : (j+2)*d+d]
		k3 := kt[(j+3)*d : (j+3)*d+d]
		var a0, a1, a2, a3 float32
		for c, x := range q {
			a0 += x * k0[c]
			a1 += x * k1[c]
			a2 += x * k2[c]
			a3 += x * k3[c]
		}
		s[j], s[j+1], s[j+2], s[j+3] = a0, a1, a2, a3
	}
	for ; j < len(s); j++ {
		kr := kt[j*d : j*d+d]
		var a0, a1 float32
		c := 0
		for ; c+2 <= d; c += 2 {
			a0 += q[c] * kr[c]
			a1 += q[c+1] * kr[c+1]
		}
		for ; c < d; c++ {
			a0 += q[c] * kr[c]
		}
		s[j] = a0 + a1
	}
}

// accumulatePV adds Σ_j p[j]·v_j to acc, four value rows per pass so each
// accumulator element is loaded and stored once per four keys.
func accumulatePV(acc, p, vt []float32, d int) {
	acc = acc[:d]
	j := 0
	for ; j+4 <= len(p); j += 4 {
		p0, p1, p2, p3 := p[j], p[j+1], p[j+2], p[j+3]
		v0 := vt[j*d : j*d+d]
		v1 := vt[(j+1)*d : (j+1)*d+d]
		v2 := vt[(j+2)*d : (j+2)*d+d]
		v3 := vt[(j+3)*d : (j+3)*d+d]
		for c := range acc {
			acc[c] += p0*v0[c] + p1*v1[c] + p2*v2[c] + p3*v3[c]
		}
	}
	for ; j < len(p); j++ {
		pj := p[j]
		vr := vt[j*d : j*d+d]
		for c := range acc {
			acc[c] += pj * vr[c]
		}
	}
}

// expf is exp in float32 precision (through float64: exact enough, and
// the exponentials are a small share of the work next to the dot products).
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }
