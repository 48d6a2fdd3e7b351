package profiler

import (
	"bytes"
	"math"
	"testing"
)

// TestBufferDTypesRoundTrip encodes values of every buffer type and reads
// them back: each value is stored as Round gives it (exact values stay,
// others truncate or round and saturate at the type's range), and the
// first value's bytes are the C layout a kernel reads.
func TestBufferDTypesRoundTrip(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		d     DType
		size  int
		in    []float32
		first []byte // the bytes of in[0]
		back  []float64
	}{
		{I8, 1, []float32{-128, 127, 3.9, -3.9, 200, -300}, []byte{0x80}, []float64{-128, 127, 3, -3, 127, -128}},
		{U8, 1, []float32{255, 0, 7.5, -1, 256, nan}, []byte{0xff}, []float64{255, 0, 7, 0, 255, 0}},
		{I16, 2, []float32{-32768, 32767, -2, 40000, -40000}, []byte{0x00, 0x80}, []float64{-32768, 32767, -2, 32767, -32768}},
		{U16, 2, []float32{65535, 258, -3, 70000}, []byte{0xff, 0xff}, []float64{65535, 258, 0, 65535}},
		{I32, 4, []float32{-2, 16777216, 3e9, -3e9}, []byte{0xfe, 0xff, 0xff, 0xff}, []float64{-2, 16777216, math.MaxInt32, math.MinInt32}},
		{U32, 4, []float32{0x80000001 - 1, 16777216, -4, 5e9}, []byte{0x00, 0x00, 0x00, 0x80}, []float64{0x80000000, 16777216, 0, math.MaxUint32}},
		{I64, 8, []float32{-2, 1e19, -1e19}, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []float64{-2, math.MaxInt64, math.MinInt64}},
		{U64, 8, []float32{258, 2e19, -5}, []byte{2, 1, 0, 0, 0, 0, 0, 0}, []float64{258, math.MaxUint64, 0}},
		{F64, 8, []float32{1.5, -0.1, float32(math.Inf(-1))}, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, []float64{1.5, float64(float32(-0.1)), math.Inf(-1)}},
		// e4m3: 1.5 = 0 0111 100; 448 is the largest finite, beyond saturates, 2⁻⁹ the smallest subnormal; 1.0625 ties to even (1.0).
		{FP8E4M3, 1, []float32{1.5, 448, 1000, float32(math.Inf(1)), 0x1p-9, -0.1015625, 1.0625, 0x1p-11}, []byte{0x3c}, []float64{1.5, 448, 448, 448, 0x1p-9, -0.1015625, 1, 0}},
		// e5m2: 1.5 = 0 01111 10; 57344 is the largest finite; 2⁻¹⁶ the smallest subnormal; 1.125 ties to even (1.0).
		{FP8E5M2, 1, []float32{1.5, 57344, 1e6, -0x1p-16, 1.125, 3}, []byte{0x3e}, []float64{1.5, 57344, 57344, -0x1p-16, 1, 3}},
	}
	for _, c := range cases {
		if c.d.Size() != c.size {
			t.Errorf("%s: size %d, want %d", c.d, c.d.Size(), c.size)
		}
		buf := make([]byte, c.size*len(c.in))
		c.d.Encode(buf, c.in)
		if !bytes.Equal(buf[:c.size], c.first) {
			t.Errorf("%s: %g encodes as % x, want % x", c.d, c.in[0], buf[:c.size], c.first)
		}
		wide := make([]float64, len(c.in))
		c.d.DecodeF64(buf, wide)
		narrow := make([]float32, len(c.in))
		c.d.Decode(buf, narrow)
		for i := range c.in {
			if wide[i] != c.back[i] {
				t.Errorf("%s: %g stored as %g, want %g", c.d, c.in[i], wide[i], c.back[i])
			}
			if narrow[i] != float32(c.back[i]) || c.d.Round(c.in[i]) != float32(c.back[i]) {
				t.Errorf("%s: %g: Decode %g, Round %g, want %g", c.d, c.in[i], narrow[i], c.d.Round(c.in[i]), float32(c.back[i]))
			}
		}
	}
}

// TestFP8AllPatterns decodes every byte of both fp8 types and encodes the
// value again: each non-NaN pattern comes back as itself (−0 included),
// and the NaN patterns are exactly those the formats define.
func TestFP8AllPatterns(t *testing.T) {
	for _, d := range []DType{FP8E4M3, FP8E5M2} {
		nans := 0
		for b := range 256 {
			v := float32(fp8Formats[d].decode(uint8(b)))
			if math.IsNaN(float64(v)) {
				nans++
				continue
			}
			if math.IsInf(float64(v), 0) {
				continue // saturates: e5m2's ±Inf encodes as ±57344 (SATFINITE)
			}
			var got [1]byte
			d.Encode(got[:], []float32{v})
			if got[0] != uint8(b) {
				t.Errorf("%s: %#02x decodes to %g, which encodes as %#02x", d, b, v, got[0])
			}
		}
		want := map[DType]int{FP8E4M3: 2, FP8E5M2: 6}[d]
		if nans != want {
			t.Errorf("%s: %d NaN patterns, want %d", d, nans, want)
		}
	}
	var b [1]byte
	FP8E4M3.Encode(b[:], []float32{float32(math.NaN())})
	if !math.IsNaN(FP8E4M3.get(b[:])) {
		t.Errorf("NaN encodes as %#02x, not a NaN", b[0])
	}
}

// TestDTypeKinds pins which types are integers, their ranges, and that
// every buffer type parses under its own name and has a tolerance.
func TestDTypeKinds(t *testing.T) {
	ints := map[DType][2]float64{I8: {-128, 127}, U8: {0, 255}, I16: {-32768, 32767}, U16: {0, 65535},
		I32: {math.MinInt32, math.MaxInt32}, U32: {0, math.MaxUint32}, I64: {math.MinInt64, math.MaxInt64}, U64: {0, math.MaxUint64}}
	for _, d := range BufferDTypes {
		r, isInt := ints[d]
		lo, hi, ok := d.IntRange()
		if d.IsInt() != isInt || ok != isInt || lo != r[0] || hi != r[1] {
			t.Errorf("%s: IsInt %v, range %g..%g (%v); want %v %v", d, d.IsInt(), lo, hi, ok, isInt, r)
		}
		if got, err := ParseBufferDType(string(d)); err != nil || got != d {
			t.Errorf("%s does not parse as itself: %v %v", d, got, err)
		}
		tol, ok := DefaultTolerances[d]
		if !ok || isInt && tol != (Tolerance{}) {
			t.Errorf("%s: tolerance %+v (%v): integers compare exactly", d, tol, ok)
		}
	}
	for in, want := range map[string]DType{"int8": I8, "uint8": U8, "int16": I16, "uint16": U16, "uint32": U32, "float64": F64, "double": F64, "e4m3": FP8E4M3, "e5m2": FP8E5M2} {
		if got, err := ParseBufferDType(in); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %s", in, got, err, want)
		}
	}
}
