package rmsnormbwd_test

import (
	"testing"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	rmsnormbwd "github.com/mltop/mltop/kernels/rmsnorm_bwd"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Puts eps outside the mean instead of inside: r = 1/sqrt(mean(x²))+eps
	// is emulated by a thousandfold eps, which moves r, dX and dW by far
	// more than the tolerance at rows of small norm.
	host.RegisterKernel("test_rmsnorm_bwd_bad_eps", func(g *host.Group) {
		ng := *g
		ng.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range ng.Scalars {
			if ng.Scalars[i].Name == "eps" {
				ng.Scalars[i].F *= 1000
			}
		}
		rmsnormbwd.CPURMSNormBwd(&ng)
	})
}

func TestRMSNormBwdOK(t *testing.T) {
	all := profiler.FloatDTypes
	kittest.RunTrainCases(t, "rmsnorm_bwd", []kittest.TrainCase{
		{Name: "rows a multiple of RPG", DTypes: all, Knobs: map[string]int{"WG": 32, "VEC": 2, "RPG": 4}, Dims: map[string]int{"rows": 32, "D": 256}, Flags: nil},
		{Name: "ragged last group", DTypes: all, Knobs: map[string]int{"WG": 64, "VEC": 1, "RPG": 16}, Dims: map[string]int{"rows": 37, "D": 100}, Flags: nil},
		{Name: "one row per group", DTypes: []profiler.DType{profiler.BF16}, Knobs: map[string]int{"WG": 128, "VEC": 8, "RPG": 1, "RB": 1}, Dims: map[string]int{"rows": 9, "D": 512}, Flags: nil},
	})
}

func TestRMSNormBwdBrokenIsMismatch(t *testing.T) {
	// D=4 rows have small norms, where eps matters.
	kittest.WantMismatch(t, "test_rmsnorm_bwd_bad_eps", profiler.Spec{Kernel: "rmsnorm_bwd", DType: profiler.F32,
		Knobs: map[string]int{"WG": 32, "VEC": 4, "RPG": 2}, Dims: map[string]int{"rows": 64, "D": 4}})
}
