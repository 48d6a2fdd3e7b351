package sdpamulti

// sdpa_multi: n_query query rows attend a shared K/V cache in one dispatch
// (block decoding / speculative verification), one threadgroup per (query,
// head). The group's warps split the visible keys round-robin (warp w takes
// keys w, w+NW, …), each lane owning D/32 consecutive head-dim elements; a
// warp keeps an online softmax (running max, Σexp, O) in f32, and the warps
// are merged at the end through threadgroup memory.
//
// Visible keys: causal — query r sees keys [0, base_kv + r + 1) (the prefix
// plus the block up to itself); otherwise every query sees [0, base_kv +
// n_query).
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "sdpa_multi", entry "sdpa_multi".
//   dims: n_query (1..4096, default 16), H (1..256, default 32), Hkv (1..256,
//     default 8; H % Hkv == 0, query head h reads kv head h/(H/Hkv)), D ∈ {64,
//     128, 256} (default 128), base_kv (0..1<<20, default 4096), kv_stride
//     (1..1<<20, default 4608; base_kv + n_query ≤ kv_stride).
//   flag causal (default true).
//   knob TPG: threads per group, 1..2048 in the schema (default 1024) so that
//     the rules, not the schema, explain the geometries that would hang: it
//     must be a multiple of 32 (whole warps; TPG < 32 makes the warp count 0
//     and the key walk never advances — the seed's GPU freeze) and at most
//     the device's threads per group.
//   buffers: Q [n_query, H, D] T in (normal), K [Hkv, kv_stride, D] T in,
//     V [Hkv, kv_stride, D] T in, O [n_query, H, D] T out (poison).
//   dispatch "sdpa_multi": grid (H, n_query, 1), group (TPG,1,1); Args Q, K,
//     V, O; Scalars (i32 n_query, i32 H, i32 Hkv, i32 base_kv, i32
//     kv_stride, f32 scale = 1/sqrt(D)); Macros TPG, D, DTYPE, CAUSAL.
//   TGM items (NW = TPG/32): m_smem NW·4 and l_smem NW·4 (each warp's max
//     and Σexp), o_smem NW·D·4 (each warp's rescaled O row, summed per
//     column by the first D threads).
//   FLOPs 4·D per visible (query, head, key); bytes Q + O + the K and V rows
//   of the deepest query once per kv head (the minimum; other heads of a
//   GQA group re-read them from the cache).

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

func init() { profiler.Register(SDPAMulti{}) }

var _ profiler.Family = SDPAMulti{}

// SDPAMulti is the multi-query SDPA family.
type SDPAMulti struct{}

// Name is the family name.
func (SDPAMulti) Name() string { return "sdpa_multi" }

// Doc is the one-line description.
func (SDPAMulti) Doc() string {
	return "multi-query SDPA: n_query rows against a shared KV cache, one group per (query, head), online softmax merged across warps; causal and GQA"
}

