package attnbwd

import (
	"math"

	"github.com/mltop/mltop/kernels/attention"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

// The CPU kernels of the attention-backward families (see the Plan
// contracts in kernels/attn_bwd*.go). All math is f32; the tile knobs are
// the loop blocking factors (BQ query rows, BK keys per step); the warp
// knobs only shape the GPU kernels, except where noted.

func init() {
	host.RegisterKernel("attn_bwd_atomic", CPUAttnBwdAtomic)
	host.RegisterKernel("attn_bwd_cast", CPUAttnBwdCast)
	host.RegisterKernel("attn_bwd_delta", CPUAttnBwdDelta)
	host.RegisterKernel("attn_bwd_dq", CPUAttnBwdDQ)
	host.RegisterKernel("attn_bwd_dkv", CPUAttnBwdDKV)
	host.RegisterKernel("attn_bwd_mm", CPUAttnBwdMM)
	host.RegisterKernel("attn_bwd_prep", CPUAttnBwdPrep)
}

// bwdShape is what every backward kernel reads from its scalars.
type bwdShape struct {
	b, h, hkv, lq, lk, d int
	scale                float32
	causal               bool
}

func bwdShapeOf(g *host.Group) bwdShape {
	return bwdShape{b: g.Int("B"), h: g.Int("H"), hkv: g.Int("Hkv"), lq: g.Int("Lq"), lk: g.Int("Lk"), d: g.Macro("D"),
		scale: g.Float("scale"), causal: g.Macros["CAUSAL"] != 0}
}

// visible is how many keys row i sees (bottom-right causal).
func (s bwdShape) visible(i int) int {
	if !s.causal {
		return s.lk
	}
	return min(max(i+s.lk-s.lq+1, 0), s.lk)
}

func (s bwdShape) qRow(b, h, i int) int                 { return (b*s.h+h)*s.lq + i }
func (s bwdShape) kvRow(b, k, j int) int                { return (b*s.hkv+k)*s.lk + j }
func (s bwdShape) group() int                           { return s.h / s.hkv }
func (s bwdShape) firstQ(k0 int) int                    { return max(0, k0-(s.lk-s.lq)) } // causal: first row that sees key k0
func (s bwdShape) mask(m host.Tensor, i, j int) float32 { return m.At(i*s.lk + j) }

// bwdTile computes, for nq query rows starting at i0 and nk keys starting at
// k0, P = exp(scale·q·k (+mask) − L) and dS = P∘(dP − delta) with
// dP = dO·v, zero where a key is not visible. qt/dot are the decoded Q/dO
// rows (nq×d), kt/vt the K/V rows (nk×d); l and delta per row. p and ds are
// nq×nk.
func bwdTile(s bwdShape, qt, dot, kt, vt, l, delta, p, ds []float32, i0, nq, k0, nk int, mask *host.Tensor) {
	attention.ScoreTile(qt, kt, p, nq, nk, s.d)
	attention.ScoreTile(dot, vt, ds, nq, nk, s.d)
	for r := range nq {
		i := i0 + r
		n := min(nk, s.visible(i)-k0)
		pr, dr := p[r*nk:(r+1)*nk], ds[r*nk:(r+1)*nk]
		li := l[r]
		if n <= 0 || math.IsInf(float64(li), -1) {
			clear(pr)
			clear(dr)
			continue
		}
		for j := range n {
			x := pr[j] * s.scale
			if mask != nil {
				x += s.mask(*mask, i, k0+j)
			}
			pj := attention.Expf(x - li)
			pr[j] = pj
			dr[j] = pj * (dr[j] - delta[r])
		}
		clear(pr[n:])
		clear(dr[n:])
	}
}

// transpose writes the c×r transpose of the r×c matrix a into t.
func transpose(a, t []float32, r, c int) {
	for i := range r {
		for j := range c {
			t[j*r+i] = a[i*c+j]
		}
	}
}

// rowDelta is Σ_d dO·O of each of the nq rows.
func rowDelta(dot_, ot, out []float32, nq, d int) {
	for r := range nq {
		out[r] = attention.Dot(dot_[r*d:(r+1)*d], ot[r*d:(r+1)*d])
	}
}

// CPUAttnBwdAtomic is the seed-000 design: the group owns BQ query rows of
// (b, h), computes their delta, walks the key tiles keeping dQ in tile
// scratch, and adds each tile's dK/dV partial (summed over its rows) into
// the f32 scratch with one atomic per element.
func CPUAttnBwdAtomic(g *host.Group) { CPUAttnBwdAtomicVariant(g, 1, 0) }

// attnBwdAtomic with adds > 1 adds each dK/dV partial that many times and
// with dropTiles > 0 skips that many trailing key tiles: the broken variants
// the tests prove the reference check catches.
func CPUAttnBwdAtomicVariant(g *host.Group, adds, dropTiles int) {
	s := bwdShapeOf(g)
	bq, bk, d := g.Macro("BQ"), g.Macro("BK"), s.d
	dt := g.DType()
	Q, K, V, O := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, dt)
	L, dO := g.Arg(4, profiler.F32), g.Arg(5, dt)
	var mask *host.Tensor
	if g.Macro("MASK") != 0 {
		m := g.Arg(6, profiler.F32)
		mask = &m
	}
	dQ, dKacc, dVacc := g.Arg(7, dt), g.Arg(8, profiler.F32), g.Arg(9, profiler.F32)

	b, h := g.ID[2], g.ID[1]
	q0 := g.ID[0] * bq
	nq := min(bq, s.lq-q0)
	if nq <= 0 {
		return
	}
	kvh := h / s.group()
	qt, dot, ot := g.Scratch(nq*d), g.Scratch(nq*d), g.Scratch(nq*d)
	Q.Load(s.qRow(b, h, q0)*d, qt)
	dO.Load(s.qRow(b, h, q0)*d, dot)
	O.Load(s.qRow(b, h, q0)*d, ot)
	l, delta := g.Scratch(nq), g.Scratch(nq)
	L.Load(s.qRow(b, h, q0), l)
	rowDelta(dot, ot, delta, nq, d)

	kt, vt := g.Scratch(bk*d), g.Scratch(bk*d)
	p, ds := g.Scratch(bq*bk), g.Scratch(bq*bk)
	pT, dsT := g.Scratch(bq*bk), g.Scratch(bq*bk)
	acc := g.Scratch(nq * d)
	dkp, dvp := g.Scratch(bk*d), g.Scratch(bk*d)
	kEnd := s.visible(q0 + nq - 1)
	nTiles := (kEnd + bk - 1) / bk
	for t := range nTiles - dropTiles {
		k0 := t * bk
		nk := min(bk, kEnd-k0)
		K.Load(s.kvRow(b, kvh, k0)*d, kt[:nk*d])
		V.Load(s.kvRow(b, kvh, k0)*d, vt[:nk*d])
		bwdTile(s, qt, dot, kt, vt, l, delta, p[:nq*nk], ds[:nq*nk], q0, nq, k0, nk, mask)
		attention.PVTile(acc, ds[:nq*nk], kt, nq, nk, d)
		transpose(p[:nq*nk], pT[:nq*nk], nq, nk)
		transpose(ds[:nq*nk], dsT[:nq*nk], nq, nk)
		clear(dkp[:nk*d])
		clear(dvp[:nk*d])
		attention.PVTile(dkp, dsT[:nq*nk], qt, nk, nq, d)
		attention.PVTile(dvp, pT[:nq*nk], dot, nk, nq, d)
		base := s.kvRow(b, kvh, k0) * d
		for range adds {
			for e := range nk * d {
				dKacc.AtomicAdd(base+e, dkp[e]*s.scale)
				dVacc.AtomicAdd(base+e, dvp[e])
			}
		}
	}
	for e := range acc {
		acc[e] *= s.scale
	}
	dQ.Store(s.qRow(b, h, q0)*d, acc)
}

