package kernels_test

import (
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The Metal kernels of the seed families (sdpa_multi, gated_delta_chunk,
// rmsnorm_bwd, cross_entropy, embedding_bwd, transpose) compiled with g++
// against the CPU emulation of MSL in metal/testdata/mslemu and run
// through the real Runner against the float64 references. It proves the
// indexing, reductions, barriers, atomics, buffer order, scalar layout and
// macros; it cannot prove that the Metal compiler accepts the text.

var seedEmuDev = profiler.DeviceInfo{Backend: "metal", Name: "Apple M2 (emulated)", TGMPerGroup: 32768, TGMPerUnit: 32768, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 32}

func TestSeedMetalKernelsOnCPUEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the emulation compiles seven kernels with g++")
	}
	specs := []profiler.Spec{
		{Kernel: "transpose", DType: profiler.F16, Knobs: map[string]int{"TILE": 16, "WG": 64}, Dims: map[string]int{"rows": 37, "cols": 50}},
		{Kernel: "rmsnorm_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 64, "VEC": 2, "RPG": 4, "RB": 4}, Dims: map[string]int{"rows": 10, "D": 200}},
		{Kernel: "cross_entropy", DType: profiler.F32, Knobs: map[string]int{"WG": 64, "VEC": 2}, Dims: map[string]int{"rows": 12, "vocab": 6, "pad_id": 1}},
		{Kernel: "cross_entropy", DType: profiler.BF16, Knobs: map[string]int{"WG": 32, "VEC": 4}, Dims: map[string]int{"rows": 3, "vocab": 500, "pad_id": -1}},
		{Kernel: "embedding_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 32, "VEC": 4, "TPG": 2}, Dims: map[string]int{"tokens": 9, "vocab": 3, "D": 40}},
		{Kernel: "sdpa_multi", DType: profiler.F16, Knobs: map[string]int{"TPG": 64}, Dims: map[string]int{"n_query": 3, "H": 2, "Hkv": 1, "D": 64, "base_kv": 5, "kv_stride": 9}, Flags: map[string]bool{"causal": true}},
		{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32}, Dims: map[string]int{"B": 1, "T": 32, "H": 2, "Hg": 1, "K": 32, "V": 16}},
	}
	eb := mslemu.New(t, "../metal/testdata/mslemu", seedEmuDev)
	opt := mslemu.Options()
	opt.Hot = true
	opt.MaxRows = 4096
	r := run.NewRunner(eb)
	for _, s := range specs {
		t.Run(s.Kernel+"/"+string(s.DType), func(t *testing.T) {
			mslemu.Check(t, r, s, opt)
		})
	}
}
