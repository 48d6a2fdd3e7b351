package rmsnormbwd

import (
	"math"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestRMSNormBwdRules(t *testing.T) {
	kittest.CheckRules(t, "rmsnorm_bwd", []kittest.RuleCase{
		{Name: "defaults bf16", DT: profiler.BF16, Set: nil, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "f32 VEC=8 is 32 bytes", DT: profiler.F32, Set: map[string]int{"VEC": 8}, Flags: nil, Dev: kittest.H100, Want: "VEC=8 f32 elements are 32 bytes"},
		{Name: "D not a multiple of VEC", DT: profiler.BF16, Set: map[string]int{"D": 100, "VEC": 8}, Flags: nil, Dev: kittest.CPU, Want: "D=100 must be a multiple of VEC=8"},
		{Name: "too many columns per thread", DT: profiler.BF16, Set: map[string]int{"D": 4096, "WG": 64, "VEC": 8}, Flags: nil, Dev: kittest.H100, Want: "64 columns per thread"},
		{Name: "WG over the device", DT: profiler.F32, Set: map[string]int{"WG": 1024, "VEC": 4}, Flags: nil, Dev: kittest.Small, Want: "exceed the small limit of 512"},
		{Name: "odd D with VEC=1", DT: profiler.F32, Set: map[string]int{"D": 999, "VEC": 1, "WG": 64}, Flags: nil, Dev: kittest.CPU, Want: ""},
		{Name: "RPG not a multiple of RB", DT: profiler.BF16, Set: map[string]int{"RPG": 2, "RB": 4}, Flags: nil, Dev: kittest.H100, Want: "RPG=2 must be a multiple of RB=4"},
		{Name: "batch too large for registers", DT: profiler.BF16, Set: map[string]int{"WG": 256, "VEC": 8, "RB": 4}, Flags: nil, Dev: kittest.H100, Want: "RB=4 rows of 16 columns per thread need 160 registers"},
		{Name: "batch of 8 thin rows", DT: profiler.F32, Set: map[string]int{"WG": 1024, "VEC": 4, "RB": 8}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "row ring", DT: profiler.BF16, Set: map[string]int{"WG": 512, "RPG": 32, "RB": 2, "ST": 4}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "row ring on metal", DT: profiler.BF16, Set: map[string]int{"ST": 4}, Flags: nil, Dev: kittest.M2, Want: "set ST=0 on metal"},
		{Name: "ring shorter than two batches", DT: profiler.BF16, Set: map[string]int{"RB": 2, "ST": 2}, Flags: nil, Dev: kittest.H100, Want: "at least 2·RB=4"},
		{Name: "ring slots not whole batches", DT: profiler.BF16, Set: map[string]int{"RB": 2, "ST": 6, "RPG": 16}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "ring of 2-byte vectors", DT: profiler.BF16, Set: map[string]int{"VEC": 1, "WG": 1024, "RB": 1, "ST": 2, "D": 1024}, Flags: nil, Dev: kittest.H100, Want: "less than the 4 bytes cp.async moves"},
		{Name: "ring over shared memory", DT: profiler.F32, Set: map[string]int{"VEC": 4, "WG": 1024, "RB": 1, "ST": 8, "D": 8192}, Flags: nil, Dev: kittest.H100, Want: "lower ST"},
	})
}

func TestRMSNormBwdPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256, "VEC": 8, "RPG": 16, "RB": 2}, Dims: map[string]int{"rows": 100, "D": 4096}}
	p := kittest.PlanOf(t, s, kittest.H100)
	if len(p.Dispatches) != 2 || p.Dispatches[0].Zero != "dW" {
		t.Fatalf("dispatches %+v, want the zero fill of dW first", p.Dispatches)
	}
	d := p.Dispatches[1]
	if d.Grid != [3]int{7, 1, 1} || d.TGMBytes() != 2*2*8*4 {
		t.Errorf("grid %v, TGM %d", d.Grid, d.TGMBytes())
	}
	if want := 3.0*100*4096*2 + 4096*2 + 4096*4; p.Bytes != want {
		t.Errorf("bytes %g, want %g", p.Bytes, want)
	}
}

// Hand-checked: x = (3, 4), w = (1, 2), dy = (1, 1), eps ignored:
// r = 1/sqrt(12.5); Σ dy·w·x = 11; dx_i = r·w_i − x_i·r³/2·11.
func TestRMSNormBwdReferenceHandChecked(t *testing.T) {
	s := profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.F32, Dims: map[string]int{"rows": 2, "D": 2}}
	in := profiler.Inputs{"X": {3, 4, 3, 4}, "W": {1, 2}, "dY": {1, 1, 1, 1}}
	ref, err := RMSNormBwd{}.Reference(s, in, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := 1 / math.Sqrt(12.5+RMSNormEps)
	k := r * r * r / 2 * 11
	wantDX := []float64{r - 3*k, 2*r - 4*k}
	dx, dw := ref.Checks[0], ref.Checks[1]
	for i, w := range wantDX {
		if math.Abs(dx.Want[i]-w) > 1e-12 || math.Abs(dx.Want[i+2]-w) > 1e-12 {
			t.Errorf("dX[%d] = %v, want %v", i, dx.Want[i], w)
		}
	}
	// dW sums both rows: 2·dy·x·r.
	for i, x := range []float64{3, 4} {
		if math.Abs(dw.Want[i]-2*x*r) > 1e-12 {
			t.Errorf("dW[%d] = %v, want %v", i, dw.Want[i], 2*x*r)
		}
	}
}

// With the row ring there is no zero fill: the kernel takes the sync
// scratch after dW and the ring is the dispatch's dynamic TGM.
func TestRMSNormBwdRingPlan(t *testing.T) {
	s := profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256, "VEC": 8, "RPG": 16, "RB": 1, "ST": 4}, Dims: map[string]int{"rows": 100, "D": 4096}}
	p := kittest.PlanOf(t, s, kittest.H100)
	if len(p.Dispatches) != 1 {
		t.Fatalf("dispatches %+v, want the kernel alone", p.Dispatches)
	}
	d := p.Dispatches[0]
	if got := d.Args[len(d.Args)-1]; got != "sync" {
		t.Errorf("last arg %s, want sync", got)
	}
	if d.DynamicTGM != 4*2*4096*2 || d.TGMBytes() != 2*2*8*4+4+4*2*4096*2 {
		t.Errorf("dynamic TGM %d, total %d", d.DynamicTGM, d.TGMBytes())
	}
	if b, ok := p.Buffer("sync"); !ok || b.Init != profiler.InitZero || b.Elems != 2 {
		t.Errorf("sync buffer %+v", b)
	}
	if want := 3.0*100*4096*2 + 4096*2 + 4096*4; p.Bytes != want {
		t.Errorf("bytes %g, want %g (unchanged)", p.Bytes, want)
	}
}
