package profiler

import "math"

// fp8Format is an 8-bit float: a sign, expBits exponent bits with bias,
// manBits mantissa bits and gradual underflow. E4M3 (the "fn" variant of
// CUDA's __nv_fp8_e4m3) has no Inf and one NaN pattern per sign; E5M2 is
// IEEE-like, with Inf and NaN at the top exponent.
type fp8Format struct {
	expBits, manBits, bias int
	hasInf                 bool
	maxFinite              float64
}

var fp8Formats = map[DType]fp8Format{
	FP8E4M3: {expBits: 4, manBits: 3, bias: 7, maxFinite: 448},
	FP8E5M2: {expBits: 5, manBits: 2, bias: 15, hasInf: true, maxFinite: 57344},
}

// fp8NaN is the NaN both formats produce (sign clear; 0xff with it set).
const fp8NaN = 0x7f

// encode rounds x to nearest even and saturates at ±maxFinite, Inf
// included (CUDA's __NV_SATFINITE, what the __nv_fp8 constructors use);
// NaN stays NaN.
func (f fp8Format) encode(x float64) uint8 {
	if math.IsNaN(x) {
		return fp8NaN
	}
	var sign uint8
	if math.Signbit(x) {
		sign, x = 0x80, -x
	}
	minExp := 1 - f.bias // the exponent of the smallest normal
	e := minExp
	if x >= math.Ldexp(1, minExp) {
		_, e2 := math.Frexp(x) // x = m·2^e2 with m in [0.5, 1)
		e = e2 - 1
	}
	ulp := math.Ldexp(1, e-f.manBits)
	q := math.RoundToEven(x/ulp) * ulp
	if q > f.maxFinite || math.IsInf(x, 0) {
		q = f.maxFinite
	}
	if q < math.Ldexp(1, minExp) { // subnormal (or zero): the mantissa alone
		return sign | uint8(q/math.Ldexp(1, minExp-f.manBits))
	}
	_, e2 := math.Frexp(q)
	e = e2 - 1
	man := uint8(q/math.Ldexp(1, e-f.manBits)) - 1<<f.manBits
	return sign | uint8(e+f.bias)<<f.manBits | man
}

// decode is exact.
func (f fp8Format) decode(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	exp := int(b>>f.manBits) & (1<<f.expBits - 1)
	man := int(b) & (1<<f.manBits - 1)
	top := 1<<f.expBits - 1
	switch {
	case f.hasInf && exp == top && man == 0:
		return math.Inf(int(sign))
	case f.hasInf && exp == top, !f.hasInf && exp == top && man == 1<<f.manBits-1:
		return math.NaN()
	case exp == 0:
		return sign * math.Ldexp(float64(man), 1-f.bias-f.manBits)
	}
	return sign * math.Ldexp(float64(1<<f.manBits+man), exp-f.bias-f.manBits)
}

// FP8Eps is the unit roundoff (half an ulp of 1) of an 8-bit float type,
// 0 for the others: 2⁻⁴ for e4m3, 2⁻³ for e5m2.
func FP8Eps(d DType) float64 {
	if f, ok := fp8Formats[d]; ok {
		return math.Ldexp(1, -f.manBits-1)
	}
	return 0
}
