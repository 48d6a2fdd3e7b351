package all_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// largeSpecs are, per family, a shape whose reductions are long (the
// sizes at which issue 12 found false mismatches), small enough for the
// CPU backend: its Go kernels compute in f32 in the GPU kernels' order
// (per-thread partials, trees, atomics), so this is each float64 reference
// and its tolerance model against a float32 computation at large n.
// scripts/tolerance-gpu.sh runs the largest shapes on CUDA.
var largeSpecs = []profiler.Spec{
	{Kernel: "softmax_bwd", Dims: map[string]int{"rows": 3, "cols": 65536}},
	{Kernel: "rmsnorm_bwd", Knobs: map[string]int{"WG": 1024}, Dims: map[string]int{"rows": 256, "D": 16384}},
	{Kernel: "cross_entropy", Dims: map[string]int{"rows": 3, "vocab": 262144, "pad_id": -1}},
	{Kernel: "embedding_bwd", Dims: map[string]int{"tokens": 16384, "vocab": 16, "D": 512}},
	{Kernel: "transpose", Dims: map[string]int{"rows": 1024, "cols": 2048}},
	{Kernel: "attn_fwd", Dims: map[string]int{"B": 1, "H": 1, "Lq": 64, "Lk": 8192, "D": 64}},
	{Kernel: "attn_bwd", Dims: map[string]int{"B": 1, "H": 1, "Lq": 512, "Lk": 1024, "D": 64}},
	{Kernel: "attn_bwd_atomic", Dims: map[string]int{"B": 1, "H": 1, "Lq": 512, "Lk": 1024, "D": 64}},
	{Kernel: "attn_bwd_unfused", Dims: map[string]int{"B": 1, "H": 1, "Lq": 512, "Lk": 1024, "D": 64}},
	{Kernel: "sdpa_multi", Dims: map[string]int{"n_query": 2, "H": 2, "Hkv": 1, "D": 128, "base_kv": 16384, "kv_stride": 16386}},
	{Kernel: "gated_delta_chunk", Dims: map[string]int{"B": 1, "T": 8192, "H": 1, "Hg": 1, "K": 64, "V": 32}},
}

func TestLargeReductionsPassOnCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("large shapes: seconds per family")
	}
	seen := map[string]bool{}
	for _, s := range largeSpecs {
		seen[s.Kernel] = true
	}
	for _, f := range profiler.Families(false) {
		if !seen[f.Name()] {
			t.Errorf("family %s has no large shape in largeSpecs", f.Name())
		}
	}
	r := run.NewRunner(kittest.NewBackend(t))
	o := kittest.TrainOpts()
	o.MaxRows = 8
	for _, base := range largeSpecs {
		for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
			s := base
			s.DType = dt
			f, err := profiler.Lookup(s.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(f.Schema().DTypes, dt) {
				continue
			}
			t.Run(s.Kernel+"/"+string(dt), func(t *testing.T) {
				res := r.Run(context.Background(), s, o, nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("%s: status %s: %s", s, res.Status, res.Error)
				}
				if res.Verdict != nil {
					t.Logf("worst %.3f of bound: %s", res.Verdict.WorstRatio, res.Verdict.Worst)
				}
			})
		}
	}
}
