package attnbwd

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/mltop/mltop/kernels/attention"
	attnfwd "github.com/mltop/mltop/kernels/attn_fwd"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// Shared by the three attention-backward families (attn_bwd_atomic,
// attn_bwd, attn_bwd_unfused): the dims and flags, the forward Setup that
// produces O and L, the FLOP/byte model and the float64 reference.
//
// Math (natural-log domain; the GPU kernels may work in log2 units):
//
//	S = scale·Q·Kᵀ (+ mask),  P = exp(S − L),  O = P·V,  L = logsumexp(S)
//	dP = dO·Vᵀ,  delta = rowsum(dO∘O) = rowsum(P∘dP),  dS = P∘(dP − delta)
//	dQ = scale·dS·K,  dK = scale·dSᵀ·Q,  dV = Pᵀ·dO
//
// With GQA the H/Hkv query heads of a group add into the same dK/dV rows.
//
// FLOP convention: backward = 2.5 × forward = 2.5·4·D = 10·D per unmasked
// (query, key) pair (five D-long products per pair instead of two). Pairs
// are counted exactly (causal and masked-out rows excluded); the unfused
// family reports the same useful FLOPs although it computes the full square.

// AttnBwdDims are the dims of every backward family (as attn_fwd's).
func AttnBwdDims() []profiler.Param {
	return attnfwd.AttnFwd{}.Schema().Dims
}

// AttnBwdFLOPs is 2.5 × the forward FLOPs over the unmasked pairs.
func AttnBwdFLOPs(a attention.AttnShape) float64 { return 2.5 * 4 * float64(a.D) * float64(a.Pairs()) }

// AttnBwdIOBytes is the least a backward must move: read Q, K, V, O, dO, L
// and write dQ, dK, dV.
func AttnBwdIOBytes(a attention.AttnShape, dt profiler.DType) float64 {
	sz := float64(dt.Size())
	q := float64(a.B) * float64(a.H) * float64(a.Lq) * float64(a.D)
	kv := float64(a.B) * float64(a.Hkv) * float64(a.Lk) * float64(a.D)
	l := float64(a.B) * float64(a.H) * float64(a.Lq)
	return (4*q+4*kv)*sz + 4*l
}

// AttnBwdInputs are the buffers every backward family starts from, in this
// order: Q, K, V, dO random; O and L written by the untimed Setup (the
// forward), so that they are consistent with Q, K, V as in training.
func AttnBwdInputs(a attention.AttnShape, dt profiler.DType) []profiler.BufferSpec {
	qn := int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D)
	kvn := int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D)
	ln := int64(a.B) * int64(a.H) * int64(a.Lq)
	return []profiler.BufferSpec{
		{Name: "Q", Role: profiler.In, Type: dt, Elems: qn, Init: profiler.InitNormal, Scale: 1},
		{Name: "K", Role: profiler.In, Type: dt, Elems: kvn, Init: profiler.InitNormal, Scale: 1},
		{Name: "V", Role: profiler.In, Type: dt, Elems: kvn, Init: profiler.InitNormal, Scale: 1},
		{Name: "O", Role: profiler.Scratch, Type: dt, Elems: qn, Init: profiler.InitPoison},
		{Name: "L", Role: profiler.Scratch, Type: profiler.F32, Elems: ln, Init: profiler.InitPoison},
		{Name: "dO", Role: profiler.In, Type: dt, Elems: qn, Init: profiler.InitNormal, Scale: 1},
	}
}

// AttnBwdOutputs are dQ [B,H,Lq,D], dK and dV [B,Hkv,Lk,D] in the storage type.
func AttnBwdOutputs(a attention.AttnShape, dt profiler.DType) []profiler.BufferSpec {
	qn := int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D)
	kvn := int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D)
	return []profiler.BufferSpec{
		{Name: "dQ", Role: profiler.Out, Type: dt, Elems: qn, Init: profiler.InitPoison},
		{Name: "dK", Role: profiler.Out, Type: dt, Elems: kvn, Init: profiler.InitPoison},
		{Name: "dV", Role: profiler.Out, Type: dt, Elems: kvn, Init: profiler.InitPoison},
	}
}

// SetupFwdKnobs are the attn_fwd tiles tried for the Setup, largest first;
// the first the device accepts is used (the forward is not timed).
var SetupFwdKnobs = []map[string]int{
	{"BQ": 64, "BK": 32, "WM": 4, "WN": 1},
	{"BQ": 32, "BK": 16, "WM": 2, "WN": 1},
	{"BQ": 16, "BK": 16, "WM": 1, "WN": 1},
	{"BQ": 8, "BK": 8, "WM": 1, "WN": 1},
}

