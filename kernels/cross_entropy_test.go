package kernels

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestCrossEntropyRules(t *testing.T) {
	checkRules(t, "cross_entropy", []ruleCase{
		{"defaults", profiler.BF16, nil, nil, cudaDev, ""},
		{"152k vocab", profiler.BF16, map[string]int{"rows": 512, "vocab": 152064}, nil, cudaDev, ""},
		{"pad id outside the vocab", profiler.F32, map[string]int{"vocab": 100, "pad_id": 100, "VEC": 4}, nil, cpuDev, "pad_id=100 is not a class of vocab=100"},
		{"no padding", profiler.F32, map[string]int{"vocab": 100, "pad_id": -1, "VEC": 4}, nil, cpuDev, ""},
		{"vocab not a multiple of VEC", profiler.BF16, map[string]int{"vocab": 32001}, nil, cudaDev, "vocab=32001 must be a multiple of VEC=8"},
		{"f16 VEC=8 fits 16 bytes", profiler.F16, map[string]int{"VEC": 8}, nil, metalDev, ""},
		{"f32 VEC=8 does not", profiler.F32, map[string]int{"VEC": 8}, nil, metalDev, "more than one 16-byte vector access"},
		{"logits too large", profiler.F32, map[string]int{"rows": 1 << 20, "vocab": 1 << 12, "VEC": 4}, nil, cudaDev, "32-bit indices"},
		{"152k over a cluster of 4", profiler.BF16, map[string]int{"rows": 512, "vocab": 152064, "CL": 4}, nil, cudaDev, ""},
		{"152k in one group's shared memory", profiler.BF16, map[string]int{"rows": 512, "vocab": 152064, "CL": 1}, nil, cudaDev, "raise CL"},
		{"cluster on metal", profiler.BF16, map[string]int{"CL": 2}, nil, metalDev, "set CL=0 on metal"},
		{"cluster before sm_90", profiler.BF16, map[string]int{"CL": 2}, nil, profiler.DeviceInfo{Backend: "cuda", Name: "A100", Arch: "sm_80", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 163 << 10, MaxThreadsPerGroup: 1024}, "needs sm_90"},
		{"one staged group before sm_90", profiler.BF16, map[string]int{"CL": 1, "vocab": 16000}, nil, profiler.DeviceInfo{Backend: "cuda", Name: "A100", Arch: "sm_80", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 163 << 10, MaxThreadsPerGroup: 1024}, ""},
		{"staged 2-byte vectors", profiler.BF16, map[string]int{"CL": 4, "VEC": 1}, nil, cudaDev, "less than the 4 bytes cp.async moves"},
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
