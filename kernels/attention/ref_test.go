package attention

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// attnLoss is Σ dO·O over every row, in float64.
func attnLoss(a AttnShape, q, k, v, dO []float32) float64 {
	var l float64
	for r := range a.Rows() {
		b, h, i := a.RowBHI(r)
		o, _ := AttnRowRef(a, q, k, v, b, h, i)
		qo := a.QOffset(b, h, i)
		for d := range a.D {
			l += float64(dO[qo+d]) * o[d]
		}
	}
	return l
}

// The backward helpers must agree with central differences of Σ dO·O.
func TestAttnBackwardMatchesFiniteDifferences(t *testing.T) {
	shapes := []AttnShape{
		{B: 1, H: 2, Hkv: 1, Lq: 3, Lk: 4, D: 4, Causal: true},
		{B: 2, H: 2, Hkv: 2, Lq: 5, Lk: 3, D: 8, Causal: true}, // rows 0 and 1 see no key
		{B: 1, H: 4, Hkv: 2, Lq: 2, Lk: 5, D: 4, Causal: false},
	}
	for _, a := range shapes {
		rng := profiler.NewRNG(11)
		gen := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.Normal())
			}
			return x
		}
		q, k, v := gen(a.Rows()*a.D), gen(a.B*a.Hkv*a.Lk*a.D), gen(a.B*a.Hkv*a.Lk*a.D)
		dO := gen(a.Rows() * a.D)
		const eps = 1e-2
		numeric := func(x []float32, idx int) float64 {
			old := x[idx]
			x[idx] = old + eps
			up := attnLoss(a, q, k, v, dO)
			x[idx] = old - eps
			down := attnLoss(a, q, k, v, dO)
			x[idx] = old
			return (up - down) / (2 * eps)
		}
		check := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 2e-3*(1+math.Abs(want)) {
				t.Errorf("%+v %s = %.6g, finite difference %.6g", a, what, got, want)
			}
		}
		for r := range a.Rows() {
			b, h, i := a.RowBHI(r)
			g := AttnRowBackward(a, q, k, v, dO, b, h, i)
			o, lse := AttnRowRef(a, q, k, v, b, h, i)
			var delta float64
			for d := range a.D {
				delta += float64(dO[a.QOffset(b, h, i)+d]) * o[d]
			}
			if math.Abs(g.Delta-delta) > 1e-12 || g.LSE != lse && !(math.IsInf(lse, -1) && math.IsInf(g.LSE, -1)) {
				t.Errorf("row %d: delta %g vs %g, lse %g vs %g", r, g.Delta, delta, g.LSE, lse)
			}
			if len(g.P) != a.Visible(i) {
				t.Errorf("row %d has %d probabilities, sees %d keys", r, len(g.P), a.Visible(i))
			}
			for d := range a.D {
				check("dQ", g.DQ[d], numeric(q, a.QOffset(b, h, i)+d))
			}
		}
		for b := range a.B {
			for kvh := range a.Hkv {
				dK, dV := AttnKVGrads(a, q, k, v, dO, b, kvh)
				for j := range a.Lk {
					for d := range a.D {
						idx := a.KVOffset(b, kvh, j) + d
						check("dK", dK[j*a.D+d], numeric(k, idx))
						check("dV", dV[j*a.D+d], numeric(v, idx))
					}
				}
			}
		}
	}
}