// AttnBwdSetup is the untimed forward that writes O and L: attn_fwd's own
// program and dispatch, or with an additive mask (which attn_fwd has not)
// the simple attn_bwd_prep kernel (one warp per query row).
func AttnBwdSetup(s profiler.Spec, dev profiler.DeviceInfo, mask bool) ([]profiler.Dispatch, error) {
	a := attention.AttnShapeOf(s)
	if mask {
		causal := "0"
		if a.Causal {
			causal = "1"
		}
		return []profiler.Dispatch{{
			Name: "attn_bwd_prep",
			Program: profiler.Program{Source: "attn_bwd_prep", Entry: "attn_bwd_prep", Macros: []profiler.Macro{
				{Name: "D", Value: strconv.Itoa(a.D)},
				{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
				{Name: "CAUSAL", Value: causal},
			}},
			Grid:    [3]int{kit.CeilDiv(a.Lq, 4), a.H, a.B},
			Group:   [3]int{128, 1, 1},
			Args:    []string{"Q", "K", "V", "mask", "O", "L"},
			Scalars: AttnBwdScalars(a),
		}}, nil
	}
	fwd := profiler.Spec{Kernel: "attn_fwd", DType: s.DType, Dims: map[string]int{
		"B": a.B, "H": a.H, "Hkv": a.Hkv, "Lq": a.Lq, "Lk": a.Lk, "D": a.D,
	}, Flags: map[string]bool{"causal": a.Causal}}
	var last error
	for _, k := range SetupFwdKnobs {
		fwd.Knobs = k
		if err := (attnfwd.AttnFwd{}).Validate(fwd, dev); err != nil {
			last = err
			continue
		}
		d := attnfwd.AttnFwd{}.Dispatch(fwd)
		d.Name = "setup: attn_fwd (O, L)"
		return []profiler.Dispatch{d}, nil
	}
	return nil, fmt.Errorf("no attn_fwd tile fits %s for the Setup that computes O and L: %v", dev.Name, last)
}

// AttnBwdScalars is the scalar list every backward kernel takes.
func AttnBwdScalars(a attention.AttnShape) []profiler.Scalar {
	return []profiler.Scalar{
		profiler.I32Param("B", a.B), profiler.I32Param("H", a.H), profiler.I32Param("Hkv", a.Hkv),
		profiler.I32Param("Lq", a.Lq), profiler.I32Param("Lk", a.Lk),
		profiler.F32Param("scale", a.Scale()),
	}
}

// ValidateAttnShape holds the rules every backward family shares.
func ValidateAttnShape(s profiler.Spec, knobs []string) error {
	if err := kit.CheckPositive(s, knobs, []string{"B", "H", "Hkv", "Lq", "Lk", "D"}); err != nil {
		return err
	}
	a := attention.AttnShapeOf(s)
	if a.H%a.Hkv != 0 {
		return fmt.Errorf("H=%d must be a multiple of Hkv=%d (GQA groups of H/Hkv query heads): set Hkv to a divisor of H", a.H, a.Hkv)
	}
	return kit.CheckIndexRange(map[string]int64{
		"Q/O": int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D),
		"K/V": int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D),
	})
}

// AttnBwdTolerances: the gradients pass through more roundings than the
// forward (P and dS rounded to the storage type before the tensor-core
// products on GPUs, O rounded before delta = rowsum(dO∘O), the outputs
// rounded once) and dK/dV sum over all query rows, so the 16-bit bounds
// are about twice the forward's. f32 allows for the CPU's and GPUs' fast
// exponentials and the cancellation in dP − delta.
var AttnBwdTolerances = map[profiler.DType]profiler.Tolerance{
	profiler.F32:  {ATol: 1e-4, RTol: 1e-3},
	profiler.F16:  {ATol: 4e-3, RTol: 1e-2},
	profiler.BF16: {ATol: 3e-2, RTol: 4e-2},
}

