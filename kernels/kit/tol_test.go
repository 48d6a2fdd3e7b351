package kit_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// sumCase is one reduction of n terms checked through the tolerance
// model: want is the float64 sum, got what a kernel stored.
func verifySum(t *testing.T, dt profiler.DType, tol profiler.Tolerance, terms []float64, got float64) profiler.Verdict {
	t.Helper()
	var sum, abs, sq float64
	for _, x := range terms {
		sum, abs, sq = sum+x, abs+math.Abs(x), sq+x*x
	}
	g := kit.NewGrowth(len(terms), 1, 0)
	g.Mag[0] = kit.SumMag(sum, abs, sq)
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "s", Index: []int{0}, Want: []float64{sum}, Growth: g}}, RowsChecked: 1, RowsTotal: 1}
	return run.Verify(ref, map[string][]float32{"s": {dt.Round(float32(got))}}, tol)
}

// f32Sum is the sum as a kernel forms it: f32 partials over 256 chunks
// (one per thread) and a pairwise tree; seq sums left to right in f32, the
// order with the largest rounding.
func f32Sum(terms []float64, seq bool) float64 {
	if seq {
		var a float32
		for _, x := range terms {
			a += float32(x)
		}
		return float64(a)
	}
	const wg = 256
	part := make([]float32, wg)
	chunk := (len(terms) + wg - 1) / wg
	for w := range wg {
		for c := w * chunk; c < min((w+1)*chunk, len(terms)); c++ {
			part[w] += float32(terms[c])
		}
	}
	for s := wg / 2; s > 0; s /= 2 {
		for w := range s {
			part[w] += part[w+s]
		}
	}
	return float64(part[0])
}

func TestGrowthPassesCorrectAndCatchesWrong(t *testing.T) {
	rng := profiler.NewRNG(7)
	const n = 65536
	positive := make([]float64, n) // softmax denominators, Σ exp: no cancellation
	signed := make([]float64, n)   // Σ Y·dY with Y in [0,1], dY normal: cancels
	for i := range n {
		positive[i] = float64(float32(math.Exp(rng.Normal())))
		signed[i] = float64(float32(rng.Float64() * rng.Normal()))
	}
	f32 := profiler.DefaultTolerances[profiler.F32]
	for _, c := range []struct {
		name  string
		terms []float64
	}{{"positive", positive}, {"signed", signed}} {
		sum := 0.0
		for _, x := range c.terms {
			sum += x
		}
		for _, seq := range []bool{false, true} {
			if v := verifySum(t, profiler.F32, f32, c.terms, f32Sum(c.terms, seq)); !v.Pass {
				t.Errorf("%s n=%d seq=%v: a correct f32 sum fails: %s", c.name, n, seq, v.Worst)
			}
		}
		if v := verifySum(t, profiler.F32, f32, c.terms, f32Sum(c.terms, false)*(1+1e-3)); v.Pass {
			t.Errorf("%s n=%d: a sum scaled by 1+1e-3 passes: %s", c.name, n, v.Worst)
		}
		// Off by one element: one term too many (a loop bound past the
		// row's end reads the next row's first term; here the largest).
		big := 0.0
		for _, x := range c.terms {
			if math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		if v := verifySum(t, profiler.F32, f32, c.terms, f32Sum(c.terms, false)+big); v.Pass {
			t.Errorf("%s n=%d: a sum with one extra term %g passes: %s", c.name, n, big, v.Worst)
		}
	}
}

// TestGrowthBF16Bites: a bf16 output of a 16-term f32 reduction that
// cancels (Σ|t| = 100, sum ≈ 0.5) is held to f32 accumulation, not to
// bf16 eps: an error of 1e-3·Σ|t| is caught, and the correct f32 sum
// rounded to bf16 passes.
func TestGrowthBF16Bites(t *testing.T) {
	terms := make([]float64, 16)
	for k := range 8 {
		a := float64(profiler.BF16.Round(float32(3 + 0.5*float64(k))))
		terms[2*k] = a
		terms[2*k+1] = -float64(profiler.BF16.Round(float32(a * 0.99)))
	}
	var abs, sum float64
	for _, x := range terms {
		abs += math.Abs(x)
		sum += x
	}
	bf := profiler.DefaultTolerances[profiler.BF16]
	got := f32Sum(terms, true)
	if v := verifySum(t, profiler.BF16, bf, terms, got); !v.Pass {
		t.Fatalf("correct bf16 sum fails: %s", v.Worst)
	}
	if v := verifySum(t, profiler.BF16, bf, terms, got+1e-3*abs); v.Pass {
		t.Errorf("sum %g of Σ|t| %g off by 1e-3·Σ|t| passes at bf16: %s", sum, abs, v.Worst)
	}
	// The growth a bf16-eps model would allow (2·2⁻⁸·√16·Σ|t|) would hide it:
	if naive := profiler.GrowthC * kit.Unit(profiler.BF16) * 4 * abs; naive < 1e-3*abs {
		t.Fatalf("test premise: naive bf16 growth %g should exceed the error", naive)
	}
}

func TestSumMag(t *testing.T) {
	for _, c := range []struct{ sum, abs, sq, want float64 }{
		{10, 10, 10, 10},   // positive terms: Σ|t|
		{0, 1000, 100, 30}, // cancelling: 3·√Σt²
		{5, 1000, 100, 35}, // |sum| + 3·√Σt²
		{0, 2, 100, 2},     // never above Σ|t|
	} {
		if got := kit.SumMag(c.sum, c.abs, c.sq); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SumMag(%g, %g, %g) = %g, want %g", c.sum, c.abs, c.sq, got, c.want)
		}
	}
}

func TestUnit(t *testing.T) {
	for dt, want := range map[profiler.DType]float64{profiler.F32: 0x1p-24, profiler.F16: 0x1p-11, profiler.BF16: 0x1p-8} {
		if got := kit.Unit(dt); got != want {
			t.Errorf("Unit(%s) = %g, want %g", dt, got, want)
		}
		// Rounding 1 + Unit·1.5 to dt moves it by more than Unit: Unit
		// is the half ulp of 1 of dt.
		if r := float64(dt.Round(float32(1 + 1.5*want))); r-1 < 1.5*want {
			t.Errorf("%s: 1+1.5u rounds to %g, want 1+2u", dt, r)
		}
	}
}

func TestMismatchMessageShowsBound(t *testing.T) {
	g := &profiler.Growth{Eps: kit.Unit(profiler.F32), N: 8192, Mag: []float64{1.1}}
	ref := &profiler.Reference{Checks: []profiler.Check{{Buffer: "dX", Index: []int{8196}, Want: []float64{-72.54988}, Growth: g, Dims: []int{4, 8192}}}}
	out := make([]float32, 8200)
	out[8196] = -72.54991
	v := run.Verify(ref, map[string][]float32{"dX": out}, profiler.Tolerance{ATol: 1e-5})
	if v.Pass || v.WorstRatio <= 1 {
		t.Fatalf("verdict %+v, want a mismatch", v)
	}
	for _, part := range []string{"dX[1,4]=", "want -72.54988", "> bound", "atol 1e-05", "eps 6e-08·√n", "n=8192", "mag 1.1"} {
		if !strings.Contains(v.Worst, part) {
			t.Errorf("worst %q lacks %q", v.Worst, part)
		}
	}
	// 9 significant digits tell got from want.
	if !strings.Contains(v.Worst, "=-72.5499115") && !strings.Contains(v.Worst, "=-72.549911") {
		t.Errorf("worst %q does not show got with enough digits", v.Worst)
	}
}
