package transpose_test

import (
	"testing"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	_ "github.com/mltop/mltop/kernels/transpose"
	"github.com/mltop/mltop/profiler"
)

// Helpers shared by the training-op and seed-kernel tests (transpose,
// rmsnorm_bwd, cross_entropy, embedding_bwd, sdpa_multi, gated_delta_chunk).

func init() {
	// Writes the tile untransposed: Y = X reshaped, wrong wherever rows ≠ cols.
	host.RegisterKernel("test_transpose_copy", func(g *host.Group) {
		dt := g.DType()
		n := g.Int("rows") * g.Int("cols")
		if g.ID == [3]int{} {
			buf := make([]float32, n)
			g.Arg(0, dt).Load(0, buf)
			g.Arg(1, dt).Store(0, buf)
		}
	})
}

func TestTransposeOK(t *testing.T) {
	all := profiler.FloatDTypes
	kittest.RunTrainCases(t, "transpose", []kittest.TrainCase{
		{Name: "square tiles", DTypes: all, Knobs: map[string]int{"TILE": 32, "WG": 256}, Dims: map[string]int{"rows": 64, "cols": 96}, Flags: nil},
		{Name: "ragged edges", DTypes: all, Knobs: map[string]int{"TILE": 16, "WG": 64}, Dims: map[string]int{"rows": 37, "cols": 53}, Flags: nil},
		{Name: "one row", DTypes: []profiler.DType{profiler.BF16}, Knobs: map[string]int{"TILE": 64, "WG": 1024}, Dims: map[string]int{"rows": 1, "cols": 130}, Flags: nil},
	})
}

func TestTransposeBrokenIsMismatch(t *testing.T) {
	kittest.WantMismatch(t, "test_transpose_copy", profiler.Spec{Kernel: "transpose", DType: profiler.F32, Dims: map[string]int{"rows": 24, "cols": 40}})
}
