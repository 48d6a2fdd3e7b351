// Package kernels holds the kernel families: their knobs and dims, the plan
// every backend runs (buffers, dispatches, macros, TGM layout), the FLOP and
// byte model, validation rules and the float64 reference.
package attention

import (
	"math"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// AttnShape is the problem shape shared by the attention families. Tensors
// are laid out Q/O [B,H,Lq,D], K/V [B,Hkv,Lk,D], L [B,H,Lq].
type AttnShape struct {
	B, H, Hkv, Lq, Lk, D int
	Causal               bool
}

// AttnShapeOf reads the attention dims and the causal flag of a spec (after
// defaults were applied).
func AttnShapeOf(s profiler.Spec) AttnShape {
	return AttnShape{
		B: s.Dims["B"], H: s.Dims["H"], Hkv: s.Dims["Hkv"],
		Lq: s.Dims["Lq"], Lk: s.Dims["Lk"], D: s.Dims["D"],
		Causal: s.Flags["causal"],
	}
}

// Scale is the softmax scale 1/sqrt(D) applied to Q·Kᵀ.
func (a AttnShape) Scale() float64 { return 1 / math.Sqrt(float64(a.D)) }

// KVHead is the key/value head that query head h reads (GQA: H/Hkv query
// heads share one kv head).
func (a AttnShape) KVHead(h int) int { return h / (a.H / a.Hkv) }

// Visible is how many keys query row i sees: keys 0..Visible(i)-1. Causal
// masking is bottom-right aligned (as MLX): row i sees key j iff
// j <= i + (Lk - Lq). A row may see no key at all when Lq > Lk.
func (a AttnShape) Visible(i int) int {
	if !a.Causal {
		return a.Lk
	}
	return CausalVisible(i, a.Lq, a.Lk)
}

// CausalVisible is the number of keys causal query row i sees for the given
// lengths (bottom-right aligned), clamped to 0..lk.
func CausalVisible(i, lq, lk int) int {
	return min(max(i+lk-lq+1, 0), lk)
}

// CausalPairs counts the unmasked (query, key) pairs of one head exactly,
// in O(1). Row i sees max(i+c, 0) keys with c = Lk-Lq+1 (never more than Lk:
// the last row sees exactly Lk), so the rows that see anything form an
// arithmetic series ending at Lk.
func CausalPairs(lq, lk int) int64 {
	if lq <= 0 || lk <= 0 {
		return 0
	}
	c := int64(lk - lq + 1)
	i0 := max(int64(0), 1-c) // first row with i+c >= 1
	cnt := int64(lq) - i0
	if cnt <= 0 {
		return 0
	}
	return (i0 + c + int64(lk)) * cnt / 2
}

// Pairs is the number of unmasked (query, key) pairs over all batches and
// heads.
func (a AttnShape) Pairs() int64 {
	per := int64(a.Lq) * int64(a.Lk)
	if a.Causal {
		per = CausalPairs(a.Lq, a.Lk)
	}
	return per * int64(a.B) * int64(a.H)
}

// Rows is the number of query rows, B·H·Lq; row r is (b, h, i) with
// r = (b·H + h)·Lq + i.
func (a AttnShape) Rows() int { return a.B * a.H * a.Lq }

// RowBHI splits a flat row index into batch, head and query position.
func (a AttnShape) RowBHI(r int) (b, h, i int) {
	i = r % a.Lq
	h = (r / a.Lq) % a.H
	b = r / (a.Lq * a.H)
	return
}

// QOffset is the element offset of Q/O row (b, h, i).
func (a AttnShape) QOffset(b, h, i int) int { return ((b*a.H+h)*a.Lq + i) * a.D }

// KVOffset is the element offset of K/V row (b, kvh, j).
func (a AttnShape) KVOffset(b, kvh, j int) int { return ((b*a.Hkv+kvh)*a.Lk + j) * a.D }

// AttnScores sets s[j] to the scaled score scale·q_i·k_j (+ mask[i][j]
// when mask is not nil) of query row (b, h, i) for each key j < len(s),
// and returns their max (-Inf for none).
func AttnScores(a AttnShape, q, k, mask []float32, b, h, i int, s []float64) float64 {
	qo := a.QOffset(b, h, i)
	qr := q[qo : qo+a.D]
	kvh := a.KVHead(h)
	scale := a.Scale()
	mx := math.Inf(-1)
	for j := range s {
		ko := a.KVOffset(b, kvh, j)
		kr := k[ko : ko+a.D]
		var sj float64
		for d, x := range qr {
			sj += float64(x) * float64(kr[d])
		}
		sj *= scale
		if mask != nil {
			sj += float64(mask[i*a.Lk+j])
		}
		s[j] = sj
		mx = max(mx, sj)
	}
	return mx
}

// AttnRowProbs computes, in float64, the softmax probabilities of query row
// (b, h, i) over its visible keys and the row's natural-log logsumexp of the
// scaled scores. A row that sees no key returns (nil, -Inf).
func AttnRowProbs(a AttnShape, q, k []float32, b, h, i int) (p []float64, lse float64) {
	n := a.Visible(i)
	if n == 0 {
		return nil, math.Inf(-1)
	}
	p = make([]float64, n)
	mx := AttnScores(a, q, k, nil, b, h, i, p)
	var sum float64
	for j := range p {
		p[j] = math.Exp(p[j] - mx)
		sum += p[j]
	}
	for j := range p {
		p[j] /= sum
	}
	return p, mx + math.Log(sum)
}

// AttnRowRef is the float64 attention output of query row (b, h, i):
// O = softmax(scale·q·Kᵀ)·V over the visible keys, and its logsumexp. A row
// that sees no key gives O = 0 and L = -Inf.
func AttnRowRef(a AttnShape, q, k, v []float32, b, h, i int) (o []float64, lse float64) {
	o = make([]float64, a.D)
	p, lse := AttnRowProbs(a, q, k, b, h, i)
	kvh := a.KVHead(h)
	for j, pj := range p {
		vo := a.KVOffset(b, kvh, j)
		for d, x := range v[vo : vo+a.D] {
			o[d] += pj * float64(x)
		}
	}
	return o, lse
}

// AttnRowGrad is the float64 backward of one query row (b, h, i) given its
// output gradient dO_i. With P the row's probabilities over its visible
// keys, dP_j = dO_i·v_j, Δ = dO_i·O_i = Σ_j P_j·dP_j and
// dS_j = P_j·(dP_j − Δ):
//
//	dQ_i  = scale·Σ_j dS_j·k_j
//	dK_j += scale·dS_j·q_i   (summed over the rows and the GQA heads that see j)
//	dV_j += P_j·dO_i
type AttnRowGrad struct {
	P, DS []float64 // over the visible keys 0..len(P)-1
	Delta float64   // Δ = rowsum(dO·O), what the backward kernels precompute
	LSE   float64
	DQ    []float64 // D values
}

// AttnRowBackward computes AttnRowGrad for row (b, h, i); dO has Q's layout.
// A row that sees no key has P = nil and dQ = 0.
func AttnRowBackward(a AttnShape, q, k, v, dO []float32, b, h, i int) AttnRowGrad {
	p, lse := AttnRowProbs(a, q, k, b, h, i)
	g := AttnRowGrad{P: p, LSE: lse, DS: make([]float64, len(p)), DQ: make([]float64, a.D)}
	kvh := a.KVHead(h)
	qo := a.QOffset(b, h, i)
	do := dO[qo : qo+a.D]
	dp := make([]float64, len(p))
	for j := range p {
		vo := a.KVOffset(b, kvh, j)
		var s float64
		for d, x := range v[vo : vo+a.D] {
			s += float64(do[d]) * float64(x)
		}
		dp[j] = s
		g.Delta += p[j] * s
	}
	scale := a.Scale()
	for j := range p {
		g.DS[j] = p[j] * (dp[j] - g.Delta)
		ko := a.KVOffset(b, kvh, j)
		for d, x := range k[ko : ko+a.D] {
			g.DQ[d] += scale * g.DS[j] * float64(x)
		}
	}
	return g
}

// AttnKVGrads is the float64 dK and dV ([Lk, D] each) of kv head kvh of
// batch b: the sum over every query row of the H/Hkv query heads that read
// it. It costs O(H/Hkv · Lq · Lk · D): reference a few kv heads, not all.
func AttnKVGrads(a AttnShape, q, k, v, dO []float32, b, kvh int) (dK, dV []float64) {
	dK = make([]float64, a.Lk*a.D)
	dV = make([]float64, a.Lk*a.D)
	group := a.H / a.Hkv
	scale := a.Scale()
	for h := kvh * group; h < (kvh+1)*group; h++ {
		for i := range a.Lq {
			g := AttnRowBackward(a, q, k, v, dO, b, h, i)
			qo := a.QOffset(b, h, i)
			qr, dor := q[qo:qo+a.D], dO[qo:qo+a.D]
			for j := range g.P {
				kr, vr := dK[j*a.D:(j+1)*a.D], dV[j*a.D:(j+1)*a.D]
				for d := range a.D {
					kr[d] += scale * g.DS[j] * float64(qr[d])
					vr[d] += g.P[j] * float64(dor[d])
				}
			}
		}
	}
	return dK, dV
}

// TGMPad is the per-row padding (in elements) of the shared tiles against
// bank conflicts.
const TGMPad = 8

var TileSizes = []int{8, 16, 32, 64, 128}

// AttnRowRefMag is AttnRowRef with the magnitudes the tolerance model needs
// (README "Tolerances"): mag[d], the kit.SumMag of the terms P_j·V_jd that
// O_d sums (min(Σ|t|, |O_d| + 3·√Σt²)), and
// sabs = max_j scale·Σ_d |q_d·k_jd|, the scale of the scores whose f32
// rounding enters every P_j relatively.
func AttnRowRefMag(a AttnShape, q, k, v []float32, b, h, i int) (o, mag []float64, lse, sabs float64) {
	o = make([]float64, a.D)
	mag = make([]float64, a.D)
	sq := make([]float64, a.D)
	p, lse := AttnRowProbs(a, q, k, b, h, i)
	kvh := a.KVHead(h)
	for j, pj := range p {
		vo := a.KVOffset(b, kvh, j)
		for d, x := range v[vo : vo+a.D] {
			t := pj * float64(x)
			o[d] += t
			mag[d] += math.Abs(t)
			sq[d] += t * t
		}
	}
	for d := range mag {
		mag[d] = kit.SumMag(o[d], mag[d], sq[d])
	}
	return o, mag, lse, ScoreAbs(a, q, k, b, h, i)
}

// ScoreAbs is max_j scale·Σ_d |q_d·k_jd| over the keys row (b, h, i) sees.
func ScoreAbs(a AttnShape, q, k []float32, b, h, i int) float64 {
	qo := a.QOffset(b, h, i)
	qr := q[qo : qo+a.D]
	kvh := a.KVHead(h)
	var m float64
	for j := range a.Visible(i) {
		ko := a.KVOffset(b, kvh, j)
		var s float64
		for d, x := range k[ko : ko+a.D] {
			s += math.Abs(float64(qr[d]) * float64(x))
		}
		m = max(m, s)
	}
	return m * a.Scale()
}
