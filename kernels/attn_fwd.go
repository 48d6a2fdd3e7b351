package kernels

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mltop/mltop/profiler"
)

// AttnFwd is the fused attention forward: O = softmax(scale·Q·Kᵀ)·V with an
// online softmax over key tiles, and the row logsumexp L kept for the
// backward pass. One threadgroup owns BQ query rows of one (batch, head)
// and walks the keys in BK tiles.
type AttnFwd struct{}

// maxIndexElems bounds every buffer: the kernels index with 32-bit ints.
const maxIndexElems = math.MaxInt32

// tgmPad is the per-row padding (in elements) of the shared tiles against
// bank conflicts.
const tgmPad = 8

var tileSizes = []int{8, 16, 32, 64, 128}

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
			{Name: "BQ", Doc: "query rows per threadgroup (S tile height)", Default: 32, Values: tileSizes},
			{Name: "BK", Doc: "keys per inner tile (S tile width)", Default: 16, Values: tileSizes},
			{Name: "WM", Doc: "warps (simdgroups) along the query rows", Default: 4, Values: []int{1, 2, 4, 8}},
			{Name: "WN", Doc: "warps along the keys / head dim; WN>1 shares P and row stats through TGM", Default: 1, Values: []int{1, 2, 4}},
		},
		Dims: []profiler.Param{
			{Name: "B", Doc: "batch", Default: 1, Min: 1, Max: 64},
			{Name: "H", Doc: "query heads", Default: 8, Min: 1, Max: 256},
			{Name: "Hkv", Doc: "key/value heads (GQA: H must be a multiple)", Default: 8, Min: 1, Max: 256},
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

// attnKnobs are the tile knobs of a spec.
type attnKnobs struct{ BQ, BK, WM, WN int }

func attnKnobsOf(s profiler.Spec) attnKnobs {
	return attnKnobs{BQ: s.Knobs["BQ"], BK: s.Knobs["BK"], WM: s.Knobs["WM"], WN: s.Knobs["WN"]}
}

// macros are what the attn_fwd and attn_bwd_atomic kernels compile with:
// these tile knobs, the head dim, the dtype and the causal flag.
func (k attnKnobs) macros(a AttnShape, dt profiler.DType) []profiler.Macro {
	return []profiler.Macro{
		{Name: "BQ", Value: strconv.Itoa(k.BQ)},
		{Name: "BK", Value: strconv.Itoa(k.BK)},
		{Name: "WM", Value: strconv.Itoa(k.WM)},
		{Name: "WN", Value: strconv.Itoa(k.WN)},
		{Name: "D", Value: strconv.Itoa(a.D)},
		{Name: "DTYPE", Value: DTypeMacro(dt)},
		{Name: "CAUSAL", Value: b2i(a.Causal)},
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
		{Name: "Q_smem", Bytes: bq * (d + tgmPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "K_smem", Bytes: bk * (d + tgmPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
		{Name: "V_smem", Bytes: bk * (d + tgmPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
	}
	if wn > 1 {
		items = append(items,
			profiler.TGMItem{Name: "P_smem", Bytes: bq * (bk + tgmPad) * sz, Note: fmt.Sprintf("BQ×(BK+8) %s probabilities shared by the WN warps of a row", ty)},
			profiler.TGMItem{Name: "red_smem", Bytes: 2 * wn * bq * 4, Note: "2·WN·BQ f32: row max and row sum partials"},
		)
	}
	return items
}

// dispatch builds the single launch of the plan.
func (f AttnFwd) dispatch(s profiler.Spec) profiler.Dispatch {
	a := AttnShapeOf(s)
	k := attnKnobsOf(s)
	return profiler.Dispatch{
		Name:    "attn_fwd",
		Program: profiler.Program{Source: "attn_fwd", Entry: "attn_fwd", Macros: k.macros(a, s.DType)},
		Grid:    [3]int{ceilDiv(a.Lq, k.BQ), a.H, a.B},
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
	if err := checkPositive(s, []string{"BQ", "BK", "WM", "WN"}, []string{"B", "H", "Hkv", "Lq", "Lk", "D"}); err != nil {
		return err
	}
	a := AttnShapeOf(s)
	k := attnKnobsOf(s)
	if a.H%a.Hkv != 0 {
		return fmt.Errorf("H=%d must be a multiple of Hkv=%d (GQA groups of H/Hkv query heads): set Hkv to a divisor of H", a.H, a.Hkv)
	}
	rowMul := 8 * k.WM
	why := "each of the WM warps owns a multiple of 8 query rows"
	if dev.Backend == "cuda" && (s.DType == profiler.F16 || s.DType == profiler.BF16) {
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
	if err := checkIndexRange(map[string]int64{
		"Q/O": int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.D),
		"K/V": int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D),
	}); err != nil {
		return err
	}
	d := f.dispatch(s)
	return checkGroup(&d, dev, "lower WM or WN", "lower BQ, BK or WN")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f AttnFwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	if err := f.Validate(s, dev); err != nil {
		return nil, err
	}
	a := AttnShapeOf(s)
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
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
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
	a := AttnShapeOf(s)
	qn := a.B * a.H * a.Lq * a.D
	kvn := a.B * a.Hkv * a.Lk * a.D
	if err := needInputs(in, map[string]int{"Q": qn, "K": kvn, "V": kvn}); err != nil {
		return nil, err
	}
	total := a.Rows()
	rows := profiler.SampleRows(total, maxRows, seed)
	oIdx := make([]int, len(rows)*a.D)
	oWant := make([]float64, len(rows)*a.D)
	lIdx := make([]int, len(rows))
	lWant := make([]float64, len(rows))
	q, k, v := in["Q"], in["K"], in["V"]
	ParallelRows(len(rows), func(n int) {
		r := rows[n]
		b, h, i := a.RowBHI(r)
		o, lse := AttnRowRef(a, q, k, v, b, h, i)
		for d := range a.D {
			oIdx[n*a.D+d] = r*a.D + d
			oWant[n*a.D+d] = o[d]
		}
		lIdx[n], lWant[n] = r, lse
	})
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "O", Index: oIdx, Want: oWant},
			{Buffer: "L", Index: lIdx, Want: lWant, Tol: &lseTolerance},
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

// DTypeMacro is the DTYPE macro value of the contract: 0 f32, 1 f16, 2 bf16.
func DTypeMacro(d profiler.DType) string {
	switch d {
	case profiler.F16:
		return "1"
	case profiler.BF16:
		return "2"
	}
	return "0"
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// checkIndexRange refuses buffers the kernels' 32-bit indices cannot address.
func checkIndexRange(bufs map[string]int64) error {
	for _, name := range []string{"Q/O", "K/V", "Y/dY/dX"} {
		if n, ok := bufs[name]; ok && n > maxIndexElems {
			return fmt.Errorf("%s would hold %d elements, more than the kernels' 32-bit indices address (%d): reduce the dims", name, n, int64(maxIndexElems))
		}
	}
	return nil
}

// checkGroup holds a dispatch's threads and TGM against the device limits.
func checkGroup(d *profiler.Dispatch, dev profiler.DeviceInfo, threadsFix, tgmFix string) error {
	if dev.MaxThreadsPerGroup > 0 && d.Threads() > dev.MaxThreadsPerGroup {
		return fmt.Errorf("%d threads per group exceed the %s limit of %d: %s", d.Threads(), dev.Name, dev.MaxThreadsPerGroup, threadsFix)
	}
	if lim := profiler.TGMLimit(dev, d); lim > 0 && d.TGMBytes() > lim {
		return fmt.Errorf("TGM %d B exceeds the %s limit of %d B per group by %d B: %s", d.TGMBytes(), dev.Name, lim, d.TGMBytes()-lim, tgmFix)
	}
	return nil
}

// checkPositive guards the rules' arithmetic against a spec whose knobs or
// dims were never filled (Validate called without the schema defaults).
func checkPositive(s profiler.Spec, knobs, dims []string) error {
	for _, n := range knobs {
		if v := s.Knobs[n]; v <= 0 {
			return fmt.Errorf("knob %s=%d must be positive: set it or apply the schema defaults", n, v)
		}
	}
	for _, n := range dims {
		if v := s.Dims[n]; v <= 0 {
			return fmt.Errorf("dim %s=%d must be positive: set it or apply the schema defaults", n, v)
		}
	}
	return nil
}

// lseTolerance holds the f32 logsumexp to f32 accuracy in every dtype: the
// scores come from the rounded inputs with f32 accumulation, so L has no
// bf16 rounding in it, and dropping a single key of a long row (which moves
// L by about 1/Lk) must fail the check.
var lseTolerance = profiler.Tolerance{ATol: 1e-4, RTol: 1e-5}
