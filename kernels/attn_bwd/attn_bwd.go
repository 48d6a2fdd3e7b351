package attnbwd

import (
	"fmt"
	"strconv"

	"github.com/mltop/mltop/kernels/attention"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// AttnBwd is the two-kernel attention backward of seed 001 (FlashAttention-2
// style, no atomics): delta = rowsum(dO∘O) first, then a dQ kernel over
// query blocks and a dKV kernel over key blocks, each recomputing P from
// the saved logsumexp in the log2 domain (P = 2^(S·scale·log2e − L·log2e)).
//
// Plan contract (CPU, CUDA and Metal agree on it):
//
//	buffers, in order: Q [B,H,Lq,D] T in; K, V [B,Hkv,Lk,D] T in;
//	  O [B,H,Lq,D] T and L [B,H,Lq] f32 scratch, written by the untimed
//	  Setup (attn_fwd's program); dO [B,H,Lq,D] T in; delta [B,H,Lq] f32
//	  scratch; dQ [B,H,Lq,D] T out; dK, dV [B,Hkv,Lk,D] T out.
//	scalars (every dispatch): i32 B, i32 H, i32 Hkv, i32 Lq, i32 Lk, f32 scale.
//	dispatches (all timed):
//	  1. "attn_bwd_delta" (source/entry attn_bwd_delta): grid (ceil(Lq/8),
//	     H, B), group (256,1,1), one warp per row; Args O, dO, delta;
//	     macros D, DTYPE.
//	  2. "attn_bwd_dq" (attn_bwd_dq): grid (ceil(Lq/BQ_dq), H, B), group
//	     (32·WM_dq,1,1); Args Q,K,V,dO,L,delta,dQ; macros BQ=BQ_dq,
//	     BK=BK_dq, WM=WM_dq, D, DTYPE, CAUSAL. Warp w owns query rows
//	     [w·BQ/WM, …) of the block for S, dP, dS and its dQ rows (registers).
//	     TGM: Q_smem, dO_smem BQ·(D+8)·sz; K_smem, V_smem BK·(D+8)·sz;
//	     dS_smem BQ·(BK+4)·4; stat_smem 2·BQ·4.
//	  3. "attn_bwd_dkv" (attn_bwd_dkv): grid (ceil(Lk/BK_dkv), Hkv, B),
//	     group (32·WM_dkv,1,1); loops over the H/Hkv query heads of the kv
//	     head, then over the query blocks that see the key block (causal
//	     skips the rest); Args Q,K,V,dO,L,delta,dK,dV; macros BQ=BQ_dkv,
//	     BK=BK_dkv, WM=WM_dkv, D, DTYPE, CAUSAL, ALIAS. Warp w owns query
//	     rows [w·BQ/WM, …) of each block and keeps a partial dK/dV of the
//	     whole BK×D key block in registers; with WM > 1 the partials are
//	     summed through red_smem (BK·D f32, dK then dV) after the loops.
//	     TGM: Q_smem, dO_smem BQ·(D+8)·sz; KV_smem 2·BK·(D+8)·sz (K and V
//	     of the block, resident); P_smem, dS_smem BQ·(BK+4)·4; stat_smem
//	     2·BQ·4; red_smem BK·D·4 when WM > 1 — with alias=1 it lives over
//	     Q_smem+dO_smem (temporally disjoint: the loops are over), listed
//	     with 0 bytes, which needs Q_smem+dO_smem ≥ red_smem.
//	     CUDA f16/bf16 (tensor cores) differ: the dQ kernel double-buffers
//	     K_smem/V_smem and keeps dS in registers (no dS_smem); in the dKV
//	     kernel warp w owns key rows [w·BK/WM, …) of the block and every
//	     query row of each Q block, so its dK/dV rows are complete in
//	     registers — no red_smem (alias has nothing to alias), no
//	     P_smem/dS_smem — and Q_smem, dO_smem and stat_smem are
//	     double-buffered (2 stages each).
//	rules: BQ_x % (8·WM_x) == 0, BK_x % 8 == 0, threads and TGM within the
//	  device limits, alias=1 only where red_smem fits under Q_smem+dO_smem;
//	  on the CUDA tensor-core path BQ_dq % (16·WM_dq), BK_dq % 16,
//	  BK_dkv % (16·WM_dkv) and BQ_dkv % 16 == 0 instead.
//	FLOPs: 2.5 × forward (10·D per unmasked pair). Bytes: Q, K, V, O, dO, L
//	  read, dQ, dK, dV written, delta written and read twice.
type AttnBwd struct{}

// Name is the family name.
func (AttnBwd) Name() string { return "attn_bwd" }

// Doc is the one-line description.
func (AttnBwd) Doc() string {
	return "attention backward, two kernels (seed 001): delta, dQ over Q blocks, dKV over K blocks (GQA heads then Q blocks), no atomics, log2 softmax, red_smem aliasing"
}

var bwdWM = []int{1, 2, 4, 8}

// Schema lists knobs, dims, flags and dtypes.
func (AttnBwd) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "BQ_dq", Doc: "dQ kernel: query rows per threadgroup", Default: 32, Values: attention.TileSizes},
			{Name: "BK_dq", Doc: "dQ kernel: keys per inner tile", Default: 16, Values: attention.TileSizes},
			{Name: "WM_dq", Doc: "dQ kernel: warps (each owns BQ/WM query rows)", Default: 2, Values: bwdWM},
			{Name: "BQ_dkv", Doc: "dKV kernel: query rows per inner tile", Default: 16, Values: attention.TileSizes},
			{Name: "BK_dkv", Doc: "dKV kernel: keys per threadgroup", Default: 16, Values: attention.TileSizes},
			{Name: "WM_dkv", Doc: "dKV kernel: warps (each owns BQ/WM query rows of a tile, partial dK/dV reduced in red_smem; on CUDA f16/bf16 each owns BK/WM key rows)", Default: 1, Values: bwdWM},
		},
		Dims: AttnBwdDims(),
		Flags: []profiler.FlagParam{
			{Name: "causal", Doc: "causal mask, bottom-right aligned: row i sees key j iff j <= i + Lk - Lq", Default: false},
			{Name: "alias", Doc: "dKV: alias red_smem over Q_smem+dO_smem (seed 001: D=128 dKV 23 KB → 14.8 KB)", Default: false},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// AttnBwdDQTGM is the dQ kernel's threadgroup memory. On the CUDA
// tensor-core path (tc) dS stays in the mma registers and has no tile, and
// K and V are double-buffered.
func AttnBwdDQTGM(bq, bk, d int, dt profiler.DType, tc bool) []profiler.TGMItem {
	sz, ty := dt.Size(), string(dt)
	kv := func(name string) profiler.TGMItem {
		if tc {
			return profiler.TGMItem{Name: name, Bytes: 2 * bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("2 stages × BK×(D+8) %s (the next key tile loads during this one), 8-element pad", ty)}
		}
		return profiler.TGMItem{Name: name, Bytes: bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)}
	}
	items := []profiler.TGMItem{
		{Name: "Q_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "dO_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		kv("K_smem"), kv("V_smem"),
	}
	if !tc {
		items = append(items, profiler.TGMItem{Name: "dS_smem", Bytes: bq * (bk + 4) * 4, Note: "BQ×(BK+4) f32 dS, 4-element pad"})
	}
	return append(items, profiler.TGMItem{Name: "stat_smem", Bytes: 2 * bq * 4, Note: "2·BQ f32: L·log2e and delta per row"})
}

// AttnBwdTC reports whether the CUDA tensor-core path runs: f16/bf16 on
// CUDA, where P and dS stay in mma registers.
func AttnBwdTC(dev profiler.DeviceInfo, dt profiler.DType) bool {
	return kit.TensorCoreMMA(dev, dt)
}

// AttnBwdDKVTGM is the dKV kernel's threadgroup memory; with alias the
// reduction buffer is carved out of Q_smem+dO_smem and costs nothing. On
// the CUDA tensor-core path (tc) warps own key rows, so there is no
// reduction buffer, P and dS stay in registers, and Q, dO and the row
// statistics are double-buffered.
func AttnBwdDKVTGM(bq, bk, wm, d int, dt profiler.DType, alias, tc bool) []profiler.TGMItem {
	sz, ty := dt.Size(), string(dt)
	if tc {
		return []profiler.TGMItem{
			{Name: "Q_smem", Bytes: 2 * bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("2 stages × BQ×(D+8) %s (the next Q block loads during this one), 8-element pad", ty)},
			{Name: "dO_smem", Bytes: 2 * bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("2 stages × BQ×(D+8) %s, 8-element pad", ty)},
			{Name: "KV_smem", Bytes: 2 * bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("2·BK×(D+8) %s: the block's K and V, resident; 8-element pad", ty)},
			{Name: "stat_smem", Bytes: 2 * 2 * bq * 4, Note: "2 stages × 2·BQ f32: L and delta per row"},
		}
	}
	items := []profiler.TGMItem{
		{Name: "Q_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "dO_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "KV_smem", Bytes: 2 * bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("2·BK×(D+8) %s: the block's K and V, resident; 8-element pad", ty)},
		{Name: "P_smem", Bytes: bq * (bk + 4) * 4, Note: "BQ×(BK+4) f32 probabilities, 4-element pad"},
		{Name: "dS_smem", Bytes: bq * (bk + 4) * 4, Note: "BQ×(BK+4) f32 dS, 4-element pad"},
		{Name: "stat_smem", Bytes: 2 * bq * 4, Note: "2·BQ f32: L and delta per row"},
	}
	if wm > 1 {
		red := profiler.TGMItem{Name: "red_smem", Bytes: bk * d * 4, Note: fmt.Sprintf("BK×D f32 (%d B): the WM warps' partial dK, then dV, summed; no pad", bk*d*4)}
		if alias {
			red.Bytes = 0
			red.Note = fmt.Sprintf("aliased over Q_smem+dO_smem (%d B of %d B; used only after the loops)", bk*d*4, 2*bq*(d+attention.TGMPad)*sz)
		}
		items = append(items, red)
	}
	return items
}

type bwdKnobs struct{ bq, bk, wm int }

func (f AttnBwd) knobs(s profiler.Spec) (dq, dkv bwdKnobs) {
	return bwdKnobs{s.Knobs["BQ_dq"], s.Knobs["BK_dq"], s.Knobs["WM_dq"]},
		bwdKnobs{s.Knobs["BQ_dkv"], s.Knobs["BK_dkv"], s.Knobs["WM_dkv"]}
}

func (f AttnBwd) dispatches(s profiler.Spec, dev profiler.DeviceInfo) []profiler.Dispatch {
	a := attention.AttnShapeOf(s)
	tc := AttnBwdTC(dev, s.DType)
	dq, dkv := f.knobs(s)
	sc := AttnBwdScalars(a)
	tile := func(k bwdKnobs) []profiler.Macro {
		return []profiler.Macro{
			{Name: "BQ", Value: strconv.Itoa(k.bq)},
			{Name: "BK", Value: strconv.Itoa(k.bk)},
			{Name: "WM", Value: strconv.Itoa(k.wm)},
			{Name: "D", Value: strconv.Itoa(a.D)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
			{Name: "CAUSAL", Value: kit.B2I(a.Causal)},
		}
	}
	alias := s.Flags["alias"]
	return []profiler.Dispatch{
		AttnBwdDeltaDispatch(a, s.DType),
		{
			Name:    "attn_bwd_dq",
			Program: profiler.Program{Source: "attn_bwd_dq", Entry: "attn_bwd_dq", Macros: tile(dq)},
			Grid:    [3]int{kit.CeilDiv(a.Lq, dq.bq), a.H, a.B},
			Group:   [3]int{32 * dq.wm, 1, 1},
			Args:    []string{"Q", "K", "V", "dO", "L", "delta", "dQ"},
			Scalars: sc,
			TGM:     AttnBwdDQTGM(dq.bq, dq.bk, a.D, s.DType, tc),
		},
		{
			Name:    "attn_bwd_dkv",
			Program: profiler.Program{Source: "attn_bwd_dkv", Entry: "attn_bwd_dkv", Macros: append(tile(dkv), profiler.Macro{Name: "ALIAS", Value: kit.B2I(alias)})},
			Grid:    [3]int{kit.CeilDiv(a.Lk, dkv.bk), a.Hkv, a.B},
			Group:   [3]int{32 * dkv.wm, 1, 1},
			Args:    []string{"Q", "K", "V", "dO", "L", "delta", "dK", "dV"},
			Scalars: sc,
			TGM:     AttnBwdDKVTGM(dkv.bq, dkv.bk, dkv.wm, a.D, s.DType, alias, tc),
		},
	}
}

// AttnBwdDeltaDispatch is delta = rowsum(dO∘O), one warp per row, eight
// rows per group (shared with the unfused family).
func AttnBwdDeltaDispatch(a attention.AttnShape, dt profiler.DType) profiler.Dispatch {
	return profiler.Dispatch{
		Name: "attn_bwd_delta",
		Program: profiler.Program{Source: "attn_bwd_delta", Entry: "attn_bwd_delta", Macros: []profiler.Macro{
			{Name: "D", Value: strconv.Itoa(a.D)},
			{Name: "DTYPE", Value: kit.DTypeMacro(dt)},
		}},
		Grid:    [3]int{kit.CeilDiv(a.Lq, 8), a.H, a.B},
		Group:   [3]int{256, 1, 1},
		Args:    []string{"O", "dO", "delta"},
		Scalars: AttnBwdScalars(a),
	}
}

// Validate applies the tile, thread, TGM and aliasing rules.
func (f AttnBwd) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := ValidateAttnShape(s, []string{"BQ_dq", "BK_dq", "WM_dq", "BQ_dkv", "BK_dkv", "WM_dkv"}); err != nil {
		return err
	}
	a := attention.AttnShapeOf(s)
	dq, dkv := f.knobs(s)
	tc := AttnBwdTC(dev, s.DType)
	if tc {
		if dq.bq%(16*dq.wm) != 0 {
			return fmt.Errorf("BQ_dq=%d must be a multiple of 16·WM_dq=%d: the CUDA tensor-core path gives each warp a multiple of 16 query rows; raise BQ_dq or lower WM_dq", dq.bq, 16*dq.wm)
		}
		if dq.bk%16 != 0 {
			return fmt.Errorf("BK_dq=%d must be a multiple of 16 on the CUDA tensor-core path (k16 mma steps over the keys)", dq.bk)
		}
		if dkv.bk%(16*dkv.wm) != 0 {
			return fmt.Errorf("BK_dkv=%d must be a multiple of 16·WM_dkv=%d: on the CUDA tensor-core path each warp owns a multiple of 16 key rows; raise BK_dkv or lower WM_dkv", dkv.bk, 16*dkv.wm)
		}
		if dkv.bq%16 != 0 {
			return fmt.Errorf("BQ_dkv=%d must be a multiple of 16 on the CUDA tensor-core path (k16 mma steps over the queries)", dkv.bq)
		}
	} else {
		for _, c := range []struct {
			k   bwdKnobs
			sfx string
		}{{dq, "dq"}, {dkv, "dkv"}} {
			if c.k.bq%(8*c.k.wm) != 0 {
				return fmt.Errorf("BQ_%s=%d must be a multiple of 8·WM_%s=%d: each warp owns a multiple of 8 query rows; raise BQ_%s or lower WM_%s", c.sfx, c.k.bq, c.sfx, 8*c.k.wm, c.sfx, c.sfx)
			}
			if c.k.bk%8 != 0 {
				return fmt.Errorf("BK_%s=%d must be a multiple of 8", c.sfx, c.k.bk)
			}
		}
	}
	if s.Flags["alias"] && dkv.wm > 1 && !tc {
		red, room := dkv.bk*a.D*4, 2*dkv.bq*(a.D+attention.TGMPad)*s.DType.Size()
		if red > room {
			return fmt.Errorf("alias: red_smem (BK_dkv·D·4 = %d B) does not fit over Q_smem+dO_smem (%d B): raise BQ_dkv, lower BK_dkv, or turn alias off", red, room)
		}
	}
	ds := f.dispatches(s, dev)
	if err := kit.CheckGroup(&ds[1], dev, "lower WM_dq", "lower BQ_dq or BK_dq"); err != nil {
		return fmt.Errorf("dQ kernel: %w", err)
	}
	if err := kit.CheckGroup(&ds[2], dev, "lower WM_dkv", "lower BQ_dkv or BK_dkv, or set alias"); err != nil {
		return fmt.Errorf("dKV kernel: %w", err)
	}
	return nil
}

// Plan builds buffers, the Setup, the dispatches, FLOPs and bytes.
func (f AttnBwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := attention.AttnShapeOf(s)
	setup, err := AttnBwdSetup(s, dev, false)
	if err != nil {
		return nil, err
	}
	ln := int64(a.B) * int64(a.H) * int64(a.Lq)
	bufs := AttnBwdInputs(a, s.DType)
	bufs = append(bufs, profiler.BufferSpec{Name: "delta", Role: profiler.Scratch, Type: profiler.F32, Elems: ln, Init: profiler.InitPoison})
	bufs = append(bufs, AttnBwdOutputs(a, s.DType)...)
	return &profiler.Plan{
		Buffers:    bufs,
		Setup:      setup,
		Dispatches: f.dispatches(s, dev),
		FLOPs:      AttnBwdFLOPs(a),
		Bytes:      AttnBwdIOBytes(a, s.DType) + 3*4*float64(ln),
		Notes: []string{
			"FLOPs = 2.5 × forward = 10·D per unmasked (query, key) pair",
			"O and L come from an untimed Setup forward (attn_fwd); the timed plan is delta + dQ + dKV",
		},
	}, nil
}

// Reference computes dQ on sampled query rows and dK/dV on sampled key rows.
func (AttnBwd) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	return AttnBwdReference(s, in, maxRows, seed)
}

// Tolerance is the pass criterion for dtype d.
func (AttnBwd) Tolerance(d profiler.DType) profiler.Tolerance { return AttnBwdTolerances[d] }

func init() { profiler.Register(AttnBwd{}) }

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (AttnBwd) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BQ_dq": 16, "BK_dq": 16, "WM_dq": 2, "BQ_dkv": 16, "BK_dkv": 16, "WM_dkv": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 40, "Lk": 24, "D": 64}, Flags: map[string]bool{"causal": true, "alias": true}}}
}
