package transpose

import (
	"fmt"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestTransposeRules(t *testing.T) {
	kittest.CheckRules(t, "transpose", []kittest.RuleCase{
		{Name: "defaults", DT: profiler.BF16, Set: nil, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "WG above TILE²/VEC", DT: profiler.F32, Set: map[string]int{"TILE": 16, "WG": 512, "VEC": 2}, Flags: nil, Dev: kittest.CPU, Want: "must be a multiple of TILE/VEC=8 and divide TILE·TILE/VEC=128"},
		{Name: "WG below TILE/VEC", DT: profiler.F32, Set: map[string]int{"TILE": 64, "WG": 32, "VEC": 1}, Flags: nil, Dev: kittest.CPU, Want: "WG=32 must be a multiple of TILE/VEC=64"},
		{Name: "WG = TILE/VEC", DT: profiler.F32, Set: map[string]int{"TILE": 64, "WG": 32, "VEC": 2}, Flags: nil, Dev: kittest.CPU, Want: ""},
		{Name: "f32 VEC=4 is one 16-byte access", DT: profiler.F32, Set: map[string]int{"VEC": 4}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "too many elements", DT: profiler.F16, Set: map[string]int{"rows": 1 << 20, "cols": 1 << 12}, Flags: nil, Dev: kittest.CPU, Want: "32-bit indices"},
		{Name: "CUDA grid y", DT: profiler.F16, Set: map[string]int{"TILE": 16, "WG": 128, "rows": 1 << 20, "cols": 16}, Flags: nil, Dev: kittest.H100, Want: "groups along y, more than the H100 limit of 65535"},
		{Name: "threads over the device", DT: profiler.F32, Set: map[string]int{"TILE": 64, "WG": 1024, "VEC": 1}, Flags: nil, Dev: kittest.Small, Want: "exceed the small limit of 512"},
	})
}

func TestTransposePlan(t *testing.T) {
	p := kittest.PlanOf(t, profiler.Spec{Kernel: "transpose", DType: profiler.BF16, Knobs: map[string]int{"TILE": 32, "WG": 256, "VEC": 2}, Dims: map[string]int{"rows": 100, "cols": 70}}, kittest.H100)
	d := p.Dispatches[0]
	if d.Grid != [3]int{3, 4, 1} || d.Group != [3]int{256, 1, 1} {
		t.Errorf("grid %v group %v, want (3,4,1) and (256,1,1)", d.Grid, d.Group)
	}
	if d.TGMBytes() != 32*33*4 || p.Bytes != 2*100*70*2 || p.FLOPs != 0 {
		t.Errorf("TGM %d B, bytes %g, flops %g", d.TGMBytes(), p.Bytes, p.FLOPs)
	}
	ref, err := Transpose{}.Reference(profiler.Spec{Kernel: "transpose", Dims: map[string]int{"rows": 2, "cols": 3}}, profiler.Inputs{"X": {1, 2, 3, 4, 5, 6}}, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Y = [[1 4] [2 5] [3 6]].
	if fmt.Sprint(ref.Checks[0].Index, ref.Checks[0].Want) != "[0 1 2 3 4 5] [1 4 2 5 3 6]" {
		t.Errorf("reference %v %v", ref.Checks[0].Index, ref.Checks[0].Want)
	}
}
