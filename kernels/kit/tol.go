package kit

import (
	"math"

	"github.com/mltop/mltop/profiler"
)

// The tolerance model's shared pieces (README "Tolerances"): a family's
// float64 reference returns, with each expected value, the magnitude of the
// terms it was formed from, and the check's bound grows by
// profiler.GrowthC·(TermEps + Eps·√N)·magnitude.

// Unit is the unit roundoff (half an ulp of 1) of dtype d: 2⁻²⁴ for f32,
// 2⁻¹¹ for f16, 2⁻⁸ for bf16, 2⁻⁵³ for f64, 2⁻⁴ for fp8e4m3, 2⁻³ for
// fp8e5m2 (and f32's for the integer types).
func Unit(d profiler.DType) float64 {
	switch d {
	case profiler.F16:
		return 0x1p-11
	case profiler.BF16:
		return 0x1p-8
	case profiler.F64:
		return 0x1p-53
	case profiler.FP8E4M3, profiler.FP8E5M2:
		return profiler.FP8Eps(d)
	}
	return 0x1p-24
}

// AccEps is the unit roundoff the built-in kernels reduce in: every one
// accumulates in f32, whatever its storage dtype.
func AccEps(profiler.DType) float64 { return Unit(profiler.F32) }

// ExpEps is the relative error allowed for one term formed through the
// kernels' fast exp (exp2 of x·log2 e: its error grows with |x|, and terms
// whose |x| is large are too small to matter) and a few f32 roundings.
const ExpEps = 0x1p-20

// MMATermEps is the relative error of one term on the tensor-core path for
// dtype d: P and dS are rounded to d before their matrix products. Other
// dtypes get ExpEps.
func MMATermEps(d profiler.DType) float64 {
	if d == profiler.F16 || d == profiler.BF16 {
		return Unit(d) + ExpEps
	}
	return ExpEps
}

// NewGrowth is the growth of size outputs, each a reduction of n terms
// accumulated in f32 with per-term relative error termEps; the caller
// fills Mag.
func NewGrowth(n, size int, termEps float64) *profiler.Growth {
	return &profiler.Growth{Eps: AccEps(profiler.F32), TermEps: termEps, N: n, Mag: make([]float64, size)}
}

// SoftmaxTermEps is the per-term relative error of softmax probabilities
// P_j = exp(s_j − m)/l computed for dtype d: the fast exp, the tensor-core
// rounding of P for 16-bit dtypes, and the f32 rounding of scores that are
// dot products over D terms of absolute scale sabs (an absolute error in
// s_j is a relative error in P_j).
func SoftmaxTermEps(d profiler.DType, dim int, sabs float64) float64 {
	return MMATermEps(d) + AccEps(d)*math.Sqrt(float64(dim))*sabs
}

// SumMag is the magnitude of a sum of terms t_k for its rounding: the
// rounding of a sum in any order or tree is Σ δ_k·s_k over its partial sums
// s_k (|δ_k| ≤ eps), so it is bounded by how large the partial sums get.
// That is never more than Σ|t_k| (abs); for terms whose order does not
// depend on their values, a partial sum strays from its share of the total
// by a few √Σt_k² (sq) at most, so min(abs, |sum| + 3·√sq). A sum of
// random-sign terms that cancels gets the far tighter second form.
func SumMag(sum, abs, sq float64) float64 {
	return min(abs, math.Abs(sum)+3*math.Sqrt(sq))
}
