package attnfwd

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/mltop/mltop/kernels/attention"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// AttnFwd is the fused attention forward: O = softmax(scale·Q·Kᵀ)·V with an
// online softmax over key tiles, and the row logsumexp L kept for the
// backward pass. One threadgroup owns BQ query rows of one (batch, head)
// and walks the keys in BK tiles.
type AttnFwd struct{}

// Name is the family name.
func (AttnFwd) Name() string { return "attn_fwd" }

// Doc is the one-line description.
func (AttnFwd) Doc() string {
	return "fused attention forward (flash style): O = softmax(QKᵀ/√D)·V and logsumexp L; causal (bottom-right) and GQA"
}

// Schema lists knobs, dims, flags and dtypes.
func (AttnFwd) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "BQ", Doc: "query rows per threadgroup (S tile height)", Default: 32, Values: attention.TileSizes,
				// the CUDA tensor-core path needs 16·WM rows: 64 at the default WM=4
				ByDType: map[profiler.DType]int{profiler.F16: 64, profiler.BF16: 64}},
			{Name: "BK", Doc: "keys per inner tile (S tile width)", Default: 16, Values: attention.TileSizes},
			{Name: "WM", Doc: "warps (simdgroups) along the query rows", Default: 4, Values: []int{1, 2, 4, 8}},
			{Name: "WN", Doc: "warps along the keys / head dim; WN>1 shares P and row stats through TGM", Default: 1, Values: []int{1, 2, 4}},
		},
		Dims: []profiler.Param{
			{Name: "B", Doc: "batch", Default: 1, Min: 1, Max: 64},
			{Name: "H", Doc: "query heads", Default: 8, Min: 1, Max: 256},
			{Name: "Hkv", Doc: "key/value heads (GQA: H must be a multiple; follows H when only H is set)", Default: 8, Min: 1, Max: 256, Follows: "H"},
			{Name: "Lq", Doc: "query length", Default: 256, Min: 1, Max: 65536},
			{Name: "Lk", Doc: "key/value length", Default: 256, Min: 1, Max: 65536},
			{Name: "D", Doc: "head dim", Default: 64, Values: []int{64, 96, 128, 256}},
		},
		Flags: []profiler.FlagParam{
			{Name: "causal", Doc: "causal mask, bottom-right aligned: row i sees key j iff j <= i + Lk - Lq", Default: false},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// AttnKnobs are the tile knobs of a spec.
type AttnKnobs struct{ BQ, BK, WM, WN int }

func AttnKnobsOf(s profiler.Spec) AttnKnobs {
	return AttnKnobs{BQ: s.Knobs["BQ"], BK: s.Knobs["BK"], WM: s.Knobs["WM"], WN: s.Knobs["WN"]}
}

// macros are what the attn_fwd and attn_bwd_atomic kernels compile with:
// these tile knobs, the head dim, the dtype and the causal flag.
func (k AttnKnobs) Macros(a attention.AttnShape, dt profiler.DType) []profiler.Macro {
	return []profiler.Macro{
		{Name: "BQ", Value: strconv.Itoa(k.BQ)},
		{Name: "BK", Value: strconv.Itoa(k.BK)},
		{Name: "WM", Value: strconv.Itoa(k.WM)},
		{Name: "WN", Value: strconv.Itoa(k.WN)},
		{Name: "D", Value: strconv.Itoa(a.D)},
		{Name: "DTYPE", Value: kit.DTypeMacro(dt)},
		{Name: "CAUSAL", Value: kit.B2I(a.Causal)},
	}
}

// AttnFwdTGM is the threadgroup memory the GPU kernels allocate for these
// knobs: padded Q, K and V tiles, and with WN > 1 a shared P tile and the
// row max/sum partials. With WN == 1 each warp owns whole rows and keeps P
// in registers.
func AttnFwdTGM(bq, bk, wn, d int, dt profiler.DType) []profiler.TGMItem {
	sz := dt.Size()
	ty := string(dt)
	items := []profiler.TGMItem{
		{Name: "Q_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "K_smem", Bytes: bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
		{Name: "V_smem", Bytes: bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
	}
	if wn > 1 {
		items = append(items,
			profiler.TGMItem{Name: "P_smem", Bytes: bq * (bk + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(BK+8) %s probabilities shared by the WN warps of a row", ty)},
			profiler.TGMItem{Name: "red_smem", Bytes: 2 * wn * bq * 4, Note: "2·WN·BQ f32: row max and row sum partials"},
		)
	}
	return items
}

// dispatch builds the single launch of the plan.
func (f AttnFwd) Dispatch(s profiler.Spec) profiler.Dispatch {
	a := attention.AttnShapeOf(s)
	k := AttnKnobsOf(s)
	return profiler.Dispatch{
		Name:    "attn_fwd",
		Program: profiler.Program{Source: "attn_fwd", Entry: "attn_fwd", Macros: k.Macros(a, s.DType)},
		Grid:    [3]int{kit.CeilDiv(a.Lq, k.BQ), a.H, a.B},
		Group:   [3]int{32 * k.WM * k.WN, 1, 1},
		Args:    []string{"Q", "K", "V", "O", "L"},
		Scalars: []profiler.Scalar{
			profiler.I32Param("B", a.B), profiler.I32Param("H", a.H), profiler.I32Param("Hkv", a.Hkv),
			profiler.I32Param("Lq", a.Lq), profiler.I32Param("Lk", a.Lk),
			profiler.F32Param("scale", a.Scale()),
		},
		TGM: AttnFwdTGM(k.BQ, k.BK, k.WN, a.D, s.DType),
	}
}

// Validate applies the tile, thread and TGM rules.
func (f AttnFwd) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"BQ", "BK", "WM", "WN"}, []string{"B", "H", "Hkv", "Lq", "Lk", "D"}); err != nil {
		return err
	}
	a := attention.AttnShapeOf(s)
	k := AttnKnobsOf(s)
	if a.H%a.Hkv != 0 {
		return fmt.Errorf("H=%d must be a multiple of Hkv=%d (GQA groups of H/Hkv query heads): set Hkv to a divisor of H", a.H, a.Hkv)
	}
	rowMul := 8 * k.WM
	why := "each of the WM warps owns a multiple of 8 query rows"
	if kit.TensorCoreMMA(dev, s.DType) {
		rowMul = 16 * k.WM
		why = "the CUDA tensor-core path gives each of the WM warps a multiple of 16 query rows"
	}
	if k.BQ%rowMul != 0 {
		return fmt.Errorf("BQ=%d must be a multiple of %d·WM=%d: %s; raise BQ or lower WM", k.BQ, rowMul/k.WM, rowMul, why)
	}
	if k.BK%(8*k.WN) != 0 {
		return fmt.Errorf("BK=%d must be a multiple of 8·WN=%d: each of the WN warps owns a multiple of 8 keys; raise BK or lower WN", k.BK, 8*k.WN)
	}
	if a.D%(8*k.WN) != 0 {
		return fmt.Errorf("D=%d must be a multiple of 8·WN=%d: each of the WN warps owns a multiple of 8 head-dim columns of O; lower WN", a.D, 8*k.WN)
	}
	if err := kit.CheckIndexRange(map[string]int64{
		"Q/O": int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D),
		"K/V": int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D),
	}); err != nil {
		return err
	}
	d := f.Dispatch(s)
	return kit.CheckGroup(&d, dev, "lower WM or WN", "lower BQ, BK or WN")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f AttnFwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := attention.AttnShapeOf(s)
	qElems := int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D)
	kvElems := int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D)
	lElems := int64(a.B) * int64(a.H) * int64(a.Lq)
	t := s.DType
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "Q", Role: profiler.In, Type: t, Elems: qElems, Init: profiler.InitNormal, Scale: 1},
			{Name: "K", Role: profiler.In, Type: t, Elems: kvElems, Init: profiler.InitNormal, Scale: 1},
			{Name: "V", Role: profiler.In, Type: t, Elems: kvElems, Init: profiler.InitNormal, Scale: 1},
			{Name: "O", Role: profiler.Out, Type: t, Elems: qElems, Init: profiler.InitPoison},
			{Name: "L", Role: profiler.Out, Type: profiler.F32, Elems: lElems, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.Dispatch(s)},
	}
	pairs := a.Pairs()
	p.FLOPs = 4 * float64(a.D) * float64(pairs)
	sz := float64(t.Size())
	p.Bytes = float64(2*qElems+2*kvElems)*sz + float64(lElems)*4
	if a.Causal {
		dense := float64(a.B) * float64(a.H) * float64(a.Lq) * float64(a.Lk)
		p.Notes = append(p.Notes, fmt.Sprintf("FLOPs count the %d unmasked (query, key) pairs only (%.1f%% of %.0f)", pairs, 100*float64(pairs)/dense, dense))
		if a.Lq > a.Lk {
			p.Notes = append(p.Notes, fmt.Sprintf("Lq=%d > Lk=%d: the first %d query rows see no key (O = 0, L = -inf)", a.Lq, a.Lk, a.Lq-a.Lk))
		}
	}
	return p, nil
}

