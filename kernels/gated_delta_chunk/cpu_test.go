package gateddeltachunk_test

import (
	"testing"

	gateddeltachunk "github.com/mltop/mltop/kernels/gated_delta_chunk"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func init() {
	// Drops the gate: runs the real kernel on a log gate g of zeros, so
	// neither the state decay nor the per-step gate is applied. The plan
	// has one group, so the overwrite happens before any read.
	host.RegisterKernel("test_gated_delta_no_gate", func(g *host.Group) {
		gated := g.Arg(3, profiler.F32)
		gated.Store(0, make([]float32, gated.Len()-run.GuardBytes/4)) // not the runner's guard past it

		gateddeltachunk.CPUGatedDeltaChunk(g)
	})
}

func TestGatedDeltaOK(t *testing.T) {
	bf := []profiler.DType{profiler.BF16}
	kittest.RunTrainCases(t, "gated_delta_chunk", []kittest.TrainCase{
		{Name: "two chunks, two V tiles", DTypes: bf, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 64}, Dims: map[string]int{"B": 1, "T": 32, "H": 2, "Hg": 1, "K": 32, "V": 16}, Flags: nil},
		{Name: "batch 2, BT=32", DTypes: bf, Knobs: map[string]int{"BT": 32, "BV": 16, "WG": 128}, Dims: map[string]int{"B": 2, "T": 96, "H": 1, "Hg": 1, "K": 64, "V": 16}, Flags: nil},
	})
}

func TestGatedDeltaBrokenIsMismatch(t *testing.T) {
	kittest.WantMismatch(t, "test_gated_delta_no_gate", profiler.Spec{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32},
		Dims: map[string]int{"B": 1, "T": 32, "H": 1, "Hg": 1, "K": 32, "V": 8}})
}
