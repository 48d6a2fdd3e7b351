package attnbwdatomic

import (
	"fmt"

	"github.com/mltop/mltop/kernels/attention"
	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	attnfwd "github.com/mltop/mltop/kernels/attn_fwd"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// AttnBwdAtomic is the one-kernel attention backward of seed 000: a
// threadgroup owns BQ query rows of one (batch, head), keeps dQ in
// registers while it walks the key tiles, and adds its dK/dV partials into
// f32 scratch with float atomics; a cast pass writes dK/dV in the storage
// type.
//
// Plan contract (CPU, CUDA and Metal agree on it):
//
//	buffers, in order: Q [B,H,Lq,D] T in; K, V [B,Hkv,Lk,D] T in;
//	  O [B,H,Lq,D] T and L [B,H,Lq] f32 scratch, written by the untimed
//	  Setup (attn_fwd's program, or attn_bwd_prep when mask is set);
//	  dO [B,H,Lq,D] T in; mask [Lq,Lk] f32 in (additive, uniform −1..0,
//	  shared by all batches and heads; a 1-element placeholder when the mask
//	  flag is off, so the kernel signature never changes); dQ [B,H,Lq,D] T
//	  out; dK_acc, dV_acc [B,Hkv,Lk,D] f32 scratch; dK, dV [B,Hkv,Lk,D] T out.
//	scalars: i32 B, i32 H, i32 Hkv, i32 Lq, i32 Lk, f32 scale (= 1/√D).
//	dispatches (all timed):
//	  1. zero-fill dK_acc   2. zero-fill dV_acc
//	  3. "attn_bwd_atomic" (source/entry attn_bwd_atomic): grid
//	     (ceil(Lq/BQ), H, B), group (32·WM·WN,1,1); Args Q,K,V,O,L,dO,mask,
//	     dQ,dK_acc,dV_acc; macros BQ, BK, WM, WN, D, DTYPE, CAUSAL, MASK.
//	  4. "attn_bwd_cast" (source/entry attn_bwd_cast): grid (ceil(n/256),1,1),
//	     group (256,1,1); Args dK_acc,dV_acc,dK,dV; scalar i32 n =
//	     B·Hkv·Lk·D; macro DTYPE.
//	geometry: as attn_fwd, warp (wm, wn) owns S/dP rows [wm·BQ/WM, …) and
//	  columns [wn·BK/WN, …), and dQ rows of wm × head-dim columns
//	  [wn·D/WN, …). The group first computes delta = rowsum(dO∘O) of its
//	  rows. Per key tile: P = exp(S − L) and dS = P∘(dP − delta) go to
//	  P_smem/dS_smem; dQ += dS·K in registers; the tile's dK/dV partials
//	  (Σ over the BQ rows) are split evenly over all threads, element e by
//	  thread e mod threads, and each partial element is added ONCE with one
//	  f32 atomic per Q tile. (Seed 000's comments describe the pitfall of
//	  every lane that holds a copy of a row adding it: a 4× overcount that
//	  the reference check catches, see the cpu tests.)
//	TGM items (pad 8 elements on T tiles, 4 on f32 tiles): Q_smem, dO_smem
//	  BQ·(D+8)·sz; K_smem, V_smem BK·(D+8)·sz; P_smem, dS_smem BQ·(BK+4)·4;
//	  stat_smem 2·BQ·4 (the row's L·log2e and delta).
//	rules: BQ % (8·WM) == 0, BK % (8·WN) == 0, D % (8·WN) == 0, threads ≤
//	  the device maximum, TGM ≤ the device limit (opt-in limit on CUDA).
//	FLOPs: 2.5 × forward (10·D per unmasked pair). Bytes: Q, K, V, O, dO,
//	  L read, dQ, dK, dV written, plus the f32 scratch zeroed and read back.
type AttnBwdAtomic struct{}

// Name is the family name.
func (AttnBwdAtomic) Name() string { return "attn_bwd_atomic" }

// Doc is the one-line description.
func (AttnBwdAtomic) Doc() string {
	return "attention backward, one kernel (seed 000): Q-tile outer, dQ in registers, dK/dV by f32 atomics + cast; causal, GQA, additive mask"
}

// Schema lists knobs, dims, flags and dtypes.
func (AttnBwdAtomic) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "BQ", Doc: "query rows per threadgroup", Default: 32, Values: attention.TileSizes},
			{Name: "BK", Doc: "keys per inner tile", Default: 16, Values: attention.TileSizes,
				// f32 tiles at BK=16 overflow Apple's 32 KB by 256 B
				ByDType: map[profiler.DType]int{profiler.F32: 8}},
			{Name: "WM", Doc: "warps along the query rows", Default: 4, Values: []int{1, 2, 4, 8}},
			{Name: "WN", Doc: "warps along the keys / head dim", Default: 1, Values: []int{1, 2, 4}},
		},
		Dims: attnbwd.AttnBwdDims(),
		Flags: []profiler.FlagParam{
			{Name: "causal", Doc: "causal mask, bottom-right aligned: row i sees key j iff j <= i + Lk - Lq", Default: false},
			{Name: "mask", Doc: "additive mask [Lq, Lk] f32 (uniform −1..0) added to the scaled scores", Default: false},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// AttnBwdAtomicTGM is the threadgroup memory of the fused kernel.
func AttnBwdAtomicTGM(bq, bk, d int, dt profiler.DType) []profiler.TGMItem {
	sz, ty := dt.Size(), string(dt)
	return []profiler.TGMItem{
		{Name: "Q_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "dO_smem", Bytes: bq * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BQ×(D+8) %s, 8-element pad", ty)},
		{Name: "K_smem", Bytes: bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
		{Name: "V_smem", Bytes: bk * (d + attention.TGMPad) * sz, Note: fmt.Sprintf("BK×(D+8) %s, 8-element pad", ty)},
		{Name: "P_smem", Bytes: bq * (bk + 4) * 4, Note: "BQ×(BK+4) f32 probabilities, 4-element pad"},
		{Name: "dS_smem", Bytes: bq * (bk + 4) * 4, Note: "BQ×(BK+4) f32 dS = P∘(dP−delta), 4-element pad"},
		{Name: "stat_smem", Bytes: 2 * bq * 4, Note: "2·BQ f32: L·log2e and delta per row"},
	}
}

func (f AttnBwdAtomic) dispatches(s profiler.Spec) []profiler.Dispatch {
	a := attention.AttnShapeOf(s)
	k := attnfwd.AttnKnobsOf(s)
	n := a.B * a.Hkv * a.Lk * a.D
	return []profiler.Dispatch{
		{Name: "zero dK_acc", Zero: "dK_acc"},
		{Name: "zero dV_acc", Zero: "dV_acc"},
		{
			Name: "attn_bwd_atomic",
			Program: profiler.Program{Source: "attn_bwd_atomic", Entry: "attn_bwd_atomic",
				Macros: append(k.Macros(a, s.DType), profiler.Macro{Name: "MASK", Value: kit.B2I(s.Flags["mask"])})},
			Grid:    [3]int{kit.CeilDiv(a.Lq, k.BQ), a.H, a.B},
			Group:   [3]int{32 * k.WM * k.WN, 1, 1},
			Args:    []string{"Q", "K", "V", "O", "L", "dO", "mask", "dQ", "dK_acc", "dV_acc"},
			Scalars: attnbwd.AttnBwdScalars(a),
			TGM:     AttnBwdAtomicTGM(k.BQ, k.BK, a.D, s.DType),
		},
		{
			Name: "attn_bwd_cast",
			Program: profiler.Program{Source: "attn_bwd_cast", Entry: "attn_bwd_cast", Macros: []profiler.Macro{
				{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
			}},
			Grid:    [3]int{kit.CeilDiv(n, 256), 1, 1},
			Group:   [3]int{256, 1, 1},
			Args:    []string{"dK_acc", "dV_acc", "dK", "dV"},
			Scalars: []profiler.Scalar{profiler.I32Param("n", n)},
		},
	}
}

// Validate applies the tile, thread and TGM rules.
func (f AttnBwdAtomic) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := attnbwd.ValidateAttnShape(s, []string{"BQ", "BK", "WM", "WN"}); err != nil {
		return err
	}
	a := attention.AttnShapeOf(s)
	k := attnfwd.AttnKnobsOf(s)
	if k.BQ%(8*k.WM) != 0 {
		return fmt.Errorf("BQ=%d must be a multiple of 8·WM=%d: each of the WM warps owns a multiple of 8 query rows; raise BQ or lower WM", k.BQ, 8*k.WM)
	}
	if k.BK%(8*k.WN) != 0 {
		return fmt.Errorf("BK=%d must be a multiple of 8·WN=%d: each of the WN warps owns a multiple of 8 keys; raise BK or lower WN", k.BK, 8*k.WN)
	}
	if a.D%(8*k.WN) != 0 {
		return fmt.Errorf("D=%d must be a multiple of 8·WN=%d: each of the WN warps owns a multiple of 8 head-dim columns of dQ; lower WN", a.D, 8*k.WN)
	}
	if s.Flags["mask"] && int64(a.Lq)*int64(a.Lk) > kit.MaxIndexElems {
		return fmt.Errorf("mask [Lq=%d, Lk=%d] exceeds the kernels' 32-bit indices: reduce Lq or Lk", a.Lq, a.Lk)
	}
	ds := f.dispatches(s)
	return kit.CheckGroup(&ds[2], dev, "lower WM or WN", "lower BQ or BK (Q_smem and dO_smem grow with BQ·D)")
}

// Plan builds buffers, the Setup, the dispatches, FLOPs and bytes.
func (f AttnBwdAtomic) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := attention.AttnShapeOf(s)
	mask := s.Flags["mask"]
	setup, err := attnbwd.AttnBwdSetup(s, dev, mask)
	if err != nil {
		return nil, err
	}
	kvn := int64(a.B) * int64(a.Hkv) * int64(a.Lk) * int64(a.D)
	maskElems := int64(1)
	if mask {
		maskElems = int64(a.Lq) * int64(a.Lk)
	}
	bufs := attnbwd.AttnBwdInputs(a, s.DType)
	bufs = append(bufs, profiler.BufferSpec{Name: "mask", Role: profiler.In, Type: profiler.F32, Elems: maskElems, Init: profiler.InitUniform, Lo: -1, Hi: 0})
	outs := attnbwd.AttnBwdOutputs(a, s.DType)
	bufs = append(bufs, outs[0],
		profiler.BufferSpec{Name: "dK_acc", Role: profiler.Scratch, Type: profiler.F32, Elems: kvn, Init: profiler.InitZero},
		profiler.BufferSpec{Name: "dV_acc", Role: profiler.Scratch, Type: profiler.F32, Elems: kvn, Init: profiler.InitZero},
		outs[1], outs[2])
	p := &profiler.Plan{
		Buffers:    bufs,
		Setup:      setup,
		Dispatches: f.dispatches(s),
		FLOPs:      attnbwd.AttnBwdFLOPs(a),
		Bytes:      attnbwd.AttnBwdIOBytes(a, s.DType) + 4*float64(kvn)*4,
		Notes: []string{
			"FLOPs = 2.5 × forward = 10·D per unmasked (query, key) pair",
			"O and L come from an untimed Setup forward (" + setup[0].Program.Source + "); the timed plan is the zero fills, the fused kernel (delta included) and the cast",
		},
	}
	if mask {
		p.Notes = append(p.Notes, "additive mask [Lq, Lk] f32, uniform −1..0, shared by all batches and heads")
	}
	return p, nil
}

// Reference computes dQ on sampled query rows and dK/dV on sampled key rows.
func (AttnBwdAtomic) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	return attnbwd.AttnBwdReference(s, in, maxRows, seed)
}

// Tolerance is the pass criterion for dtype d.
func (AttnBwdAtomic) Tolerance(d profiler.DType) profiler.Tolerance {
	return attnbwd.AttnBwdTolerances[d]
}

func init() { profiler.Register(AttnBwdAtomic{}) }

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (AttnBwdAtomic) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "attn_bwd_atomic", DType: profiler.F16, Knobs: map[string]int{"BQ": 16, "BK": 16, "WM": 1, "WN": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true, "mask": true}}}
}
