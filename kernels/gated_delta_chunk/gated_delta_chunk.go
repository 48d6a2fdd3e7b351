package gateddeltachunk

// gated_delta_chunk: the inter-chunk state recurrence of the chunkwise gated
// delta rule (Yang, Kautz, Hatamizadeh, arXiv 2412.06464 §4). For each
// (batch b, head h) the state S [V, K] (f32) walks the chunks of BT steps:
//
//   h_out[b, c, h] = bf16(S)                          snapshot before chunk c
//   Vn[t, :]       = u[t, :] − S·w[t, :]              for t in the chunk
//   v_new[t]       = bf16(Vn[t])                      stored before the gate
//   γ              = g[last]                          (g is the log gate)
//   Vn[t]         *= exp(γ − g[t]);  S *= exp(γ)      gate in f32
//   S             += Σ_t bf16(Vn[t]) ⊗ k[t]           the only bf16 round trip
//                                                     on Vn sits after the gate
//   final[b, h]    = S                                after the last chunk
//
// Each row v of S evolves on its own, so a group owns BV rows of S (a V
// tile) of one (b, h) and keeps them in threadgroup memory for all chunks.
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "gated_delta", entry "gated_delta_chunk". Storage bf16 only.
//   dims: B (1..64, default 1), T (1..1<<17, default 4096), H (1..256,
//     default 16), Hg (1..256, default 16; H % Hg == 0, head h reads k of
//     head h/(H/Hg)), K ∈ {32, 64, 128, 256} (default 128), V (1..1024,
//     default 128), BT ∈ {16, 32, 64} (default 64): the chunk length. BT is
//     a dim, not a knob, because it changes the math (where the bf16 round
//     trip and the gates fall, and h_out holds T/BT snapshots), and the
//     reference is cached per shape.
//   knobs: BV ∈ {8, 16, 32, 64} (V-tile width, default 32; V % BV == 0),
//     WG ∈ {32, 64, 128, 256, 512} threads per group (default 128).
//   buffers: k [B,T,Hg,K] bf16 in, w [B,T,H,K] bf16 in, u [B,T,H,V] bf16 in,
//     g [B,T,H] f32 in (uniform −0.5..0), h0 [B,H,V,K] f32 in (normal),
//     h_out [B,NT,H,V,K] bf16 out, v_new [B,T,H,V] bf16 out, final
//     [B,H,V,K] f32 out (outputs poison); NT = T/BT. k and w are drawn with
//     scale 1/sqrt(4·K·sqrt(BT)) so the recurrence contracts.
//   dispatch "gated_delta_chunk": grid (V/BV, H, B), group (WG,1,1); Args k,
//     w, u, g, h0, h_out, v_new, final; Scalars (i32 B, i32 T, i32 H, i32
//     Hg, i32 V); Macros BT, BV, K, WG, DTYPE (always 2).
//   TGM items: S_smem BV·(K+1)·4 (the f32 state tile, one float of row
//     padding), wk_smem BT·(K+2)·2 (the chunk's w rows, then its k rows,
//     bf16, one word of row padding), vn_smem BT·BV·4 (gated, bf16-rounded
//     Vn of the chunk).
//   FLOPs 4·B·H·T·V·K (S·w and the outer update); bytes: every input read
//   once and every output written once.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

func init() { profiler.Register(GatedDelta{}) }

var _ profiler.Family = GatedDelta{}

// GatedDelta is the gated delta rule chunk-state family.
type GatedDelta struct{}

// Name is the family name.
func (GatedDelta) Name() string { return "gated_delta_chunk" }

// Doc is the one-line description.
func (GatedDelta) Doc() string {
	return "gated delta rule inter-chunk state recurrence (bf16 storage, f32 state tile in TGM, bf16 round trip after the gate)"
}

// Schema lists knobs, dims and dtypes.
func (GatedDelta) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "BT", Doc: "chunk length (changes where the gates and bf16 rounding fall: checked against its own reference; 64 overflows Apple's 32 KB at K=128)", Default: 32, Values: []int{16, 32, 64}, Shape: true},
			{Name: "BV", Doc: "rows of the state (V tile) per group", Default: 32, Values: []int{8, 16, 32, 64}},
			{Name: "WG", Doc: "threads per group", Default: 128, Values: []int{32, 64, 128, 256, 512}},
		},
		Dims: []profiler.Param{
			{Name: "B", Doc: "batch", Default: 1, Min: 1, Max: 64},
			{Name: "T", Doc: "sequence length (a multiple of BT)", Default: 4096, Min: 1, Max: 1 << 17},
			{Name: "H", Doc: "value heads", Default: 16, Min: 1, Max: 256},
			{Name: "Hg", Doc: "key heads (H must be a multiple; follows H when only H is set)", Default: 16, Min: 1, Max: 256, Follows: "H"},
			{Name: "K", Doc: "key dim", Default: 128, Values: []int{32, 64, 128, 256}},
			{Name: "V", Doc: "value dim (a multiple of BV)", Default: 128, Min: 1, Max: 1024},
		},
		DTypes: []profiler.DType{profiler.BF16},
	}
}

