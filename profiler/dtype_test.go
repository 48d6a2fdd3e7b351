package profiler

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestBF16KnownPatterns(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
		name string
	}{
		{0x3f800000, 0x3f80, "one"},
		{0x3f808000, 0x3f80, "tie rounds to even (down)"},
		{0x3f818000, 0x3f82, "tie rounds to even (up)"},
		{0x3f808001, 0x3f81, "above half rounds up"},
		{0x7f800000, 0x7f80, "+inf"},
		{0xff800000, 0xff80, "-inf"},
		{0x7fc00000, 0x7fc0, "quiet nan"},
		{0x7f800001, 0x7fc0, "signalling nan stays nan"},
		{0xffc00000, 0xffc0, "negative nan"},
		{0x00000001, 0x0000, "smallest f32 subnormal rounds to zero"},
		{0x00400000, 0x0040, "f32 subnormal kept"},
		{0x7f7fffff, 0x7f80, "max f32 overflows to inf"},
		{0x80000000, 0x8000, "-0"},
	}
	for _, c := range cases {
		got := F32ToBF16(math.Float32frombits(c.in))
		if got != c.want {
			t.Errorf("%s: F32ToBF16(%#08x) = %#04x, want %#04x", c.name, c.in, got, c.want)
		}
	}
	if v := BF16ToF32(0x4049); v != 3.140625 {
		t.Errorf("BF16ToF32(0x4049) = %v", v)
	}
}

func TestF16KnownPatterns(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
		name string
	}{
		{1, 0x3c00, "one"},
		{-2, 0xc000, "minus two"},
		{65504, 0x7bff, "max f16"},
		{65520, 0x7c00, "rounds to inf"},
		{65519, 0x7bff, "just below rounds down"},
		{float32(math.Inf(1)), 0x7c00, "+inf"},
		{float32(math.Inf(-1)), 0xfc00, "-inf"},
		{6.103515625e-05, 0x0400, "min normal"},
		{5.960464477539063e-08, 0x0001, "min subnormal"},
		{2.98023223876953125e-08, 0x0000, "half of min subnormal ties to even zero"},
		{4.470348358154297e-08, 0x0001, "0.75 of min subnormal rounds up"},
		{8.940696716308594e-08, 0x0002, "1.5*2^-24 ties to even 2"},
		{1.0009765625, 0x3c01, "one ulp above one"},
		{1.00048828125, 0x3c00, "tie to even down"},
		{1.00146484375, 0x3c02, "tie to even up"},
		{0.00006097555, 0x03ff, "largest subnormal"},
	}
	for _, c := range cases {
		got := F32ToF16(c.in)
		if got != c.want {
			t.Errorf("%s: F32ToF16(%g) = %#04x, want %#04x", c.name, c.in, got, c.want)
		}
	}
	if h := F32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN -> %#04x, not a NaN", h)
	}
	if !math.IsNaN(float64(F16ToF32(0x7e00))) {
		t.Error("0x7e00 should decode to NaN")
	}
	if v := F16ToF32(0x0001); v != 5.960464477539063e-08 {
		t.Errorf("min subnormal decodes to %g", v)
	}
	if v := F16ToF32(0x8000); !math.Signbit(float64(v)) || v != 0 {
		t.Errorf("-0 decodes to %g", v)
	}
}

// Every f16 bit pattern must survive a decode/encode round trip.
func TestF16RoundTripAllPatterns(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		back := F32ToF16(f)
		if math.IsNaN(float64(f)) {
			if back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	vals := []float32{1.5, -3.25, 0, 1e-3}
	for _, d := range []DType{F32, F16, BF16} {
		buf := make([]byte, len(vals)*d.Size())
		d.Encode(buf, vals)
		out := make([]float32, len(vals))
		d.Decode(buf, out)
		for i := range vals {
			if out[i] != d.Round(vals[i]) {
				t.Errorf("%s: %g -> %g, want %g", d, vals[i], out[i], d.Round(vals[i]))
			}
		}
	}
	buf := make([]byte, 8)
	I32.Encode(buf, []float32{7, -2})
	out := make([]float32, 2)
	I32.Decode(buf, out)
	if out[0] != 7 || out[1] != -2 {
		t.Errorf("i32 round trip: %v", out)
	}
}

// TestParseDTypeAliases: the README's aliases and nothing else.
func TestParseDTypeAliases(t *testing.T) {
	for in, want := range map[string]DType{"f32": F32, "float32": F32, "fp32": F32, "f16": F16, "float16": F16, "fp16": F16, "half": F16, "bf16": BF16, "bfloat16": BF16} {
		if got, err := ParseDType(in); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"f64", "int8", "F16", "bf32", ""} {
		if _, err := ParseDType(in); err == nil || !strings.Contains(err.Error(), "use one of f32, f16, bf16") {
			t.Errorf("%q: %v, want refused with the list", in, err)
		}
	}
}

// The 64-bit integer buffer types: 8 bytes little endian, as C's long /
// int64_t and unsigned long / uint64_t lay them out; u64 never goes
// negative.
func TestInt64EncodeDecode(t *testing.T) {
	for _, c := range []struct {
		d     DType
		in    []float32
		bytes []byte // of the first value
		back  []float32
	}{
		{I64, []float32{-2, 16777216, 3.7}, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []float32{-2, 16777216, 3}},
		{U64, []float32{258, 16777216, -5}, []byte{2, 1, 0, 0, 0, 0, 0, 0}, []float32{258, 16777216, 0}},
	} {
		if c.d.Size() != 8 || !c.d.IsInt() {
			t.Fatalf("%s: size %d, IsInt %v", c.d, c.d.Size(), c.d.IsInt())
		}
		buf := make([]byte, 8*len(c.in))
		c.d.Encode(buf, c.in)
		if !bytes.Equal(buf[:8], c.bytes) {
			t.Errorf("%s: %g encodes as % x, want % x", c.d, c.in[0], buf[:8], c.bytes)
		}
		out := make([]float32, len(c.in))
		c.d.Decode(buf, out)
		for i := range out {
			if out[i] != c.back[i] || c.d.Round(c.in[i]) != c.back[i] {
				t.Errorf("%s: %g -> %g (Round %g), want %g", c.d, c.in[i], out[i], c.d.Round(c.in[i]), c.back[i])
			}
		}
	}
	for _, d := range []DType{F32, F16, BF16} {
		if d.IsInt() {
			t.Errorf("%s is not an integer type", d)
		}
	}
}

func TestParseBufferDType(t *testing.T) {
	for in, want := range map[string]DType{"i32": I32, "int32": I32, "i64": I64, "int64": I64, "u64": U64, "uint64": U64, "bf16": BF16, "f32": F32} {
		if got, err := ParseBufferDType(in); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseBufferDType("u128"); err == nil || !strings.Contains(err.Error(), `"u128"`) || !strings.Contains(err.Error(), "f32, f16, bf16, f64, fp8e4m3, fp8e5m2, i8, u8, i16, u16, i32, u32, i64, u64") {
		t.Errorf("u128: %v", err)
	}
	if _, err := ParseDType("i64"); err == nil {
		t.Error("a spec's dtype is a float type: ParseDType took i64")
	}
}