// attnBwdRefRows computes, in float64, the softmax row of query (b, h, i)
// over all Lk keys (masked keys have p = 0) and dS = p∘(dP − delta), with
// dP_j = dO_i·V_j and delta = Σ_j p_j·dP_j. mask is nil or [Lq, Lk].
// dsAbs, when not nil, gets the magnitude dS_j is formed from (README
// "Tolerances"): p_j·(Σ_d|dO_d·V_jd| + Σ_j' p_j'·Σ_d|dO_d·V_j'd|).
func AttnBwdRefRow(a attention.AttnShape, q, k, v, dO, mask []float32, b, h, i int, p, ds, dsAbs []float64) {
	n := a.Visible(i)
	clear(p)
	clear(ds)
	clear(dsAbs)
	mx := attention.AttnScores(a, q, k, mask, b, h, i, p[:n])
	qo := a.QOffset(b, h, i)
	dor := dO[qo : qo+a.D]
	kvh := a.KVHead(h)
	if n == 0 || math.IsInf(mx, -1) {
		clear(p)
		return
	}
	var sum float64
	for j := range n {
		p[j] = math.Exp(p[j] - mx)
		sum += p[j]
	}
	var delta, deltaAbs float64
	for j := range n {
		p[j] /= sum
		vo := a.KVOffset(b, kvh, j)
		vr := v[vo : vo+a.D]
		var dp, dpAbs float64
		for d, x := range dor {
			dp += float64(x) * float64(vr[d])
			dpAbs += math.Abs(float64(x) * float64(vr[d]))
		}
		ds[j] = dp
		delta += p[j] * dp
		if dsAbs != nil {
			dsAbs[j] = dpAbs
			deltaAbs += p[j] * dpAbs
		}
	}
	for j := range n {
		ds[j] = p[j] * (ds[j] - delta)
		if dsAbs != nil {
			dsAbs[j] = p[j] * (dsAbs[j] + deltaAbs)
		}
	}
}

// AttnBwdReference is the float64 reference of every backward family:
//   - dQ on sampled query rows (at most maxRows of B·H·Lq: first, last and
//     seeded ones), each a full D-vector;
//   - dK and dV, all D columns, for sampled key rows. A key row's gradient
//     sums over every query row of its GQA group, so whole kv heads are
//     computed: every kv head when B·Hkv·Lk ≤ maxRows (small shapes: all of
//     dK/dV), else the first and the last (b, kv head), from which at most
//     maxRows/2 key rows each (first, last and seeded) are checked.
func AttnBwdReference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	a := attention.AttnShapeOf(s)
	qn := a.B * a.H * a.Lq * a.D
	kvn := a.B * a.Hkv * a.Lk * a.D
	want := map[string]int{"Q": qn, "K": kvn, "V": kvn, "dO": qn}
	hasMask := s.Flags["mask"]
	if hasMask {
		want["mask"] = a.Lq * a.Lk
	}
	if err := kit.NeedInputs(in, want); err != nil {
		return nil, err
	}
	q, k, v, dO := in["Q"], in["K"], in["V"], in["dO"]
	var mask []float32
	if hasMask {
		mask = in["mask"]
	}
	if maxRows <= 0 {
		maxRows = 256
	}
	scale := a.Scale()

	// dQ on sampled query rows.
	total := a.Rows()
	rows := profiler.SampleRows(total, maxRows, seed)
	qIdx := make([]int, len(rows)*a.D)
	qWant := make([]float64, len(rows)*a.D)
	gQ := kit.NewGrowth(a.Lk, len(qWant), 0)
	sabs := make([]float64, len(rows))
	kit.ParallelRows(len(rows), func(n int) {
		r := rows[n]
		b, h, i := a.RowBHI(r)
		p := make([]float64, a.Lk)
		ds := make([]float64, a.Lk)
		dsAbs := make([]float64, a.Lk)
		AttnBwdRefRow(a, q, k, v, dO, mask, b, h, i, p, ds, dsAbs)
		sabs[n] = attention.ScoreAbs(a, q, k, b, h, i)
		kvh := a.KVHead(h)
		acc := make([]float64, a.D)
		mag := gQ.Mag[n*a.D : (n+1)*a.D]
		for j, x := range ds {
			if x == 0 && dsAbs[j] == 0 {
				continue
			}
			ko := a.KVOffset(b, kvh, j)
			for d, kk := range k[ko : ko+a.D] {
				acc[d] += x * float64(kk)
				mag[d] += dsAbs[j] * math.Abs(float64(kk))
			}
		}
		for d := range a.D {
			qIdx[n*a.D+d] = r*a.D + d
			qWant[n*a.D+d] = scale * acc[d]
			mag[d] *= scale
		}
	})
	// Every gradient sums terms built from P (and dS): the per-term error is
	// the softmax's, with the score scale of the sampled query rows.
	termEps := kit.SoftmaxTermEps(s.DType, a.D, slices.Max(append(sabs, 0)))
	gQ.TermEps = termEps

	// dK/dV on whole kv heads, then sampled key rows of them.
	type head struct{ b, kvh int }
	var heads []head
	perHead := a.Lk
	if a.B*a.Hkv*a.Lk <= maxRows {
		for b := range a.B {
			for h := range a.Hkv {
				heads = append(heads, head{b, h})
			}
		}
	} else {
		heads = append(heads, head{0, 0})
		if a.B*a.Hkv > 1 {
			heads = append(heads, head{a.B - 1, a.Hkv - 1})
		}
		perHead = max(2, maxRows/len(heads))
	}
	var kIdx, vIdx []int
	var kWant, vWant, kMag, vMag []float64
	keyRows := 0
	for hi, hd := range heads {
		dk, dv, mk, mv := AttnBwdRefKVHead(a, q, k, v, dO, mask, hd.b, hd.kvh)
		keys := profiler.SampleRows(a.Lk, perHead, seed+uint64(hi))
		keyRows += len(keys)
		for _, j := range keys {
			off := a.KVOffset(hd.b, hd.kvh, j)
			for d := range a.D {
				kIdx = append(kIdx, off+d)
				kWant = append(kWant, scale*dk[j*a.D+d])
				kMag = append(kMag, scale*mk[j*a.D+d])
				vIdx = append(vIdx, off+d)
				vWant = append(vWant, dv[j*a.D+d])
				vMag = append(vMag, mv[j*a.D+d])
			}
		}
	}
	desc := profiler.DescribeRows(rows, total, seed)
	if len(heads) == a.B*a.Hkv && keyRows == a.B*a.Hkv*a.Lk {
		desc = fmt.Sprintf("dQ: %s; dK/dV: all %d key rows", desc, keyRows)
	} else {
		desc = fmt.Sprintf("dQ: %s; dK/dV: %d key rows (first, last and seeded) of kv heads %v (b, head), all D columns", desc, keyRows, heads)
	}
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "dQ", Index: qIdx, Want: qWant, Growth: gQ, Dims: []int{a.B, a.H, a.Lq, a.D}},
			{Buffer: "dK", Index: kIdx, Want: kWant, Growth: &profiler.Growth{Eps: gQ.Eps, TermEps: termEps, N: a.Lq * a.H / a.Hkv, Mag: kMag}, Dims: []int{a.B, a.Hkv, a.Lk, a.D}},
			{Buffer: "dV", Index: vIdx, Want: vWant, Growth: &profiler.Growth{Eps: gQ.Eps, TermEps: termEps, N: a.Lq * a.H / a.Hkv, Mag: vMag}, Dims: []int{a.B, a.Hkv, a.Lk, a.D}},
		},
		RowsChecked: len(rows) + keyRows,
		RowsTotal:   total + a.B*a.Hkv*a.Lk,
		Rows:        desc,
	}, nil
}

