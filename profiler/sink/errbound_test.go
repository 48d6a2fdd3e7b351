package sink

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestErrBound(t *testing.T) {
	for _, tc := range []struct {
		v    *profiler.Verdict
		want string
	}{
		{nil, "-"},
		{&profiler.Verdict{Unchecked: true, Pass: true}, "-"},
		{&profiler.Verdict{Checked: 10, WorstRatio: 0.3094, Pass: true}, "0.31"},
		{&profiler.Verdict{Checked: 10, WorstRatio: 3.2e-4, Pass: true}, "3.2e-04"},
		{&profiler.Verdict{Checked: 10, WorstRatio: 1520}, "1.5e+03"},
		{&profiler.Verdict{Checked: 10, WorstRatio: math.Inf(1)}, "inf"},
		{&profiler.Verdict{Checked: 10, Pass: true}, "0"},
	} {
		if got := ErrBound(tc.v); got != tc.want {
			t.Errorf("ErrBound(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestTableShowsErrBound: an f32 softmax_bwd whose max rel is 3e-02 passes
// because its bound grows with the row length; the table says how far
// inside the bound it stays, beside max rel, and keeps that column when a
// narrow terminal drops max rel.
func TestTableShowsErrBound(t *testing.T) {
	r := profiler.Result{
		Spec:    profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 4096, "cols": 8192}},
		Status:  profiler.StatusOK,
		Stats:   profiler.Stats{N: 50, Median: 41e3, P10: 40e3, P90: 43e3},
		Verdict: &profiler.Verdict{MaxRelErr: 3.09e-2, RTol: 1e-4, ATol: 1e-6, WorstRatio: 0.31, Checked: 8192, Pass: true},
	}
	var buf bytes.Buffer
	NewTable(&buf).Write(r)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`max rel +err/bound +status`).MatchString(lines[0]) {
		t.Fatalf("header:\n%s", buf.String())
	}
	if !regexp.MustCompile(`3\.09e-02 +0\.31 +ok`).MatchString(lines[1]) {
		t.Errorf("row lacks max rel, err/bound and status side by side:\n%s", buf.String())
	}
	buf.Reset()
	tab := NewTable(&buf)
	tab.Fit(90, []profiler.Spec{r.Spec})
	tab.Write(r)
	if out := buf.String(); strings.Contains(out, "max rel") || !strings.Contains(out, "err/bound") || !strings.Contains(out, " 0.31 ") {
		t.Errorf("at 90 columns err/bound should outlast max rel:\n%s", out)
	}
	if b := FormatResult(r); !strings.Contains(b, "worst err/bound 0.31 (at most 1 passes") {
		t.Errorf("result block lacks err/bound:\n%s", b)
	}
}

// A check that allows no difference (atol = rtol = 0: a transpose) reads
// "exact" in the result block, not "atol 0 + rtol 0·|ref|"; others keep
// their atol and rtol.
func TestFormatResultExactTolerance(t *testing.T) {
	for _, c := range []struct {
		atol, rtol float64
		want       string
	}{
		{0, 0, "tol exact (no difference allowed)"},
		{1e-6, 1e-4, "tol atol 1e-06 + rtol 0.0001·|ref|"},
		{0, 1e-4, "tol atol 0 + rtol 0.0001·|ref|"},
	} {
		r := profiler.Result{Spec: profiler.Spec{Kernel: "transpose", DType: profiler.F32}, Status: profiler.StatusOK,
			Verdict: &profiler.Verdict{ATol: c.atol, RTol: c.rtol, Checked: 64, Pass: true}}
		if b := FormatResult(r); !strings.Contains(b, c.want) {
			t.Errorf("atol %g rtol %g: result block lacks %q:\n%s", c.atol, c.rtol, c.want, b)
		}
	}
}

// A mismatch's hint (what would explain it rather than a wrong kernel)
// follows the worst element in the result block; a pass shows none.
func TestFormatResultHint(t *testing.T) {
	v := &profiler.Verdict{ATol: 1e-3, RTol: 5e-3, Checked: 64, Mismatches: 3, Worst: "C[7]=1 want 2", Hint: "every mismatch is within the rounding of a sum in f16"}
	r := profiler.Result{Spec: profiler.Spec{Kernel: "k", DType: profiler.F16}, Status: profiler.StatusMismatch, Verdict: v}
	if b := FormatResult(r); !strings.Contains(b, "  worst: C[7]=1 want 2\n  hint: every mismatch is within the rounding of a sum in f16\n") {
		t.Errorf("result block lacks the hint after the worst element:\n%s", b)
	}
	v.Pass, v.Mismatches = true, 0
	if b := FormatResult(r); strings.Contains(b, "hint:") {
		t.Errorf("a pass shows a hint:\n%s", b)
	}
}