// CPUAttnBwdCast writes the f32 dK/dV scratch in the storage type: 256
// elements per group.
func CPUAttnBwdCast(g *host.Group) {
	dt := g.DType()
	n := g.Int("n")
	e0 := g.ID[0] * 256
	m := min(256, n-e0)
	if m <= 0 {
		return
	}
	buf := g.Scratch(m)
	for i := range 2 {
		g.Arg(i, profiler.F32).Load(e0, buf)
		g.Arg(2+i, dt).Store(e0, buf)
	}
}

// CPUAttnBwdDelta is delta = rowsum(dO∘O) for 8 rows per group.
func CPUAttnBwdDelta(g *host.Group) {
	s := bwdShapeOf(g)
	dt := g.DType()
	O, dO, delta := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, profiler.F32)
	i0 := g.ID[0] * 8
	n := min(8, s.lq-i0)
	if n <= 0 {
		return
	}
	row := s.qRow(g.ID[2], g.ID[1], i0)
	ot, dot := g.Scratch(n*s.d), g.Scratch(n*s.d)
	O.Load(row*s.d, ot)
	dO.Load(row*s.d, dot)
	out := g.Scratch(n)
	rowDelta(dot, ot, out, n, s.d)
	delta.Store(row, out)
}

// CPUAttnBwdDQ is seed 001's dQ kernel: BQ query rows of (b, h) against all
// the keys they see, BK per step; dQ stays in tile scratch.
func CPUAttnBwdDQ(g *host.Group) {
	s := bwdShapeOf(g)
	bq, bk, d := g.Macro("BQ"), g.Macro("BK"), s.d
	dt := g.DType()
	Q, K, V, dO := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, dt)
	L, Delta, dQ := g.Arg(4, profiler.F32), g.Arg(5, profiler.F32), g.Arg(6, dt)
	b, h := g.ID[2], g.ID[1]
	q0 := g.ID[0] * bq
	nq := min(bq, s.lq-q0)
	if nq <= 0 {
		return
	}
	kvh := h / s.group()
	row := s.qRow(b, h, q0)
	qt, dot := g.Scratch(nq*d), g.Scratch(nq*d)
	Q.Load(row*d, qt)
	dO.Load(row*d, dot)
	l, delta := g.Scratch(nq), g.Scratch(nq)
	L.Load(row, l)
	Delta.Load(row, delta)
	kt, vt := g.Scratch(bk*d), g.Scratch(bk*d)
	p, ds := g.Scratch(bq*bk), g.Scratch(bq*bk)
	acc := g.Scratch(nq * d)
	kEnd := s.visible(q0 + nq - 1)
	for k0 := 0; k0 < kEnd; k0 += bk {
		nk := min(bk, kEnd-k0)
		K.Load(s.kvRow(b, kvh, k0)*d, kt[:nk*d])
		V.Load(s.kvRow(b, kvh, k0)*d, vt[:nk*d])
		bwdTile(s, qt, dot, kt, vt, l, delta, p[:nq*nk], ds[:nq*nk], q0, nq, k0, nk, nil)
		attention.PVTile(acc, ds[:nq*nk], kt, nq, nk, d)
	}
	for e := range acc {
		acc[e] *= s.scale
	}
	dQ.Store(row*d, acc)
}

