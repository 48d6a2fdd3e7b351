package run_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A check of several chunks (compared on several cores) counts every
// element once and names the worst one wherever it lies; a NaN outranks
// an element past a zero bound, whichever comes first.
func TestVerifyAcrossChunks(t *testing.T) {
	const n = 300_000
	idx, want, out := make([]int, n), make([]float64, n), make([]float32, n)
	for i := range idx {
		idx[i], want[i], out[i] = i, 1, 1
	}
	ref := func() *profiler.Reference {
		return &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: idx, Want: want}}}
	}
	tol := profiler.Tolerance{ATol: 1e-3, RTol: 0}
	out[70_000] = 1.0005  // inside the bound
	out[250_123] = 1.0009 // the worst inside
	v := run.Verify(ref(), map[string][]float32{"o": out}, tol)
	if !v.Pass || v.Checked != n || v.Mismatches != 0 || !strings.HasPrefix(v.Worst, "o[250123]=") {
		t.Errorf("pass %v, checked %d, mismatches %d, worst %q: want a pass over %d elements, worst o[250123]", v.Pass, v.Checked, v.Mismatches, v.Worst, n)
	}
	out[200_000] = 2 // past the bound
	out[260_000] = float32(math.NaN())
	v = run.Verify(ref(), map[string][]float32{"o": out}, tol)
	if v.Pass || v.Mismatches != 2 || v.NaNInf != 1 || !strings.HasPrefix(v.Worst, "o[260000]=NaN") || v.MaxAbsErr != 1 {
		t.Errorf("mismatches %d, NaN %d, worst %q, max |Δ| %g: want 2, 1, the NaN, 1", v.Mismatches, v.NaNInf, v.Worst, v.MaxAbsErr)
	}
	zero := profiler.Tolerance{}
	out[260_000] = 1
	out[10] = float32(math.NaN()) // a NaN early, a zero-bound miss later
	v = run.Verify(ref(), map[string][]float32{"o": out}, zero)
	if !strings.HasPrefix(v.Worst, "o[10]=NaN") {
		t.Errorf("worst %q: want the NaN at 10", v.Worst)
	}
}
