package run_test

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The hint that a sum in f16 explains every mismatch names each output it
// explains, once; one mismatch beyond that rounding (or a NaN) drops it.
func TestVerifyHintNamesEveryExplainedOutput(t *testing.T) {
	check := func(buf string) profiler.Check {
		return profiler.Check{Buffer: buf, Index: []int{0, 1}, Want: []float64{10, -10},
			Growth: &profiler.Growth{Eps: 0x1p-24, LowEps: 0x1p-11, LowHint: "sum in f16 on " + buf, N: 1024, Mag: []float64{10, 10}}}
	}
	ref := &profiler.Reference{Checks: []profiler.Check{check("A"), check("B")}, RowsChecked: 2, RowsTotal: 2}
	tol := profiler.Tolerance{ATol: 1e-5, RTol: 1e-5}
	// f16 growth: 2·2⁻¹¹·√1024·10 ≈ 0.31; f32 growth ≈ 2e-5
	for _, c := range []struct {
		name  string
		a, b  []float32
		hints []string
	}{
		{"both outputs off by f16 rounding", []float32{10.1, -10.1}, []float32{10.2, -9.9}, []string{"sum in f16 on A", "sum in f16 on B"}},
		{"one output right", []float32{10, -10}, []float32{10.2, -9.9}, []string{"sum in f16 on B"}},
		{"one element beyond f16 rounding", []float32{10.1, -10.1}, []float32{12, -10}, nil},
	} {
		v := run.Verify(ref, map[string][]float32{"A": c.a, "B": c.b}, tol)
		if v.Pass {
			t.Fatalf("%s: passes", c.name)
		}
		for _, h := range c.hints {
			if strings.Count(v.Hint, h) != 1 {
				t.Errorf("%s: hint %q does not name %q once", c.name, v.Hint, h)
			}
		}
		if c.hints == nil && v.Hint != "" {
			t.Errorf("%s: hint %q, want none", c.name, v.Hint)
		}
	}
}