// CPUAttnBwdDKV is seed 001's dKV kernel: BK keys of (b, kv head) against the
// query rows of every head of its GQA group that see them, BQ per step;
// dK and dV stay in tile scratch, so nothing is atomic.
func CPUAttnBwdDKV(g *host.Group) {
	s := bwdShapeOf(g)
	bq, bk, d := g.Macro("BQ"), g.Macro("BK"), s.d
	dt := g.DType()
	Q, K, V, dO := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, dt)
	L, Delta, dK, dV := g.Arg(4, profiler.F32), g.Arg(5, profiler.F32), g.Arg(6, dt), g.Arg(7, dt)
	b, kvh := g.ID[2], g.ID[1]
	k0 := g.ID[0] * bk
	nk := min(bk, s.lk-k0)
	if nk <= 0 {
		return
	}
	kt, vt := g.Scratch(nk*d), g.Scratch(nk*d)
	K.Load(s.kvRow(b, kvh, k0)*d, kt)
	V.Load(s.kvRow(b, kvh, k0)*d, vt)
	qt, dot := g.Scratch(bq*d), g.Scratch(bq*d)
	l, delta := g.Scratch(bq), g.Scratch(bq)
	p, ds := g.Scratch(bq*nk), g.Scratch(bq*nk)
	pT, dsT := g.Scratch(bq*nk), g.Scratch(bq*nk)
	dk, dv := g.Scratch(nk*d), g.Scratch(nk*d)
	qStart := 0
	if s.causal {
		qStart = s.firstQ(k0) / bq * bq
	}
	for hh := range s.group() {
		h := kvh*s.group() + hh
		for i0 := qStart; i0 < s.lq; i0 += bq {
			nq := min(bq, s.lq-i0)
			row := s.qRow(b, h, i0)
			Q.Load(row*d, qt[:nq*d])
			dO.Load(row*d, dot[:nq*d])
			L.Load(row, l[:nq])
			Delta.Load(row, delta[:nq])
			bwdTile(s, qt, dot, kt, vt, l, delta, p[:nq*nk], ds[:nq*nk], i0, nq, k0, nk, nil)
			transpose(p[:nq*nk], pT[:nq*nk], nq, nk)
			transpose(ds[:nq*nk], dsT[:nq*nk], nq, nk)
			attention.PVTile(dk, dsT[:nq*nk], qt, nk, nq, d)
			attention.PVTile(dv, pT[:nq*nk], dot, nk, nq, d)
		}
	}
	for e := range dk {
		dk[e] *= s.scale
	}
	dK.Store(s.kvRow(b, kvh, k0)*d, dk)
	dV.Store(s.kvRow(b, kvh, k0)*d, dv)
}

