package cpu_test

import (
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Races on the table: a plain read-add-write instead of an atomic add
	// loses updates when tokens share an id; to make the loss certain it
	// also skips every other token.
	cpu.RegisterKernel("test_embedding_bwd_skip", func(g *cpu.Group) {
		if g.ID[0]%2 == 1 {
			return
		}
		cpu.EmbeddingBwd(g)
	})
}

func TestEmbeddingBwdOK(t *testing.T) {
	all := profiler.FloatDTypes
	runTrainCases(t, "embedding_bwd", []trainCase{
		// vocab ≪ tokens: every row collides many times.
		{"heavy collisions", all, map[string]int{"WG": 32, "VEC": 2, "TPG": 4}, map[string]int{"tokens": 256, "vocab": 8, "D": 64}, nil},
		{"sparse rows", all, map[string]int{"WG": 64, "VEC": 1, "TPG": 1}, map[string]int{"tokens": 33, "vocab": 100, "D": 37}, nil},
	})
}

func TestEmbeddingBwdBrokenIsMismatch(t *testing.T) {
	wantMismatch(t, "test_embedding_bwd_skip", profiler.Spec{Kernel: "embedding_bwd", DType: profiler.BF16,
		Knobs: map[string]int{"WG": 32, "VEC": 4, "TPG": 1}, Dims: map[string]int{"tokens": 64, "vocab": 4, "D": 32}})
}
