package crossentropy_test

import (
	"context"
	"testing"

	crossentropy "github.com/mltop/mltop/kernels/cross_entropy"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func init() {
	// Ignores the pad id: pad rows get a loss and a gradient.
	host.RegisterKernel("test_cross_entropy_no_pad", func(g *host.Group) {
		ng := *g
		ng.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range ng.Scalars {
			if ng.Scalars[i].Name == "pad_id" {
				ng.Scalars[i].I = -1
			}
		}
		crossentropy.CPUCrossEntropy(&ng)
	})
}

func TestCrossEntropyOK(t *testing.T) {
	all := profiler.FloatDTypes
	kittest.RunTrainCases(t, "cross_entropy", []kittest.TrainCase{
		{Name: "small vocab with pad rows", DTypes: all, Knobs: map[string]int{"WG": 32, "VEC": 1}, Dims: map[string]int{"rows": 64, "vocab": 16, "pad_id": 3}, Flags: nil},
		{Name: "vocab not a multiple of WG", DTypes: all, Knobs: map[string]int{"WG": 64, "VEC": 4}, Dims: map[string]int{"rows": 8, "vocab": 1000, "pad_id": -1}, Flags: nil},
	})
}

func TestCrossEntropyPadRowsAreZero(t *testing.T) {
	// With vocab 4 about a quarter of the rows hit pad id 0; the broken
	// kernel that ignores the pad must fail exactly there.
	s := profiler.Spec{Kernel: "cross_entropy", DType: profiler.F32, Knobs: map[string]int{"WG": 32, "VEC": 1}, Dims: map[string]int{"rows": 32, "vocab": 4, "pad_id": 0}}
	res := run.NewRunner(kittest.NewBackend(t)).Run(context.Background(), s, kittest.TrainOpts(), nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	kittest.WantMismatch(t, "test_cross_entropy_no_pad", s)
}