// GDShape is the problem of a spec.
type GDShape struct{ B, T, H, Hg, K, V, BT int }

// GDShapeOf reads the dims and the chunk length BT.
func GDShapeOf(s profiler.Spec) GDShape {
	d := s.Dims
	return GDShape{B: d["B"], T: d["T"], H: d["H"], Hg: d["Hg"], K: d["K"], V: d["V"], BT: s.Knobs["BT"]}
}

// NT is the number of chunks.
func (a GDShape) NT() int { return a.T / a.BT }

// KWScale is the standard deviation of k and w.
func (a GDShape) KWScale() float64 { return 1 / math.Sqrt(4*float64(a.K)*math.Sqrt(float64(a.BT))) }

// GatedDeltaTGM is the state tile, the staged w/k rows and the gated Vn.
func GatedDeltaTGM(bt, bv, k int) []profiler.TGMItem {
	return []profiler.TGMItem{
		{Name: "S_smem", Bytes: bv * (k + 1) * 4, Note: "BV×(K+1) f32 state tile, 1 float of row padding"},
		{Name: "wk_smem", Bytes: bt * (k + 2) * 2, Note: "BT×(K+2) bf16: the chunk's w rows, then its k rows"},
		{Name: "vn_smem", Bytes: bt * bv * 4, Note: "BT×BV f32: gated Vn after the bf16 round trip"},
	}
}

func (GatedDelta) dispatch(s profiler.Spec) profiler.Dispatch {
	a := GDShapeOf(s)
	bv, wg := s.Knobs["BV"], s.Knobs["WG"]
	return profiler.Dispatch{
		Name: "gated_delta_chunk",
		Program: profiler.Program{Source: "gated_delta", Entry: "gated_delta_chunk", Macros: []profiler.Macro{
			{Name: "BT", Value: strconv.Itoa(a.BT)},
			{Name: "BV", Value: strconv.Itoa(bv)},
			{Name: "K", Value: strconv.Itoa(a.K)},
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}},
		Grid:  [3]int{kit.CeilDiv(a.V, bv), a.H, a.B},
		Group: [3]int{wg, 1, 1},
		Args:  []string{"k", "w", "u", "g", "h0", "h_out", "v_new", "final"},
		Scalars: []profiler.Scalar{
			profiler.I32Param("B", a.B), profiler.I32Param("T", a.T), profiler.I32Param("H", a.H),
			profiler.I32Param("Hg", a.Hg), profiler.I32Param("V", a.V),
		},
		TGM: GatedDeltaTGM(a.BT, bv, a.K),
	}
}