// Schema lists knobs, dims, flags and dtypes.
func (SDPAMulti) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "TPG", Doc: "threads per group: a multiple of 32 (whole warps) up to the device limit", Default: 1024, Min: 1, Max: 2048},
		},
		Dims: []profiler.Param{
			{Name: "n_query", Doc: "query rows of the block", Default: 16, Min: 1, Max: 4096},
			{Name: "H", Doc: "query heads", Default: 32, Min: 1, Max: 256},
			{Name: "Hkv", Doc: "key/value heads (GQA: H must be a multiple; follows H when only H is set)", Default: 8, Min: 1, Max: 256, Follows: "H"},
			{Name: "D", Doc: "head dim (each lane owns D/32 elements)", Default: 128, Values: []int{64, 128, 256}},
			{Name: "base_kv", Doc: "cached keys before the block", Default: 4096, Min: 0, Max: 1 << 20},
			{Name: "kv_stride", Doc: "allocated cache depth (≥ base_kv + n_query)", Default: 4608, Min: 1, Max: 1 << 20},
		},
		Flags: []profiler.FlagParam{
			{Name: "causal", Doc: "query r sees base_kv + r + 1 keys (else all base_kv + n_query)", Default: true},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// SDPAMultiShape is the problem of a spec.
type SDPAMultiShape struct {
	NQ, H, Hkv, D, Base, Stride int
	Causal                      bool
}

// SDPAMultiShapeOf reads the dims and flag.
func SDPAMultiShapeOf(s profiler.Spec) SDPAMultiShape {
	return SDPAMultiShape{NQ: s.Dims["n_query"], H: s.Dims["H"], Hkv: s.Dims["Hkv"], D: s.Dims["D"], Base: s.Dims["base_kv"], Stride: s.Dims["kv_stride"], Causal: s.Flags["causal"]}
}

// Visible is the number of keys query r sees.
func (a SDPAMultiShape) Visible(r int) int {
	if a.Causal {
		return a.Base + r + 1
	}
	return a.Base + a.NQ
}

// Pairs counts visible (query, head, key) triples.
func (a SDPAMultiShape) Pairs() int64 {
	var n int64
	for r := range a.NQ {
		n += int64(a.Visible(r))
	}
	return n * int64(a.H)
}

// SDPAMultiTGM is the cross-warp merge storage.
func SDPAMultiTGM(tpg, d int) []profiler.TGMItem {
	nw := tpg / 32
	return []profiler.TGMItem{
		{Name: "m_smem", Bytes: nw * 4, Note: "NW f32: each warp's running max"},
		{Name: "l_smem", Bytes: nw * 4, Note: "NW f32: each warp's Σexp"},
		{Name: "o_smem", Bytes: nw * d * 4, Note: "NW×D f32: each warp's rescaled O row"},
	}
}

func (SDPAMulti) dispatch(s profiler.Spec) profiler.Dispatch {
	a := SDPAMultiShapeOf(s)
	tpg := s.Knobs["TPG"]
	causal := 0
	if a.Causal {
		causal = 1
	}
	return profiler.Dispatch{
		Name: "sdpa_multi",
		Program: profiler.Program{Source: "sdpa_multi", Entry: "sdpa_multi", Macros: []profiler.Macro{
			{Name: "TPG", Value: strconv.Itoa(tpg)},
			{Name: "D", Value: strconv.Itoa(a.D)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
			{Name: "CAUSAL", Value: strconv.Itoa(causal)},
		}},
		Grid:  [3]int{a.H, a.NQ, 1},
		Group: [3]int{tpg, 1, 1},
		Args:  []string{"Q", "K", "V", "O"},
		Scalars: []profiler.Scalar{
			profiler.I32Param("n_query", a.NQ), profiler.I32Param("H", a.H), profiler.I32Param("Hkv", a.Hkv),
			profiler.I32Param("base_kv", a.Base), profiler.I32Param("kv_stride", a.Stride),
			profiler.F32Param("scale", 1/math.Sqrt(float64(a.D))),
		},
		TGM: SDPAMultiTGM(tpg, a.D),
	}
}

// Validate rejects the geometries that would hang or read past the cache.
func (f SDPAMulti) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"TPG"}, []string{"n_query", "H", "Hkv", "D", "kv_stride"}); err != nil {
		return err
	}
	a := SDPAMultiShapeOf(s)
	tpg := s.Knobs["TPG"]
	simd := 32
	if tpg < simd {
		return fmt.Errorf("TPG=%d is less than one warp of %d threads: the warp count TPG/32 would be 0 and the key walk (step = warp count) would never advance, hanging the GPU; use TPG ≥ 32", tpg, simd)
	}
	if tpg%simd != 0 {
		return fmt.Errorf("TPG=%d is not a multiple of %d: the merge assumes whole warps (a partial warp's lanes would own no head-dim elements); use %d or %d", tpg, simd, tpg/simd*simd, (tpg/simd+1)*simd)
	}
	if dev.MaxThreadsPerGroup > 0 && tpg > dev.MaxThreadsPerGroup {
		return fmt.Errorf("TPG=%d exceeds %s's %d threads per group: the launch would fail; use TPG ≤ %d", tpg, dev.Name, dev.MaxThreadsPerGroup, dev.MaxThreadsPerGroup)
	}
	if a.H%a.Hkv != 0 {
		return fmt.Errorf("H=%d must be a multiple of Hkv=%d (GQA groups of H/Hkv query heads): set Hkv to a divisor of H", a.H, a.Hkv)
	}
	if a.Base+a.NQ > a.Stride {
		return fmt.Errorf("base_kv=%d + n_query=%d = %d keys exceed kv_stride=%d: the last query would read past the cache; raise kv_stride to at least %d", a.Base, a.NQ, a.Base+a.NQ, a.Stride, a.Base+a.NQ)
	}
	if err := kit.CheckIndexRange(map[string]int64{
		"Q/O": int64(a.NQ) * int64(a.H) * int64(a.D),
		"K/V": int64(a.Hkv) * int64(a.Stride) * int64(a.D),
	}); err != nil {
		return err
	}
	d := f.dispatch(s)
	if err := kit.CheckGrid(&d, dev, "reduce n_query"); err != nil {
		return err
	}
	return kit.CheckGroup(&d, dev, "lower TPG", "lower TPG (o_smem is TPG/32·D·4 bytes)")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f SDPAMulti) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := SDPAMultiShapeOf(s)
	qn := int64(a.NQ) * int64(a.H) * int64(a.D)
	kvn := int64(a.Hkv) * int64(a.Stride) * int64(a.D)
	t := s.DType
	sz := float64(t.Size())
	deepest := a.Visible(a.NQ - 1)
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "Q", Role: profiler.In, Type: t, Elems: qn, Init: profiler.InitNormal, Scale: 1},
			{Name: "K", Role: profiler.In, Type: t, Elems: kvn, Init: profiler.InitNormal, Scale: 1},
			{Name: "V", Role: profiler.In, Type: t, Elems: kvn, Init: profiler.InitNormal, Scale: 1},
			{Name: "O", Role: profiler.Out, Type: t, Elems: qn, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
		FLOPs:      4 * float64(a.D) * float64(a.Pairs()),
		Bytes:      (2*float64(qn) + 2*float64(a.Hkv)*float64(deepest)*float64(a.D)) * sz,
		Notes:      []string{fmt.Sprintf("each group reads its visible K/V rows; the %d query heads of a kv head share them through the cache", a.H/a.Hkv)},
	}, nil
}