// Reference computes O and L in float64 for sampled (b, h, i) rows.
func (f AttnFwd) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	a := attention.AttnShapeOf(s)
	qn := a.B * a.H * a.Lq * a.D
	kvn := a.B * a.Hkv * a.Lk * a.D
	if err := kit.NeedInputs(in, map[string]int{"Q": qn, "K": kvn, "V": kvn}); err != nil {
		return nil, err
	}
	total := a.Rows()
	rows := profiler.SampleRows(total, maxRows, seed)
	oIdx := make([]int, len(rows)*a.D)
	oWant := make([]float64, len(rows)*a.D)
	lIdx := make([]int, len(rows))
	lWant := make([]float64, len(rows))
	q, k, v := in["Q"], in["K"], in["V"]
	gO := kit.NewGrowth(a.Lk, len(oWant), 0)
	sabs := make([]float64, len(rows))
	kit.ParallelRows(len(rows), func(n int) {
		r := rows[n]
		b, h, i := a.RowBHI(r)
		o, mag, lse, sa := attention.AttnRowRefMag(a, q, k, v, b, h, i)
		for d := range a.D {
			oIdx[n*a.D+d] = r*a.D + d
			oWant[n*a.D+d] = o[d]
		}
		copy(gO.Mag[n*a.D:], mag)
		lIdx[n], lWant[n], sabs[n] = r, lse, sa
	})
	// O sums Lk terms P_j·V_j; L = m + log Σ exp is off by the relative
	// error of its positive sum, an absolute error of scale 1.
	gO.TermEps = kit.SoftmaxTermEps(s.DType, a.D, slices.Max(append(sabs, 0)))
	gL := &profiler.Growth{Eps: gO.Eps, TermEps: gO.TermEps, N: a.Lk, Scale: 1}
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "O", Index: oIdx, Want: oWant, Growth: gO, Dims: []int{a.B, a.H, a.Lq, a.D}},
			{Buffer: "L", Index: lIdx, Want: lWant, Tol: &lseTolerance, Growth: gL, Dims: []int{a.B, a.H, a.Lq}},
		},
		RowsChecked: len(rows),
		RowsTotal:   total,
		Rows:        profiler.DescribeRows(rows, total, seed),
	}, nil
}