// Validate applies the chunk, tile, head, thread and TGM rules.
func (f GatedDelta) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"BT", "BV", "WG"}, []string{"B", "T", "H", "Hg", "K", "V"}); err != nil {
		return err
	}
	a := GDShapeOf(s)
	bv := s.Knobs["BV"]
	if a.T%a.BT != 0 {
		return fmt.Errorf("T=%d must be a multiple of BT=%d: each chunk's gate is read at its last step (c+1)·BT−1; use T=%d or T=%d", a.T, a.BT, a.T/a.BT*a.BT, (a.T/a.BT+1)*a.BT)
	}
	if a.V%bv != 0 {
		return fmt.Errorf("V=%d must be a multiple of BV=%d: a group owns BV whole rows of the state; lower BV or change V", a.V, bv)
	}
	if a.H%a.Hg != 0 {
		return fmt.Errorf("H=%d must be a multiple of Hg=%d (GQA: H/Hg value heads share a key head): set Hg to a divisor of H", a.H, a.Hg)
	}
	if err := kit.CheckIndexRange(map[string]int64{
		"h_out": int64(a.B) * int64(a.NT()) * int64(a.H) * int64(a.V) * int64(a.K),
		"w":     int64(a.B) * int64(a.T) * int64(a.H) * int64(a.K),
		"u":     int64(a.B) * int64(a.T) * int64(a.H) * int64(a.V),
	}); err != nil {
		return err
	}
	d := f.dispatch(s)
	if err := kit.CheckGrid(&d, dev, "reduce H or B"); err != nil {
		return err
	}
	return kit.CheckGroup(&d, dev, "lower WG", "lower BV (S_smem is BV·(K+1)·4 bytes) or BT")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f GatedDelta) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	a := GDShapeOf(s)
	b, t, h, hg, k, v, nt := int64(a.B), int64(a.T), int64(a.H), int64(a.Hg), int64(a.K), int64(a.V), int64(a.NT())
	bf := profiler.BF16
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "k", Role: profiler.In, Type: bf, Elems: b * t * hg * k, Init: profiler.InitNormal, Scale: a.KWScale()},
			{Name: "w", Role: profiler.In, Type: bf, Elems: b * t * h * k, Init: profiler.InitNormal, Scale: a.KWScale()},
			{Name: "u", Role: profiler.In, Type: bf, Elems: b * t * h * v, Init: profiler.InitNormal, Scale: 1},
			{Name: "g", Role: profiler.In, Type: profiler.F32, Elems: b * t * h, Init: profiler.InitUniform, Lo: -0.5, Hi: 0},
			{Name: "h0", Role: profiler.In, Type: profiler.F32, Elems: b * h * v * k, Init: profiler.InitNormal, Scale: 1},
			{Name: "h_out", Role: profiler.Out, Type: bf, Elems: b * nt * h * v * k, Init: profiler.InitPoison},
			{Name: "v_new", Role: profiler.Out, Type: bf, Elems: b * t * h * v, Init: profiler.InitPoison},
			{Name: "final", Role: profiler.Out, Type: profiler.F32, Elems: b * h * v * k, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
		FLOPs:      4 * float64(b*h*t*v*k),
	}
	for _, buf := range p.Buffers {
		p.Bytes += float64(buf.Bytes())
	}
	if s.Knobs["BV"] < a.V {
		p.Notes = append(p.Notes, fmt.Sprintf("each of the V/BV=%d tiles of a head re-reads the chunk's k and w rows (from the cache)", a.V/s.Knobs["BV"]))
	}
	return p, nil
}

// Reference runs the recurrence of sampled state rows (b, h, v) step by
// step in float64, rounding to bf16 where the kernel does.
func (f GatedDelta) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	a := GDShapeOf(s)
	if err := kit.NeedInputs(in, map[string]int{
		"k": a.B * a.T * a.Hg * a.K, "w": a.B * a.T * a.H * a.K, "u": a.B * a.T * a.H * a.V,
		"g": a.B * a.T * a.H, "h0": a.B * a.H * a.V * a.K,
	}); err != nil {
		return nil, err
	}
	total := a.B * a.H * a.V
	rows := profiler.SampleRows(total, maxRows, seed)
	nt := a.NT()
	hoIdx := make([]int, len(rows)*nt*a.K)
	hoWant := make([]float64, len(rows)*nt*a.K)
	vnIdx := make([]int, len(rows)*a.T)
	vnWant := make([]float64, len(rows)*a.T)
	fIdx := make([]int, len(rows)*a.K)
	fWant := make([]float64, len(rows)*a.K)
	// f32 accumulation over the BT terms a chunk adds to S (older chunks
	// decayed into M) and over the K terms of w·S. The bf16 flips of the
	// gated Vn (one ulp of a few terms, random in sign) stay inside atol
	// and rtol: the state decays by exp(γ) per chunk, so no error grows
	// with T.
	gHo := kit.NewGrowth(a.BT, len(hoWant), 0)
	gVn := kit.NewGrowth(a.K, len(vnWant), 0)
	gF := kit.NewGrowth(a.BT, len(fWant), 0)
	kit.ParallelRows(len(rows), func(n int) {
		row := rows[n] // (b·H + h)·V + v
		v := row % a.V
		h := row / a.V % a.H
		b := row / (a.V * a.H)
		ho, vn, fin, mag := GatedDeltaRowMag(a, in, b, h, v)
		for c := range nt {
			base := (((b*nt+c)*a.H+h)*a.V + v) * a.K
			for kk := range a.K {
				hoIdx[(n*nt+c)*a.K+kk] = base + kk
				hoWant[(n*nt+c)*a.K+kk] = ho[c*a.K+kk]
				gHo.Mag[(n*nt+c)*a.K+kk] = mag.HOut[c*a.K+kk]
			}
		}
		for t := range a.T {
			vnIdx[n*a.T+t] = ((b*a.T+t)*a.H+h)*a.V + v
			vnWant[n*a.T+t] = vn[t]
			gVn.Mag[n*a.T+t] = mag.VNew[t]
		}
		for kk := range a.K {
			fIdx[n*a.K+kk] = row*a.K + kk
			fWant[n*a.K+kk] = fin[kk]
			gF.Mag[n*a.K+kk] = mag.Final[kk]
		}
	})
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "h_out", Index: hoIdx, Want: hoWant, Growth: gHo},
			{Buffer: "v_new", Index: vnIdx, Want: vnWant, Growth: gVn},
			{Buffer: "final", Index: fIdx, Want: fWant, Growth: gF},
		},
		RowsChecked: len(rows),
		RowsTotal:   total,
		Rows:        profiler.DescribeRows(rows, total, seed) + " of the state (row = (b·H + h)·V + v)",
	}, nil
}

