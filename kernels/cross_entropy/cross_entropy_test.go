package crossentropy

import (
	"math"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestCrossEntropyRules(t *testing.T) {
	kittest.CheckRules(t, "cross_entropy", []kittest.RuleCase{
		{Name: "defaults", DT: profiler.BF16, Set: nil, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "152k vocab", DT: profiler.BF16, Set: map[string]int{"rows": 512, "vocab": 152064}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "pad id outside the vocab", DT: profiler.F32, Set: map[string]int{"vocab": 100, "pad_id": 100, "VEC": 4}, Flags: nil, Dev: kittest.CPU, Want: "pad_id=100 is not a class of vocab=100"},
		{Name: "no padding", DT: profiler.F32, Set: map[string]int{"vocab": 100, "pad_id": -1, "VEC": 4}, Flags: nil, Dev: kittest.CPU, Want: ""},
		{Name: "vocab not a multiple of VEC", DT: profiler.BF16, Set: map[string]int{"vocab": 32001}, Flags: nil, Dev: kittest.H100, Want: "vocab=32001 must be a multiple of VEC=8"},
		{Name: "f16 VEC=8 fits 16 bytes", DT: profiler.F16, Set: map[string]int{"VEC": 8}, Flags: nil, Dev: kittest.M2, Want: ""},
		{Name: "f32 VEC=8 does not", DT: profiler.F32, Set: map[string]int{"VEC": 8}, Flags: nil, Dev: kittest.M2, Want: "more than one 16-byte vector access"},
		{Name: "logits too large", DT: profiler.F32, Set: map[string]int{"rows": 1 << 20, "vocab": 1 << 12, "VEC": 4}, Flags: nil, Dev: kittest.H100, Want: "32-bit indices"},
		{Name: "152k over a cluster of 4", DT: profiler.BF16, Set: map[string]int{"rows": 512, "vocab": 152064, "CL": 4}, Flags: nil, Dev: kittest.H100, Want: ""},
		{Name: "152k in one group's shared memory", DT: profiler.BF16, Set: map[string]int{"rows": 512, "vocab": 152064, "CL": 1}, Flags: nil, Dev: kittest.H100, Want: "raise CL"},
		{Name: "cluster on metal", DT: profiler.BF16, Set: map[string]int{"CL": 2}, Flags: nil, Dev: kittest.M2, Want: "set CL=0 on metal"},
		{Name: "cluster before sm_90", DT: profiler.BF16, Set: map[string]int{"CL": 2}, Flags: nil, Dev: kittest.A100, Want: "needs sm_90"},
		{Name: "one staged group before sm_90", DT: profiler.BF16, Set: map[string]int{"CL": 1, "vocab": 16000}, Flags: nil, Dev: kittest.A100, Want: ""},
		{Name: "staged 2-byte vectors", DT: profiler.BF16, Set: map[string]int{"CL": 4, "VEC": 1}, Flags: nil, Dev: kittest.H100, Want: "less than the 4 bytes cp.async moves"},
	})
}

func TestCrossEntropyReferenceHandChecked(t *testing.T) {
	// Row 0: logits (0, ln 3), target 1: p = (1/4, 3/4), loss = ln(4/3).
	// Row 1: target is the pad id 0: loss 0, dX 0.
	s := profiler.Spec{Kernel: "cross_entropy", DType: profiler.F32, Dims: map[string]int{"rows": 2, "vocab": 2, "pad_id": 0}}
	in := profiler.Inputs{"logits": {0, float32(math.Log(3)), 5, 6}, "targets": {1, 0}}
	ref, err := CrossEntropy{}.Reference(s, in, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	loss, dx := ref.Checks[0].Want, ref.Checks[1].Want
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if !near(loss[0], math.Log(4.0/3)) || loss[1] != 0 {
		t.Errorf("loss %v, want [ln(4/3) 0]", loss)
	}
	if !near(dx[0], 0.25) || !near(dx[1], -0.25) || dx[2] != 0 || dx[3] != 0 {
		t.Errorf("dX %v, want [0.25 -0.25 0 0]", dx)
	}
	// The tolerance must catch a gradient that forgot the one-hot, even
	// where probabilities are tiny.
	tol := CrossEntropy{}.Tolerance(profiler.BF16)
	if want, got := -0.25, 0.75; math.Abs(got-want) <= tol.ATol+tol.RTol*math.Abs(want) {
		t.Errorf("tolerance %+v accepts 0.75 for -0.25", tol)
	}
	if want, got := 3e-6, 0.0; math.Abs(got-want) <= tol.ATol+tol.RTol*math.Abs(want) {
		t.Errorf("tolerance %+v accepts 0 for a probability of 3e-6", tol)
	}
}
