package attnbwdunfused

import (
	"fmt"
	"strconv"

	"github.com/mltop/mltop/kernels/attention"
	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// AttnBwdUnfused is the baseline seed 001 compares against: the backward
// with the attention matrix materialised per head (P and dS in f32 scratch
// [B,H,Lq,Lk], which is why its peak memory grows with L²) and the five
// products run as tiled matrix kernels. It computes the full square even
// when causal (masked entries are written as 0), as an unfused graph does.
//
// Plan contract (CPU, CUDA and Metal agree on it):
//
//	buffers, in order: Q [B,H,Lq,D] T in; K, V [B,Hkv,Lk,D] T in;
//	  O [B,H,Lq,D] T, L [B,H,Lq] f32 scratch (untimed Setup: attn_fwd);
//	  dO [B,H,Lq,D] T in; delta [B,H,Lq] f32 scratch; P, dS [B,H,Lq,Lk] f32
//	  scratch; dQ [B,H,Lq,D] T out; dK, dV [B,Hkv,Lk,D] T out.
//	scalars (every dispatch): i32 B, i32 H, i32 Hkv, i32 Lq, i32 Lk, f32 scale.
//	dispatches (all timed):
//	  1. attn_bwd_delta (as in attn_bwd).
//	  2–6. "mm: …" (source/entry attn_bwd_mm), group (256,1,1) = 16×16
//	     threads, each a (BM/16)×(BN/16) block of the BM×BN output tile,
//	     K steps of 16 through A_smem/B_smem; Args Q,K,V,dO,L,delta,P,dS,
//	     dQ,dK,dV (all of them, every mode); macros BM, BN, D, DTYPE,
//	     CAUSAL, MODE:
//	     MODE 0 P = exp(scale·Q·Kᵀ − L) (0 where masked): M=Lq, N=Lk, K=D,
//	       grid (ceil(Lk/BN), ceil(Lq/BM), B·H)
//	     MODE 1 dS = P∘(dO·Vᵀ − delta): same grid
//	     MODE 2 dV = Σ_heads Pᵀ·dO: M=Lk, N=D, K=Lq (per query head of the
//	       GQA group), grid (ceil(D/BN), ceil(Lk/BM), B·Hkv)
//	     MODE 3 dK = scale·Σ_heads dSᵀ·Q: as MODE 2
//	     MODE 4 dQ = scale·dS·K: M=Lq, N=D, K=Lk, grid (ceil(D/BN),
//	       ceil(Lq/BM), B·H)
//	TGM items: A_smem 16·(BM+4)·4, B_smem 16·(BN+4)·4 (f32 staging of the
//	  operands, k-major, 4-element pad); on the CUDA tensor-core path
//	  (f16/bf16) A_smem BM·(32+8)·sz, B_smem BN·(32+8)·sz (K steps of 32 in
//	  the storage type, k-contiguous; P and dS rounded to it on load), which
//	  needs BM ≥ 32 and BN ≥ 64.
//	FLOPs: the same useful 2.5 × forward over unmasked pairs as the fused
//	  families (so TFLOP/s compare like for like; the square is computed).
//	Bytes: the fused minimum plus P and dS written once and read twice each.
type AttnBwdUnfused struct{}

// Name is the family name.
func (AttnBwdUnfused) Name() string { return "attn_bwd_unfused" }

// Doc is the one-line description.
func (AttnBwdUnfused) Doc() string {
	return "attention backward, unfused baseline: P and dS materialised per head (f32 [B,H,Lq,Lk]), five tiled matrix products"
}

var mmTiles = []int{16, 32, 64, 128}

// Schema lists knobs, dims, flags and dtypes.
func (AttnBwdUnfused) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "BM", Doc: "matrix kernels: output rows per threadgroup (256 threads, 16×16)", Default: 64, Values: mmTiles},
			{Name: "BN", Doc: "matrix kernels: output columns per threadgroup", Default: 64, Values: mmTiles},
		},
		Dims: attnbwd.AttnBwdDims(),
		Flags: []profiler.FlagParam{
			{Name: "causal", Doc: "causal mask, bottom-right aligned (the full square is still computed)", Default: false},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// AttnBwdMMTGM is the matrix kernels' threadgroup memory. The CUDA
// tensor-core path (tc) stages K steps of 32 in the storage type, both
// operands k-contiguous.
func AttnBwdMMTGM(bm, bn int, dt profiler.DType, tc bool) []profiler.TGMItem {
	if tc {
		sz, ty := dt.Size(), string(dt)
		return []profiler.TGMItem{
			{Name: "A_smem", Bytes: bm * 40 * sz, Note: fmt.Sprintf("BM×(32+8) %s, k-contiguous, 8-element pad", ty)},
			{Name: "B_smem", Bytes: bn * 40 * sz, Note: fmt.Sprintf("BN×(32+8) %s, k-contiguous, 8-element pad", ty)},
		}
	}
	return []profiler.TGMItem{
		{Name: "A_smem", Bytes: 16 * (bm + 4) * 4, Note: "16×(BM+4) f32, k-major, 4-element pad"},
		{Name: "B_smem", Bytes: 16 * (bn + 4) * 4, Note: "16×(BN+4) f32, k-major, 4-element pad"},
	}
}

var mmModes = []string{"P = exp(scale·Q·Kᵀ − L)", "dS = P∘(dO·Vᵀ − delta)", "dV = Pᵀ·dO", "dK = scale·dSᵀ·Q", "dQ = scale·dS·K"}

func (f AttnBwdUnfused) dispatches(s profiler.Spec, dev profiler.DeviceInfo) []profiler.Dispatch {
	a := attention.AttnShapeOf(s)
	bm, bn := s.Knobs["BM"], s.Knobs["BN"]
	out := []profiler.Dispatch{attnbwd.AttnBwdDeltaDispatch(a, s.DType)}
	for mode, what := range mmModes {
		var grid [3]int
		switch mode {
		case 0, 1:
			grid = [3]int{kit.CeilDiv(a.Lk, bn), kit.CeilDiv(a.Lq, bm), a.B * a.H}
		case 2, 3:
			grid = [3]int{kit.CeilDiv(a.D, bn), kit.CeilDiv(a.Lk, bm), a.B * a.Hkv}
		default:
			grid = [3]int{kit.CeilDiv(a.D, bn), kit.CeilDiv(a.Lq, bm), a.B * a.H}
		}
		out = append(out, profiler.Dispatch{
			Name: "mm: " + what,
			Program: profiler.Program{Source: "attn_bwd_mm", Entry: "attn_bwd_mm", Macros: []profiler.Macro{
				{Name: "BM", Value: strconv.Itoa(bm)},
				{Name: "BN", Value: strconv.Itoa(bn)},
				{Name: "D", Value: strconv.Itoa(a.D)},
				{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
				{Name: "CAUSAL", Value: kit.B2I(a.Causal)},
				{Name: "MODE", Value: strconv.Itoa(mode)},
			}},
			Grid:    grid,
			Group:   [3]int{256, 1, 1},
			Args:    []string{"Q", "K", "V", "dO", "L", "delta", "P", "dS", "dQ", "dK", "dV"},
			Scalars: attnbwd.AttnBwdScalars(a),
			TGM:     AttnBwdMMTGM(bm, bn, s.DType, attnbwd.AttnBwdTC(dev, s.DType)),
		})
	}
	return out
}

// Validate applies the shape, index and TGM rules.
func (f AttnBwdUnfused) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := attnbwd.ValidateAttnShape(s, []string{"BM", "BN"}); err != nil {
		return err
	}
	a := attention.AttnShapeOf(s)
	if n := int64(a.B) * int64(a.H) * int64(a.Lq) * int64(a.Lk); n > kit.MaxIndexElems {
		return fmt.Errorf("P/dS would hold %d elements, more than the kernels' 32-bit indices address: reduce B, H, Lq or Lk (the fused families have no such matrix)", n)
	}
	if attnbwd.AttnBwdTC(dev, s.DType) {
		bm, bn := s.Knobs["BM"], s.Knobs["BN"]
		if bm < 32 || bn < 64 {
			return fmt.Errorf("BM=%d, BN=%d: the CUDA tensor-core matrix kernel splits the tile over a 2×4 warp grid of 16×16 blocks; use BM ≥ 32 and BN ≥ 64", bm, bn)
		}
	}
	ds := f.dispatches(s, dev)
	return kit.CheckGroup(&ds[1], dev, "the matrix kernels need 256 threads", "lower BM or BN")
}

// Plan builds buffers, the Setup, the dispatches, FLOPs and bytes.
func (f AttnBwdUnfused) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := attention.AttnShapeOf(s)
	setup, err := attnbwd.AttnBwdSetup(s, dev, false)
	if err != nil {
		return nil, err
	}
	ln := int64(a.B) * int64(a.H) * int64(a.Lq)
	pn := ln * int64(a.Lk)
	bufs := attnbwd.AttnBwdInputs(a, s.DType)
	bufs = append(bufs,
		profiler.BufferSpec{Name: "delta", Role: profiler.Scratch, Type: profiler.F32, Elems: ln, Init: profiler.InitPoison},
		profiler.BufferSpec{Name: "P", Role: profiler.Scratch, Type: profiler.F32, Elems: pn, Init: profiler.InitPoison},
		profiler.BufferSpec{Name: "dS", Role: profiler.Scratch, Type: profiler.F32, Elems: pn, Init: profiler.InitPoison},
	)
	bufs = append(bufs, attnbwd.AttnBwdOutputs(a, s.DType)...)
	return &profiler.Plan{
		Buffers:    bufs,
		Setup:      setup,
		Dispatches: f.dispatches(s, dev),
		FLOPs:      attnbwd.AttnBwdFLOPs(a),
		Bytes:      attnbwd.AttnBwdIOBytes(a, s.DType) + 3*4*float64(ln) + 6*4*float64(pn),
		Notes: []string{
			"FLOPs = 2.5 × forward over unmasked pairs (the unfused kernels compute the full Lq×Lk square)",
			fmt.Sprintf("P and dS are materialised: 2 × %s of f32 scratch", units.Bytes(4*pn)),
			"O and L come from an untimed Setup forward (attn_fwd)",
		},
	}, nil
}

// Reference computes dQ on sampled query rows and dK/dV on sampled key rows.
func (AttnBwdUnfused) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	return attnbwd.AttnBwdReference(s, in, maxRows, seed)
}

// Tolerance is the pass criterion for dtype d.
func (AttnBwdUnfused) Tolerance(d profiler.DType) profiler.Tolerance {
	return attnbwd.AttnBwdTolerances[d]
}

func init() { profiler.Register(AttnBwdUnfused{}) }

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (AttnBwdUnfused) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "attn_bwd_unfused", DType: profiler.F32, Knobs: map[string]int{"BM": 16, "BN": 32},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true}}}
}
