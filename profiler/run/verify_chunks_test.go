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

// A chunk with nothing to rank (every element out of range, or NaN where
// NaN is wanted) names no worst element; an element whose want is NaN or
// Inf leaves the largest errors as they were (a finite |Δ| against a NaN
// is NaN, against an Inf the relative error is NaN).
func TestVerifyChunksWithNothingToRank(t *testing.T) {
	const n = 100_000
	nan := math.NaN()
	for _, tc := range []struct {
		name      string
		idx       func(i int) int
		want, got float64
	}{
		{"every index out of range", func(i int) int { return n + i }, 1, 1},
		{"NaN where NaN is wanted", func(i int) int { return i }, nan, nan},
	} {
		idx, want, out := make([]int, n), make([]float64, n), make([]float32, n)
		for i := range idx {
			idx[i], want[i], out[i] = tc.idx(i), tc.want, float32(tc.got)
		}
		ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: idx, Want: want}}}
		v := run.Verify(ref, map[string][]float32{"o": out}, profiler.Tolerance{ATol: 1e-3})
		if v.Worst != "" || v.WorstRatio != 0 {
			t.Errorf("%s: worst %q ratio %g: want none", tc.name, v.Worst, v.WorstRatio)
		}
	}
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: []int{0, 1, 2}, Want: []float64{nan, math.Inf(1), 2}}}}
	v := run.Verify(ref, map[string][]float32{"o": {1, 1, 2.5}}, profiler.Tolerance{ATol: 1e-3, RTol: 1e-3})
	if v.MaxRelErr != 0.25 || !math.IsInf(v.MaxAbsErr, 1) {
		t.Errorf("max |Δ| %g, max rel %g: want +Inf (the Inf wanted) and 0.25 (the NaN and Inf wanted left out)", v.MaxAbsErr, v.MaxRelErr)
	}
	v = run.Verify(&profiler.Reference{Checks: []profiler.Check{{Buffer: "o", Index: []int{0, 1}, Want: []float64{nan, 2}}}},
		map[string][]float32{"o": {1, 2.5}}, profiler.Tolerance{ATol: 1e-3})
	if v.MaxAbsErr != 0.5 {
		t.Errorf("max |Δ| %g: want 0.5 (a NaN wanted left out)", v.MaxAbsErr)
	}
}
