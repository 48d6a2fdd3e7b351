package embeddingbwd_test

import (
	"testing"

	embeddingbwd "github.com/mltop/mltop/kernels/embedding_bwd"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Races on the table: a plain read-add-write instead of an atomic add
	// loses updates when tokens share an id; to make the loss certain it
	// also skips every other token.
	host.RegisterKernel("test_embedding_bwd_skip", func(g *host.Group) {
		if g.ID[0]%2 == 1 {
			return
		}
		embeddingbwd.CPUEmbeddingBwd(g)
	})
}

func TestEmbeddingBwdOK(t *testing.T) {
	all := profiler.FloatDTypes
	kittest.RunTrainCases(t, "embedding_bwd", []kittest.TrainCase{
		// vocab ≪ tokens: every row collides many times.
		{Name: "heavy collisions", DTypes: all, Knobs: map[string]int{"WG": 32, "VEC": 2, "TPG": 4}, Dims: map[string]int{"tokens": 256, "vocab": 8, "D": 64}, Flags: nil},
		{Name: "sparse rows", DTypes: all, Knobs: map[string]int{"WG": 64, "VEC": 1, "TPG": 1}, Dims: map[string]int{"tokens": 33, "vocab": 100, "D": 37}, Flags: nil},
	})
}

func TestEmbeddingBwdBrokenIsMismatch(t *testing.T) {
	kittest.WantMismatch(t, "test_embedding_bwd_skip", profiler.Spec{Kernel: "embedding_bwd", DType: profiler.BF16,
		Knobs: map[string]int{"WG": 32, "VEC": 4, "TPG": 1}, Dims: map[string]int{"tokens": 64, "vocab": 4, "D": 32}})
}