func bf16Round64(x float64) float64 { return float64(profiler.BF16.Round(float32(x))) }

// GatedDeltaRow is the recurrence of state row v of (b, h) in float64:
// the h_out snapshots [NT·K], v_new [T] and the final row [K].
func GatedDeltaRow(a GDShape, in profiler.Inputs, b, h, v int) (hOut, vNew, final []float64) {
	hOut, vNew, final, _ = GatedDeltaRowMag(a, in, b, h, v)
	return hOut, vNew, final
}

// GatedDeltaMag is the magnitude of each output of GatedDeltaRowMag
// (README "Tolerances"): the state's M = exp(γ)·M + Σ_t |bf16(Vn_t)·k_t|,
// the absolute terms S sums, decayed chunk to chunk; Vn_t = u_t − w_t·S
// has |u_t| + Σ|w_t|·(|S| + M).
type GatedDeltaMag struct {
	HOut, VNew, Final []float64
}

// GatedDeltaRowMag is GatedDeltaRow with the magnitudes.
func GatedDeltaRowMag(a GDShape, in profiler.Inputs, b, h, v int) (hOut, vNew, final []float64, mag GatedDeltaMag) {
	k, w, u, g, h0 := in["k"], in["w"], in["u"], in["g"], in["h0"]
	hk := h / (a.H / a.Hg)
	nt := a.NT()
	S := make([]float64, a.K)
	for kk := range a.K {
		S[kk] = float64(h0[((b*a.H+h)*a.V+v)*a.K+kk])
	}
	hOut = make([]float64, nt*a.K)
	vNew = make([]float64, a.T)
	vn := make([]float64, a.BT)
	M := make([]float64, a.K)
	mag = GatedDeltaMag{HOut: make([]float64, nt*a.K), VNew: make([]float64, a.T)}
	for c := range nt {
		for kk := range a.K {
			hOut[c*a.K+kk] = bf16Round64(S[kk])
			mag.HOut[c*a.K+kk] = M[kk]
		}
		t0 := c * a.BT
		for i := range a.BT {
			t := t0 + i
			wo := ((b*a.T+t)*a.H + h) * a.K
			var dot, abs float64
			for kk := range a.K {
				dot += float64(w[wo+kk]) * S[kk]
				abs += math.Abs(float64(w[wo+kk])) * (math.Abs(S[kk]) + M[kk])
			}
			uu := float64(u[((b*a.T+t)*a.H+h)*a.V+v])
			vn[i] = uu - dot
			vNew[t] = bf16Round64(vn[i])
			mag.VNew[t] = math.Abs(uu) + abs
		}
		gl := float64(g[(b*a.T+t0+a.BT-1)*a.H+h])
		decay := math.Exp(gl)
		for kk := range a.K {
			S[kk] *= decay
			M[kk] *= decay
		}
		for i := range a.BT {
			t := t0 + i
			gt := bf16Round64(vn[i] * math.Exp(gl-float64(g[(b*a.T+t)*a.H+h])))
			ko := ((b*a.T+t)*a.Hg + hk) * a.K
			for kk := range a.K {
				S[kk] += gt * float64(k[ko+kk])
				M[kk] += math.Abs(gt * float64(k[ko+kk]))
			}
		}
	}
	mag.Final = M
	return hOut, vNew, S, mag
}

// GatedDeltaTolerance: bf16 outputs, and a recurrence in which an f32
// accumulation may round Vn to the neighbouring bf16 value.
var GatedDeltaTolerance = profiler.Tolerance{ATol: 1e-2, RTol: 2e-2}

// Tolerance is the pass criterion (bf16 only).
func (GatedDelta) Tolerance(profiler.DType) profiler.Tolerance { return GatedDeltaTolerance }

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (GatedDelta) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32}, Dims: map[string]int{"B": 1, "T": 32, "H": 2, "Hg": 1, "K": 32, "V": 16}}}
}
