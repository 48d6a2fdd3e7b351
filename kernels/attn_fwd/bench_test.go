package attnfwd_test

import (
	"context"
	"testing"

	_ "github.com/mltop/mltop/kernels/attn_fwd"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// BenchmarkAttnFwd measures the CPU attn_fwd through the Runner (the path
// mltop takes) at B=1, H=8, Lq=Lk=1024, D=64:
//
//	go test ./kernels/attn_fwd -run '^$' -bench AttnFwd -benchtime 1x
func BenchmarkAttnFwd(b *testing.B) {
	for _, causal := range []bool{false, true} {
		name := "dense"
		if causal {
			name = "causal"
		}
		b.Run(name, func(b *testing.B) {
			r := run.NewRunner(kittest.NewBackend(b))
			s := profiler.Spec{Kernel: "attn_fwd", DType: profiler.BF16, Knobs: map[string]int{"BQ": 32, "BK": 16}, Dims: map[string]int{"B": 1, "H": 8, "Hkv": 8, "Lq": 1024, "Lk": 1024, "D": 64}, Flags: map[string]bool{"causal": causal}}
			opt := profiler.DefaultOptions()
			opt.Cache = profiler.CacheHot
			opt.Stop.MaxTime = 3
			var res profiler.Result
			for b.Loop() {
				res = r.Run(context.Background(), s, opt, nil)
			}
			if res.Status != profiler.StatusOK {
				b.Fatalf("status %s: %s", res.Status, res.Error)
			}
			b.ReportMetric(res.TFLOPS*1e3, "GFLOP/s")
			b.ReportMetric(res.Stats.Median/1e6, "ms/run")
			b.ReportMetric(res.Stats.CV, "cv")
		})
	}
}