// CPUAttnBwdMM is the unfused family's matrix kernel: one BM×BN output tile
// of the product selected by MODE (see kernels/attn_bwd_unfused/attn_bwd_unfused.go).
func CPUAttnBwdMM(g *host.Group) {
	dt := g.DType()
	t := mmTile{
		s: bwdShapeOf(g), bm: g.Macro("BM"), bn: g.Macro("BN"), mode: g.Macro("MODE"),
		Q: g.Arg(0, dt), K: g.Arg(1, dt), V: g.Arg(2, dt), dO: g.Arg(3, dt),
		L: g.Arg(4, profiler.F32), Delta: g.Arg(5, profiler.F32),
		P: g.Arg(6, profiler.F32), dS: g.Arg(7, profiler.F32),
		dQ: g.Arg(8, dt), dK: g.Arg(9, dt), dV: g.Arg(10, dt),
		n0: g.ID[0] * g.Macro("BN"), m0: g.ID[1] * g.Macro("BM"), z: g.ID[2],
	}
	switch t.mode {
	case 0, 1:
		t.scores(g)
	case 2, 3:
		t.keyGrads(g)
	default:
		t.queryGrads(g)
	}
}

// mmTile is one group of CPUAttnBwdMM: the shape, the tile, its origin
// (n0 columns, m0 rows, z the batch·head) and the kernel's buffers.
type mmTile struct {
	s                                        bwdShape
	bm, bn, mode                             int
	Q, K, V, dO, L, Delta, P, dS, dQ, dK, dV host.Tensor
	n0, m0, z                                int
}

// scores is MODE 0 (P = exp(S·scale − L), masked) and MODE 1
// (dS = P∘(dO·Vᵀ − Δ)): rows i of (b, h) × keys j, C = A_i·B_j over d.
func (t *mmTile) scores(g *host.Group) {
	s, bm, bn, d, mode := t.s, t.bm, t.bn, t.s.d, t.mode
	n0, m0, z := t.n0, t.m0, t.z
	Q, K, V, dO, L, Delta, P, dS := t.Q, t.K, t.V, t.dO, t.L, t.Delta, t.P, t.dS
	b, h := z/s.h, z%s.h
	kvh := h / s.group()
	nm, nn := min(bm, s.lq-m0), min(bn, s.lk-n0)
	if nm <= 0 || nn <= 0 {
		return
	}
	at, bt := g.Scratch(nm*d), g.Scratch(nn*d)
	c := g.Scratch(nm * nn)
	row := s.qRow(b, h, m0)
	if mode == 0 {
		Q.Load(row*d, at)
		K.Load(s.kvRow(b, kvh, n0)*d, bt)
	} else {
		dO.Load(row*d, at)
		V.Load(s.kvRow(b, kvh, n0)*d, bt)
	}
	attention.ScoreTile(at, bt, c, nm, nn, d)
	pr := g.Scratch(nn)
	for r := range nm {
		i := m0 + r
		vis := s.visible(i)
		cr := c[r*nn : (r+1)*nn]
		off := (row+r)*s.lk + n0
		if mode == 0 {
			li := L.At(row + r)
			for j := range cr {
				if n0+j < vis && !math.IsInf(float64(li), -1) {
					cr[j] = attention.Expf(cr[j]*s.scale - li)
				} else {
					cr[j] = 0
				}
			}
			P.Store(off, cr)
		} else {
			dl := Delta.At(row + r)
			P.Load(off, pr)
			for j := range cr {
				cr[j] = pr[j] * (cr[j] - dl)
			}
			dS.Store(off, cr)
		}
	}
}

