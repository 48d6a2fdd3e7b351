package cpu_test

import (
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// The classic off-by-one of the causal bound: query r sees base+r keys
	// instead of base+r+1.
	cpu.RegisterKernel("test_sdpa_multi_short", func(g *cpu.Group) {
		ng := *g
		ng.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range ng.Scalars {
			if ng.Scalars[i].Name == "base_kv" {
				ng.Scalars[i].I--
			}
		}
		cpu.SDPAMulti(&ng)
	})
}

func TestSDPAMultiOK(t *testing.T) {
	all := profiler.FloatDTypes
	causal := map[string]bool{"causal": true}
	dense := map[string]bool{"causal": false}
	runTrainCases(t, "sdpa_multi", []trainCase{
		{"causal GQA D=128", all, map[string]int{"TPG": 128}, map[string]int{"n_query": 4, "H": 4, "Hkv": 2, "D": 128, "base_kv": 37, "kv_stride": 48}, causal},
		{"dense, fewer keys than warps", all, map[string]int{"TPG": 1024}, map[string]int{"n_query": 3, "H": 2, "Hkv": 1, "D": 64, "base_kv": 5, "kv_stride": 8}, dense},
		{"empty prefix, D=256, one warp", []profiler.DType{profiler.BF16}, map[string]int{"TPG": 32}, map[string]int{"n_query": 5, "H": 2, "Hkv": 2, "D": 256, "base_kv": 0, "kv_stride": 5}, causal},
	})
}

func TestSDPAMultiBrokenIsMismatch(t *testing.T) {
	wantMismatch(t, "test_sdpa_multi_short", profiler.Spec{Kernel: "sdpa_multi", DType: profiler.F32, Knobs: map[string]int{"TPG": 64},
		Dims: map[string]int{"n_query": 2, "H": 2, "Hkv": 1, "D": 64, "base_kv": 6, "kv_stride": 8}, Flags: map[string]bool{"causal": true}})
}
