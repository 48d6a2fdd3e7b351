package sdpamulti_test

import (
	"testing"

	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	sdpamulti "github.com/mltop/mltop/kernels/sdpa_multi"
	"github.com/mltop/mltop/profiler"
)

func init() {
	// The classic off-by-one of the causal bound: query r sees base+r keys
	// instead of base+r+1.
	host.RegisterKernel("test_sdpa_multi_short", func(g *host.Group) {
		ng := *g
		ng.Scalars = append([]profiler.Scalar(nil), g.Scalars...)
		for i := range ng.Scalars {
			if ng.Scalars[i].Name == "base_kv" {
				ng.Scalars[i].I--
			}
		}
		sdpamulti.CPUSDPAMulti(&ng)
	})
}

func TestSDPAMultiOK(t *testing.T) {
	all := profiler.FloatDTypes
	causal := map[string]bool{"causal": true}
	dense := map[string]bool{"causal": false}
	kittest.RunTrainCases(t, "sdpa_multi", []kittest.TrainCase{
		{Name: "causal GQA D=128", DTypes: all, Knobs: map[string]int{"TPG": 128}, Dims: map[string]int{"n_query": 4, "H": 4, "Hkv": 2, "D": 128, "base_kv": 37, "kv_stride": 48}, Flags: causal},
		{Name: "dense, fewer keys than warps", DTypes: all, Knobs: map[string]int{"TPG": 1024}, Dims: map[string]int{"n_query": 3, "H": 2, "Hkv": 1, "D": 64, "base_kv": 5, "kv_stride": 8}, Flags: dense},
		{Name: "empty prefix, D=256, one warp", DTypes: []profiler.DType{profiler.BF16}, Knobs: map[string]int{"TPG": 32}, Dims: map[string]int{"n_query": 5, "H": 2, "Hkv": 2, "D": 256, "base_kv": 0, "kv_stride": 5}, Flags: causal},
	})
}

func TestSDPAMultiBrokenIsMismatch(t *testing.T) {
	kittest.WantMismatch(t, "test_sdpa_multi_short", profiler.Spec{Kernel: "sdpa_multi", DType: profiler.F32, Knobs: map[string]int{"TPG": 64},
		Dims: map[string]int{"n_query": 2, "H": 2, "Hkv": 1, "D": 64, "base_kv": 6, "kv_stride": 8}, Flags: map[string]bool{"causal": true}})
}
