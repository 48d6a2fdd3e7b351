package cpu_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// BenchmarkAttnFwd measures the CPU attn_fwd through the Runner (the path
// mltop takes) at B=1, H=8, Lq=Lk=1024, D=64:
//
//	go test ./cpu -run '^$' -bench AttnFwd -benchtime 1x
func BenchmarkAttnFwd(b *testing.B) {
	for _, causal := range []bool{false, true} {
		name := "dense"
		if causal {
			name = "causal"
		}
		b.Run(name, func(b *testing.B) {
			be, err := newBackendB()
			if err != nil {
				b.Fatal(err)
			}
			r := run.NewRunner(be)
			s := attnSpec(profiler.BF16, map[string]int{"BQ": 32, "BK": 16}, map[string]int{"B": 1, "H": 8, "Hkv": 8, "Lq": 1024, "Lk": 1024, "D": 64}, causal)
			opt := profiler.DefaultOptions()
			opt.Hot = true
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
