package attention

import (
	"math"
	"testing"
)

func TestExpf(t *testing.T) {
	cases := []struct {
		x    float32
		want float64
	}{
		{0, 1},
		{-1, math.Exp(-1)},
		{1, math.E},
		{-0.5, math.Exp(-0.5)},
		{-20, math.Exp(-20)},
		{-87, math.Exp(-87)},
		{-100, math.Exp(-100)}, // float32 subnormal
		{float32(math.Inf(-1)), 0},
		{-200, 0},
		{100, math.Inf(1)},
	}
	for _, c := range cases {
		got := float64(Expf(c.x))
		want := float64(float32(c.want))
		if got != want && math.Abs(got-want) > 2e-7*want && !(want < 1e-38 && math.Abs(got-want) < 1e-44) {
			t.Errorf("Expf(%v) = %v, want %v", c.x, got, want)
		}
	}
	if v := Expf(float32(math.NaN())); !math.IsNaN(float64(v)) {
		t.Errorf("Expf(NaN) = %v", v)
	}
	// Sweep [-30, 5]: relative error within 2 float32 ulps.
	worst := 0.0
	for i := range 100000 {
		x := float32(-30 + 35*float64(i)/100000)
		want := math.Exp(float64(x))
		rel := math.Abs(float64(Expf(x))-want) / want
		worst = max(worst, rel)
	}
	if worst > 1.2e-7 {
		t.Errorf("worst relative error %.3g over [-30, 5], want <= 1.2e-7", worst)
	}
}
