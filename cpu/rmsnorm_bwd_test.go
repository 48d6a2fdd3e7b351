package cpu_test

import (
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Puts eps outside the mean instead of inside: r = 1/sqrt(mean(x²))+eps
	// is emulated by a thousandfold eps, which moves r, dX and dW by far
	// more than the tolerance at rows of small norm.
	cpu.RegisterKernel("test_rmsnorm_bwd_bad_eps", func(g *cpu.Group) {
		ng := *g
		ng.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range ng.Scalars {
			if ng.Scalars[i].Name == "eps" {
				ng.Scalars[i].F *= 1000
			}
		}
		cpu.RMSNormBwd(&ng)
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
	// D=4 rows have small norms, where eps matters.
	wantMismatch(t, "test_rmsnorm_bwd_bad_eps", profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.F32,
		Knobs: map[string]int{"WG": 32, "VEC": 4, "RPG": 2}, Dims: map[string]int{"rows": 64, "D": 4}})
}
