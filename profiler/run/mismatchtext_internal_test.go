package run

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A mismatch names the worst element by the buffer's shape (y[1,2], not
// y[5]) when the check gives it, and the bound by the parts it has: the
// growth term only where an output's bound has one.
func TestMismatchTextNamesShapeAndBoundParts(t *testing.T) {
	tol := profiler.Tolerance{ATol: 1e-5, RTol: 1e-5}
	for _, c := range []struct {
		name         string
		check        profiler.Check
		want, absent []string
	}{
		{"2-D, no terms", profiler.Check{Buffer: "y", Index: []int{5}, Want: []float64{1}, Dims: []int{2, 3}},
			[]string{"1 of 1 checked elements outside their bound atol 1e-05 + rtol 1e-05·|ref| (0 NaN/Inf); worst y[1,2]=2 want 1", "(atol 1e-05 + rtol·|want| 1e-05)"},
			[]string{"growth", "y[5]"}},
		{"flat without a shape", profiler.Check{Buffer: "y", Index: []int{5}, Want: []float64{1}},
			[]string{"worst y[5]=2"}, []string{"growth"}},
		{"with terms", profiler.Check{Buffer: "y", Index: []int{5}, Want: []float64{1}, Dims: []int{2, 3},
			Growth: &profiler.Growth{Eps: 0x1p-24, N: 64, Mag: []float64{1}}},
			[]string{"atol 1e-05 + rtol 1e-05·|ref| + growth (0 NaN/Inf); worst y[1,2]", " + growth "}, nil},
	} {
		ref := &profiler.Reference{Checks: []profiler.Check{c.check}, RowsChecked: 1, RowsTotal: 1}
		got := make([]float32, 6)
		got[5] = 2
		v := Verify(ref, map[string][]float32{"y": got}, tol)
		text := mismatchText(v)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: want %q in %s", c.name, w, text)
			}
		}
		for _, w := range c.absent {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q in %s", c.name, w, text)
			}
		}
	}
}
