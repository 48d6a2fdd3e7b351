package softmaxbwd

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

func TestSoftmaxBwdReference(t *testing.T) {
	// y = (0.5, 0.5), dy = (1, 3): Σ dy·y = 2, dx = (−0.5, 0.5).
	// Row 1: y = (1, 0), dy = (4, −7): Σ = 4, dx = (0, 0).
	in := profiler.Inputs{"Y": {0.5, 0.5, 1, 0}, "dY": {1, 3, 4, -7}}
	s := kittest.Spec(SoftmaxBwd{}, profiler.F32, map[string]int{"rows": 2, "cols": 2}, false)
	ref, err := SoftmaxBwd{}.Reference(s, in, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := ref.Checks[0]
	want := []float64{-0.5, 0.5, 0, 0}
	if c.Buffer != "dX" || len(c.Index) != 4 {
		t.Fatalf("check %+v", c)
	}
	for i, w := range want {
		if c.Index[i] != i || c.Want[i] != w {
			t.Errorf("dX[%d] = %g (index %d), want %g", i, c.Want[i], c.Index[i], w)
		}
	}
	// Sampling: at most maxRows rows, first and last included, indices map
	// to whole rows.
	in = profiler.Inputs{"Y": make([]float32, 1000*3), "dY": make([]float32, 1000*3)}
	s = kittest.Spec(SoftmaxBwd{}, profiler.F32, map[string]int{"rows": 1000, "cols": 3}, false)
	ref, err = SoftmaxBwd{}.Reference(s, in, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	idx := ref.Checks[0].Index
	if ref.RowsChecked != 10 || ref.RowsTotal != 1000 || len(idx) != 30 || idx[0] != 0 || idx[29] != 2999 || !strings.Contains(ref.Rows, "10 of 1000") {
		t.Errorf("sampled %d/%d rows %q, indices %v", ref.RowsChecked, ref.RowsTotal, ref.Rows, idx)
	}
	if _, err := (SoftmaxBwd{}).Reference(s, profiler.Inputs{"Y": make([]float32, 5)}, 10, 1); err == nil || !strings.Contains(err.Error(), "Y has 5 elements") && !strings.Contains(err.Error(), "dY") {
		t.Errorf("short inputs: %v", err)
	}
}