// AttnBwdRefKVHead accumulates, in float64, Σ dS_ij·Q_i (unscaled) and
// Σ P_ij·dO_i into every key row j of kv head (b, kvh), over all query rows
// of all query heads of its group. The rows are split over the cores, each
// with its own accumulators. mk and mv are the magnitudes of the same sums
// (Σ|dS|·|Q| from AttnBwdRefRow's dsAbs, and Σ P·|dO|).
func AttnBwdRefKVHead(a attention.AttnShape, q, k, v, dO, mask []float32, b, kvh int) (dk, dv, mk, mv []float64) {
	group := a.H / a.Hkv
	n := group * a.Lq
	workers := max(1, min(runtime.NumCPU(), n))
	parts := make([][4][]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pk := make([]float64, a.Lk*a.D)
			pv := make([]float64, a.Lk*a.D)
			qk := make([]float64, a.Lk*a.D)
			qv := make([]float64, a.Lk*a.D)
			p := make([]float64, a.Lk)
			ds := make([]float64, a.Lk)
			dsAbs := make([]float64, a.Lk)
			for r := w; r < n; r += workers {
				h := kvh*group + r/a.Lq
				i := r % a.Lq
				AttnBwdRefRow(a, q, k, v, dO, mask, b, h, i, p, ds, dsAbs)
				qo := a.QOffset(b, h, i)
				qr, dor := q[qo:qo+a.D], dO[qo:qo+a.D]
				for j := range a.Lk {
					pj, dsj, dsa := p[j], ds[j], dsAbs[j]
					if pj == 0 && dsj == 0 && dsa == 0 {
						continue
					}
					rk := pk[j*a.D : (j+1)*a.D]
					rv := pv[j*a.D : (j+1)*a.D]
					ak := qk[j*a.D : (j+1)*a.D]
					av := qv[j*a.D : (j+1)*a.D]
					for d := range a.D {
						rk[d] += dsj * float64(qr[d])
						rv[d] += pj * float64(dor[d])
						ak[d] += dsa * math.Abs(float64(qr[d]))
						av[d] += pj * math.Abs(float64(dor[d]))
					}
				}
			}
			parts[w] = [4][]float64{pk, pv, qk, qv}
		})
	}
	wg.Wait()
	dk, dv, mk, mv = parts[0][0], parts[0][1], parts[0][2], parts[0][3]
	for _, pt := range parts[1:] {
		for x := range dk {
			dk[x] += pt[0][x]
			dv[x] += pt[1][x]
			mk[x] += pt[2][x]
			mv[x] += pt[3][x]
		}
	}
	return dk, dv, mk, mv
}
