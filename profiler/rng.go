package profiler

import "math"

// RNG is a small seeded generator (SplitMix64): fast, deterministic across
// platforms and Go versions, so inputs and row samples are reproducible.
type RNG struct{ s uint64 }

// NewRNG seeds a generator.
func NewRNG(seed uint64) *RNG { return &RNG{s: seed} }

// Uint64 returns the next value.
func (r *RNG) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Float64 is uniform in [0, 1).
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Normal is a standard normal deviate (Box-Muller).
func (r *RNG) Normal() float64 {
	u1 := r.Float64()
	for u1 == 0 {
		u1 = r.Float64()
	}
	u2 := r.Float64()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// SeedFor derives a per-buffer seed so that each input has its own stream
// and adding a buffer does not change the others.
func SeedFor(seed uint64, name string) uint64 {
	h := uint64(1469598103934665603)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return seed ^ h
}

// Fill generates a buffer's initial host values, rounded to its dtype;
// for a buffer that carries integer patterns (BufferSpec.Bits), their
// slots (IntSlot).
func Fill(b BufferSpec, seed uint64) []float32 {
	out := make([]float32, b.Elems)
	bits := b.Bits()
	switch b.Init {
	case InitNormal, InitUniform, InitInts:
		FillAt(out, 0, SeedFor(seed, b.Name), b)
		ApplyOutliers(b, seed, out)
	case InitOnes:
		one := IntSlot(b, 1)
		for i := range out {
			out[i] = one
		}
	case InitArange:
		for i := range out {
			if bits {
				out[i] = IntSlot(b, int64(i))
			} else {
				out[i] = b.Type.Round(float32(i))
			}
		}
	case InitData:
		for i := range min(len(out), len(b.Data)) {
			if bits {
				out[i] = b.Data[i] // slots already, copied bit for bit
			} else {
				out[i] = b.Type.Round(b.Data[i])
			}
		}
	case InitPoison:
		nan := float32(math.NaN())
		for i := range out {
			out[i] = nan
		}
	}
	return out
}

// FillAt writes elements first … first+len(dst)−1 of b, an init that
// draws from the buffer's stream (normal, uniform, ints; outliers not
// applied), seeded stream (SeedFor(seed, b.Name)): the same values as
// those elements of Fill's, so that a parallel fill's chunks agree with
// it. Uniform and ints take one draw per element. Ints are lo + a draw
// modulo the span hi − lo, in integer arithmetic; a buffer that carries
// integer patterns (BufferSpec.Bits) gets their slots.
func FillAt(dst []float32, first int, stream uint64, b BufferSpec) {
	switch b.Init {
	case InitNormal:
		FillNormalAt(dst, first, stream, b)
	case InitUniform:
		if b.Lo == b.Hi { // a constant (a user's normal(m, 0)), -inf included: lo + 0·u would be NaN there
			v := b.Type.Round(float32(b.Lo))
			for i := range dst {
				dst[i] = v
			}
			return
		}
		rng := RNG{s: stream + uint64(first)*splitMixIncrement}
		for i := range dst {
			dst[i] = b.Type.Round(float32(b.Lo + float64((b.Hi-b.Lo)*rng.Float64()))) // unfused: the same bits on every platform
		}
	case InitInts:
		rng := RNG{s: stream + uint64(first)*splitMixIncrement}
		if b.Bits() {
			lo := int64(b.Lo)
			span := uint64(int64(b.Hi) - lo) // Lo and Hi are integers within BitsRange: exact in float64
			if int64(b.Hi) <= lo {
				span = 1
			}
			for i := range dst {
				dst[i] = IntSlot(b, lo+int64(rng.Uint64()%span))
			}
			return
		}
		span := uint64(b.Hi - b.Lo)
		if span == 0 {
			span = 1
		}
		for i := range dst {
			dst[i] = float32(b.Lo + float64(rng.Uint64()%span))
			if !b.Type.IsInt() { // a float buffer's integers, rounded as its other inits are (beyond 2048 in f16)
				dst[i] = b.Type.Round(dst[i])
			}
		}
	}
}

// IsOutlier says whether element i of buffer b is one of its outliers: a
// hash of the seed, the buffer and the index below the fraction b.Outliers,
// so each element decides on its own (fills in parallel chunks agree).
func IsOutlier(b BufferSpec, seed uint64, i int) bool {
	if b.Outliers <= 0 {
		return false
	}
	r := RNG{s: SeedFor(seed, b.Name) ^ 0x5851f42d4c957f2d + uint64(i)*0x9e3779b97f4a7c15}
	return r.Float64() < b.Outliers
}

// ApplyOutliers multiplies b's outliers in vals (an InitNormal fill) by
// b.OutlierScale, rounded to the dtype again.
func ApplyOutliers(b BufferSpec, seed uint64, vals []float32) {
	if b.Outliers <= 0 || b.Init != InitNormal {
		return
	}
	for i := range vals {
		if IsOutlier(b, seed, i) {
			vals[i] = b.Type.Round(float32(float64(vals[i]) * b.OutlierScale))
		}
	}
}