// keyGrads is MODE 2 (dV = Pᵀ·dO) and MODE 3 (dK = dSᵀ·Q·scale): key rows
// j of (b, kvh) × d columns, Σ_heads Σ_i A[i][j]·B_i.
func (t *mmTile) keyGrads(g *host.Group) {
	s, bm, bn, d, mode := t.s, t.bm, t.bn, t.s.d, t.mode
	n0, m0, z := t.n0, t.m0, t.z
	Q, dO, P, dS, dK, dV := t.Q, t.dO, t.P, t.dS, t.dK, t.dV
	b, kvh := z/s.hkv, z%s.hkv
	nm, nn := min(bm, s.lk-m0), min(bn, d-n0)
	if nm <= 0 || nn <= 0 {
		return
	}
	const ks = 16
	acc := g.Scratch(nm * nn)
	aT := g.Scratch(nm * ks)
	at := g.Scratch(nm)
	brow := g.Scratch(d)
	bt := g.Scratch(ks * nn)
	src, rhs := P, dO
	if mode == 3 {
		src, rhs = dS, Q
	}
	for hh := range s.group() {
		h := kvh*s.group() + hh
		for i0 := 0; i0 < s.lq; i0 += ks {
			ni := min(ks, s.lq-i0)
			for r := range ni {
				row := s.qRow(b, h, i0+r)
				src.Load(row*s.lk+m0, at)
				for j := range nm {
					aT[j*ni+r] = at[j]
				}
				rhs.Load(row*d, brow)
				copy(bt[r*nn:(r+1)*nn], brow[n0:n0+nn])
			}
			attention.PVTile(acc, aT[:nm*ni], bt[:ni*nn], nm, ni, nn)
		}
	}
	out, scale := dV, float32(1)
	if mode == 3 {
		out, scale = dK, s.scale
	}
	for r := range nm {
		cr := acc[r*nn : (r+1)*nn]
		for c := range cr {
			cr[c] *= scale
		}
		out.Store(s.kvRow(b, kvh, m0+r)*d+n0, cr)
	}
}

// queryGrads is dQ = dS·K·scale: rows i of (b, h) × d columns,
// Σ_j dS[i][j]·K_j.
func (t *mmTile) queryGrads(g *host.Group) {
	s, bm, bn, d := t.s, t.bm, t.bn, t.s.d
	n0, m0, z := t.n0, t.m0, t.z
	K, dS, dQ := t.K, t.dS, t.dQ
	b, h := z/s.h, z%s.h
	kvh := h / s.group()
	nm, nn := min(bm, s.lq-m0), min(bn, d-n0)
	if nm <= 0 || nn <= 0 {
		return
	}
	const ks = 16
	acc := g.Scratch(nm * nn)
	a := g.Scratch(nm * ks)
	arow := g.Scratch(ks)
	krow := g.Scratch(d)
	bt := g.Scratch(ks * nn)
	row := s.qRow(b, h, m0)
	for j0 := 0; j0 < s.lk; j0 += ks {
		nj := min(ks, s.lk-j0)
		for r := range nm {
			dS.Load((row+r)*s.lk+j0, arow[:nj])
			copy(a[r*nj:(r+1)*nj], arow[:nj])
		}
		for j := range nj {
			K.Load(s.kvRow(b, kvh, j0+j)*d, krow)
			copy(bt[j*nn:(j+1)*nn], krow[n0:n0+nn])
		}
		attention.PVTile(acc, a[:nm*nj], bt[:nj*nn], nm, nj, nn)
	}
	for r := range nm {
		cr := acc[r*nn : (r+1)*nn]
		for c := range cr {
			cr[c] *= s.scale
		}
		dQ.Store((row+r)*d+n0, cr)
	}
}

// CPUAttnBwdPrep is the masked forward Setup: O and L of 4 query rows per
// group with the additive mask (attn_fwd has no mask), two passes per row.
func CPUAttnBwdPrep(g *host.Group) {
	s := bwdShapeOf(g)
	d := s.d
	dt := g.DType()
	Q, K, V, M := g.Arg(0, dt), g.Arg(1, dt), g.Arg(2, dt), g.Arg(3, profiler.F32)
	O, L := g.Arg(4, dt), g.Arg(5, profiler.F32)
	b, h := g.ID[2], g.ID[1]
	kvh := h / s.group()
	qr, kr, o := g.Scratch(d), g.Scratch(d), g.Scratch(d)
	sc := g.Scratch(s.lk)
	for r := range 4 {
		i := g.ID[0]*4 + r
		if i >= s.lq {
			return
		}
		row := s.qRow(b, h, i)
		Q.Load(row*d, qr)
		n := s.visible(i)
		mx := float32(math.Inf(-1))
		for j := range n {
			K.Load(s.kvRow(b, kvh, j)*d, kr)
			sc[j] = attention.Dot(qr, kr)*s.scale + M.At(i*s.lk+j)
			mx = max(mx, sc[j])
		}
		clear(o)
		var sum float32
		for j := range n {
			p := attention.Expf(sc[j] - mx)
			sum += p
			V.Load(s.kvRow(b, kvh, j)*d, kr)
			attention.Axpy(o, p, kr)
		}
		if n == 0 || sum == 0 {
			clear(o)
			L.Set(row, float32(math.Inf(-1)))
		} else {
			for c := range o {
				o[c] /= sum
			}
			L.Set(row, mx+float32(math.Log(float64(sum))))
		}
		O.Store(row*d, o)
	}
}