// AttnTolerances are looser than the defaults for the 16-bit types because
// the GPU kernels round the probabilities P to the storage type before the
// P·V product (an error of up to one unit roundoff times |V| per term, on
// top of rounding O once). f32 keeps the default.
var AttnTolerances = map[profiler.DType]profiler.Tolerance{
	profiler.F32:  profiler.DefaultTolerances[profiler.F32],
	profiler.F16:  {ATol: 2e-3, RTol: 5e-3},
	profiler.BF16: {ATol: 1.6e-2, RTol: 2e-2},
}

// Tolerance is the pass criterion for dtype d.
func (AttnFwd) Tolerance(d profiler.DType) profiler.Tolerance { return AttnTolerances[d] }

// lseTolerance holds the f32 logsumexp to f32 accuracy in every dtype: the
// scores come from the rounded inputs with f32 accumulation, so L has no
// bf16 rounding in it, and dropping a single key of a long row (which moves
// L by about 1/Lk) must fail the check.
var lseTolerance = profiler.Tolerance{ATol: 1e-4, RTol: 1e-5}

func init() { profiler.Register(AttnFwd{}) }

var _ profiler.Family = AttnFwd{}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (AttnFwd) Examples() []profiler.Spec {
	attn := func(dt profiler.DType, causal bool, bq, bk, wm, wn, lq, lk, d, h, hkv int) profiler.Spec {
		return profiler.Spec{Kernel: "attn_fwd", DType: dt,
			Knobs: map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn},
			Dims:  map[string]int{"B": 1, "H": h, "Hkv": hkv, "Lq": lq, "Lk": lk, "D": d},
			Flags: map[string]bool{"causal": causal}}
	}
	return []profiler.Spec{
		attn(profiler.F32, false, 16, 16, 2, 1, 40, 56, 64, 2, 1),  // GQA, ragged
		attn(profiler.F16, true, 32, 16, 2, 2, 24, 40, 64, 2, 2),   // causal, WN=2
		attn(profiler.BF16, true, 16, 16, 1, 2, 40, 24, 96, 1, 1),  // causal Lq>Lk: masked rows, D=96
		attn(profiler.BF16, false, 16, 16, 2, 2, 33, 47, 64, 2, 1), // ragged bf16
		attn(profiler.F16, false, 8, 32, 1, 4, 20, 70, 128, 3, 3),  // WN=4, D=128
		attn(profiler.F32, true, 64, 16, 8, 1, 70, 33, 64, 1, 1),   // WM=8, causal Lq>Lk
	}
}
