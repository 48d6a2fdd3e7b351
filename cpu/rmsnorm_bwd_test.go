package cpu_test

import (
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Forgets that dW sums over groups: stores instead of adding, so only
	// the last group's rows survive.
	cpu.RegisterKernel("test_rmsnorm_bwd_store_dw", func(g *cpu.Group) {
		cpu.RMSNormBwd(g)
		if g.ID[0] == 0 {
			d := g.Macro("D")
			g.Arg(4, profiler.F32).Store(0, make([]float32, d))
		}
	})
}

func TestRMSNormBwdOK(t *testing.T) {
	all := profiler.FloatDTypes
	runTrainCases(t, "rmsnorm_bwd", []trainCase{
		{"rows a multiple of RPG", all, map[string]int{"WG": 32, "VEC": 2, "RPG": 4}, map[string]int{"rows": 32, "D": 256}, nil},
		{"ragged last group", all, map[string]int{"WG": 64, "VEC": 1, "RPG": 16}, map[string]int{"rows": 37, "D": 100}, nil},
		{"one row per group", []profiler.DType{profiler.BF16}, map[string]int{"WG": 128, "VEC": 8, "RPG": 1, "RB": 1}, map[string]int{"rows": 9, "D": 512}, nil},
	})
}

func TestRMSNormBwdBrokenIsMismatch(t *testing.T) {
	res := wantMismatch(t, "test_rmsnorm_bwd_store_dw", profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.F32,
		Knobs: map[string]int{"WG": 32, "VEC": 4, "RPG": 2}, Dims: map[string]int{"rows": 8, "D": 64}})
	// dX is right; only dW (64 elements) is wrong.
	if res.Verdict.Mismatches > 64 {
		t.Errorf("%d mismatches, want at most the 64 of dW", res.Verdict.Mismatches)
	}
}
