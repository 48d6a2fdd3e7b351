package cpu_test

import (
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// Drops the gate: runs the real kernel on a log gate g of zeros, so
	// neither the state decay nor the per-step gate is applied. The plan
	// has one group, so the overwrite happens before any read.
	cpu.RegisterKernel("test_gated_delta_no_gate", func(g *cpu.Group) {
		gated := g.Arg(3, profiler.F32)
		gated.Store(0, make([]float32, gated.Len()))
		cpu.GatedDeltaChunk(g)
	})
}

func TestGatedDeltaOK(t *testing.T) {
	bf := []profiler.DType{profiler.BF16}
	runTrainCases(t, "gated_delta_chunk", []trainCase{
		{"two chunks, two V tiles", bf, map[string]int{"BT": 16, "BV": 8, "WG": 64}, map[string]int{"B": 1, "T": 32, "H": 2, "Hg": 1, "K": 32, "V": 16}, nil},
		{"batch 2, BT=32", bf, map[string]int{"BT": 32, "BV": 16, "WG": 128}, map[string]int{"B": 2, "T": 96, "H": 1, "Hg": 1, "K": 64, "V": 16}, nil},
	})
}

func TestGatedDeltaBrokenIsMismatch(t *testing.T) {
	wantMismatch(t, "test_gated_delta_no_gate", profiler.Spec{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32},
		Dims: map[string]int{"B": 1, "T": 32, "H": 1, "Hg": 1, "K": 32, "V": 8}})
}
