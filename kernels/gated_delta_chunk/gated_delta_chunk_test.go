package gateddeltachunk

import (
	"math"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestGatedDeltaRules(t *testing.T) {
	kittest.CheckRules(t, "gated_delta_chunk", []kittest.RuleCase{
		{Name: "defaults fit CUDA", DT: profiler.BF16, Set: nil, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "BV=64 needs the CUDA opt-in", DT: profiler.BF16, Set: map[string]int{"BV": 64}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "BV=32, BT=64, K=128 overflows Metal's 32 KB", DT: profiler.BF16, Set: map[string]int{"BV": 32, "BT": 64}, Flags: nil, Dev: kittest.M2, Want: "TGM 41344 B exceeds"},
		{Name: "BV=16 fits Metal", DT: profiler.BF16, Set: map[string]int{"BV": 16}, Flags: nil, Dev: kittest.M2, Want: ""},
		{Name: "T not a multiple of BT", DT: profiler.BF16, Set: map[string]int{"T": 100, "BT": 64}, Flags: nil, Dev: kittest.H100, Want: "T=100 must be a multiple of BT=64"},
		{Name: "V not a multiple of BV", DT: profiler.BF16, Set: map[string]int{"V": 100, "BV": 32}, Flags: nil, Dev: kittest.H100, Want: "V=100 must be a multiple of BV=32"},
		{Name: "heads", DT: profiler.BF16, Set: map[string]int{"H": 6, "Hg": 4}, Flags: nil, Dev: kittest.H100, Want: "H=6 must be a multiple of Hg=4"},
		{Name: "bf16 only", DT: profiler.F32, Set: nil, Flags: nil, Dev: kittest.H100, Want: "does not support dtype"},
		{Name: "WG over the device", DT: profiler.BF16, Set: map[string]int{"WG": 512, "BV": 16}, Flags: nil, Dev: profiler.DeviceInfo{Backend: "metal", Name: "tiny", TGMPerGroup: 32 << 10, MaxThreadsPerGroup: 256}, Want: "exceed the tiny limit of 256"},
	})
}

func TestGatedDeltaPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 64, "BV": 32, "WG": 128},
		Dims: map[string]int{"B": 2, "T": 128, "H": 4, "Hg": 2, "K": 128, "V": 64}}
	p := kittest.PlanOf(t, s, kittest.H100)
	d := p.Dispatches[0]
	if d.Grid != [3]int{2, 4, 2} {
		t.Errorf("grid %v, want (V/BV, H, B) = (2, 4, 2)", d.Grid)
	}
	if want := 32*129*4 + 64*130*2 + 64*32*4; d.TGMBytes() != want {
		t.Errorf("TGM %d, want %d", d.TGMBytes(), want)
	}
	if want := 4.0 * 2 * 4 * 128 * 64 * 128; p.FLOPs != want {
		t.Errorf("FLOPs %g, want %g", p.FLOPs, want)
	}
	ho, _ := p.Buffer("h_out")
	if ho.Elems != 2*2*4*64*128 {
		t.Errorf("h_out holds %d elements, want B·NT·H·V·K", ho.Elems)
	}
}

// With w = 0 the state sees no delta correction: one chunk of BT steps,
// K = 1, V = 1. S0 = 1, u = (1, 2), g = (-0.1, -0.3), k = (1, 1):
//
//	Vn = u, gated Vn = (e^(-0.2)·1, 2), S = e^(-0.3) + bf16(e^-0.2) + 2.
func TestGatedDeltaRowHandChecked(t *testing.T) {
	a := GDShape{B: 1, T: 2, H: 1, Hg: 1, K: 1, V: 1, BT: 2}
	in := profiler.Inputs{"k": {1, 1}, "w": {0, 0}, "u": {1, 2}, "g": {-0.1, -0.3}, "h0": {1}}
	hOut, vNew, final := GatedDeltaRow(a, in, 0, 0, 0)
	if hOut[0] != 1 || vNew[0] != 1 || vNew[1] != 2 {
		t.Errorf("h_out %v v_new %v", hOut, vNew)
	}
	want := math.Exp(-0.3) + float64(profiler.BF16.Round(float32(math.Exp(-0.3+0.1)))) + 2
	if math.Abs(final[0]-want) > 1e-6 {
		t.Errorf("final %v, want %v", final[0], want)
	}
	// The round trip sits after the gate: rounding before it would give a
	// different state.
	before := math.Exp(-0.3) + float64(profiler.BF16.Round(1))*math.Exp(-0.2) + 2
	if math.Abs(final[0]-before) < 1e-4 {
		t.Errorf("final %v cannot tell the round trip after the gate (%v) from before it (%v)", final[0], want, before)
	}
}

// BT is a knob that changes the math: specs that differ in BT must not
// share inputs or the cached reference, specs that differ in BV must.
func TestGatedDeltaBTIsPartOfTheShape(t *testing.T) {
	base := profiler.Spec{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32}, Dims: map[string]int{"T": 64}}
	bt := base.Clone()
	bt.Knobs["BT"] = 64
	bv := base.Clone()
	bv.Knobs["BV"] = 16
	if base.ShapeKey() == bt.ShapeKey() {
		t.Error("BT=16 and BT=64 share a shape key")
	}
	if base.ShapeKey() != bv.ShapeKey() {
		t.Errorf("BV changes the shape key: %s vs %s", base.ShapeKey(), bv.ShapeKey())
	}
}