// Reference computes O in float64 for sampled (query, head) rows.
func (f SDPAMulti) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	a := SDPAMultiShapeOf(s)
	qn := a.NQ * a.H * a.D
	kvn := a.Hkv * a.Stride * a.D
	if err := kit.NeedInputs(in, map[string]int{"Q": qn, "K": kvn, "V": kvn}); err != nil {
		return nil, err
	}
	total := a.NQ * a.H
	rows := profiler.SampleRows(total, maxRows, seed)
	idx := make([]int, len(rows)*a.D)
	want := make([]float64, len(rows)*a.D)
	q, k, v := in["Q"], in["K"], in["V"]
	gr := kit.NewGrowth(a.Visible(a.NQ-1), len(want), 0)
	sabs := make([]float64, len(rows))
	kit.ParallelRows(len(rows), func(n int) {
		row := rows[n] // = r·H + h, the layout of Q and O
		sabs[n] = SDPAMultiRowMag(a, q, k, v, row/a.H, row%a.H, want[n*a.D:(n+1)*a.D], gr.Mag[n*a.D:(n+1)*a.D])
		for d := range a.D {
			idx[n*a.D+d] = row*a.D + d
		}
	})
	gr.TermEps = kit.SoftmaxTermEps(profiler.F32, a.D, slices.Max(append(sabs, 0))) // P stays f32: no tensor-core rounding
	return &profiler.Reference{
		Checks:      []profiler.Check{{Buffer: "O", Index: idx, Want: want, Growth: gr, Dims: []int{a.NQ, a.H, a.D}}},
		RowsChecked: len(rows),
		RowsTotal:   total,
		Rows:        profiler.DescribeRows(rows, total, seed) + " (row = query·H + head)",
	}, nil
}

// SDPAMultiRow is O of query r, head h in float64 (two-pass softmax).
func SDPAMultiRow(a SDPAMultiShape, q, k, v []float32, r, h int, o []float64) {
	SDPAMultiRowMag(a, q, k, v, r, h, o, nil)
}

// SDPAMultiRowMag is SDPAMultiRow that also sets mag[d], the kit.SumMag
// of the terms P_j·V_jd that O_d sums, when mag is not nil, and returns max_j scale·Σ_d |q_d·k_jd| (README
// "Tolerances").
func SDPAMultiRowMag(a SDPAMultiShape, q, k, v []float32, r, h int, o, mag []float64) (sabs float64) {
	n := a.Visible(r)
	qo := (r*a.H + h) * a.D
	kvh := h / (a.H / a.Hkv)
	base := kvh * a.Stride * a.D
	scale := 1 / math.Sqrt(float64(a.D))
	s := make([]float64, n)
	m := math.Inf(-1)
	for j := range n {
		var dot, abs float64
		kr := k[base+j*a.D : base+(j+1)*a.D]
		for d := range a.D {
			dot += float64(q[qo+d]) * float64(kr[d])
			abs += math.Abs(float64(q[qo+d]) * float64(kr[d]))
		}
		s[j] = dot * scale
		sabs = max(sabs, abs*scale)
		m = math.Max(m, s[j])
	}
	clear(o)
	clear(mag)
	var sq []float64
	if mag != nil {
		sq = make([]float64, a.D)
	}
	var sum float64
	for j := range n {
		p := math.Exp(s[j] - m)
		sum += p
		vr := v[base+j*a.D : base+(j+1)*a.D]
		for d := range a.D {
			o[d] += p * float64(vr[d])
			if mag != nil {
				t := p * float64(vr[d])
				mag[d] += math.Abs(t)
				sq[d] += t * t
			}
		}
	}
	for d := range o {
		o[d] /= sum
		if mag != nil {
			mag[d] = kit.SumMag(o[d], mag[d]/sum, sq[d]/(sum*sum))
		}
	}
	return sabs
}

// Tolerance: f32 softmax and accumulation, O rounded once to T.
func (SDPAMulti) Tolerance(d profiler.DType) profiler.Tolerance {
	return kit.PickTol(profiler.DefaultTolerances, d)
}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (SDPAMulti) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "sdpa_multi", DType: profiler.F16, Knobs: map[string]int{"TPG": 64}, Dims: map[string]int{"n_query": 3, "H": 2, "Hkv": 1, "D": 64, "base_kv": 5, "kv_stride": 9}, Flags: map[string]bool{"causal": true}}}
}
