package profiler

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

func TestScalarBytes(t *testing.T) {
	for _, c := range []struct {
		s    Scalar
		want []byte
	}{
		{I32Param("n", -2), []byte{0xfe, 0xff, 0xff, 0xff}},
		{F32Param("a", 1), []byte{0, 0, 0x80, 0x3f}},
		{Scalar{Kind: ScalarF64, F: 1}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{Scalar{Kind: ScalarI8, I: -1}, []byte{0xff}},
		{Scalar{Kind: ScalarU8, I: 200}, []byte{200}},
		{Scalar{Kind: ScalarI16, I: -2}, []byte{0xfe, 0xff}},
		{Scalar{Kind: ScalarU16, I: 0x1234}, []byte{0x34, 0x12}},
		{Scalar{Kind: ScalarU32, I: 0xdeadbeef}, []byte{0xef, 0xbe, 0xad, 0xde}},
		{Scalar{Kind: ScalarI64, I: -2}, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{Scalar{Kind: ScalarU64, I: -1}, bytes.Repeat([]byte{0xff}, 8)},
		{Scalar{Kind: ScalarBool, I: 1}, []byte{1}},
		{Scalar{Kind: ScalarBool}, []byte{0}},
		{Scalar{I: 7}, []byte{7, 0, 0, 0}}, // no kind: i32, as before
		{Scalar{Kind: ScalarF16, F: 2}, []byte{0x00, 0x40}},
		{Scalar{Kind: ScalarBF16, F: -2}, []byte{0x00, 0xc0}},
		{Scalar{Kind: "f8"}, nil},
	} {
		got := c.s.Bytes()
		if !bytes.Equal(got, c.want) || c.s.Size() != len(c.want) || c.s.Align() != len(c.want) {
			t.Errorf("%s %+v: bytes %x size %d align %d, want %x", c.s.Kind, c.s, got, c.s.Size(), c.s.Align(), c.want)
		}
	}
}

func TestScalarOf(t *testing.T) {
	ok := []struct {
		kind ScalarKind
		v    any
		want []byte
	}{
		{ScalarI32, 5, []byte{5, 0, 0, 0}},
		{ScalarI32, int64(math.MinInt32), []byte{0, 0, 0, 0x80}},
		{ScalarU32, 4e9, []byte{0x00, 0x28, 0x6b, 0xee}},
		{ScalarU64, uint64(math.MaxUint64), bytes.Repeat([]byte{0xff}, 8)},
		{ScalarU64, 1.8e19, []byte{0x00, 0x00, 0x08, 0xc5, 0xa1, 0xd8, 0xcc, 0xf9}},
		{ScalarI8, -128, []byte{0x80}},
		{ScalarU8, 255.0, []byte{0xff}},
		{ScalarF32, 3, []byte{0, 0, 0x40, 0x40}},
		{ScalarF32, math.Inf(1), []byte{0, 0, 0x80, 0x7f}},
		{ScalarF64, 1e300, nil},
		{ScalarBool, true, []byte{1}},
		{ScalarBool, 0, []byte{0}},
	}
	for _, c := range ok {
		s, err := ScalarOf(c.kind, "x", c.v)
		if err != nil {
			t.Errorf("ScalarOf(%s, %v): %v", c.kind, c.v, err)
			continue
		}
		if c.want != nil && !bytes.Equal(s.Bytes(), c.want) {
			t.Errorf("ScalarOf(%s, %v) bytes %x, want %x", c.kind, c.v, s.Bytes(), c.want)
		}
	}
	bad := []struct {
		kind ScalarKind
		v    any
		want string
	}{
		{ScalarI32, 3e9, "scalar n: 3000000000 does not fit in i32"},
		{ScalarI32, int64(1) << 31, "does not fit in i32"},
		{ScalarU32, -1, "scalar n: -1 does not fit in u32 (0 to 4294967295)"},
		{ScalarU64, -1.0, "does not fit in u64"},
		{ScalarF32, 1e39, "scalar n: 1e+39 does not fit in f32"},
		{ScalarI8, 128, "does not fit in i8 (-128 to 127)"},
		{ScalarU16, 70000, "does not fit in u16"},
		{ScalarI64, uint64(math.MaxUint64), "does not fit in i64"},
		{ScalarI64, 1e19, "does not fit in i64"},
		{ScalarI32, 1.5, "1.5 is not a whole number"},
		{ScalarI32, math.NaN(), "not a whole number"},
		{ScalarBool, 2, "does not fit in bool"},
		{"f8", 1.0, `type "f8" is not one of`},
		{ScalarI32, "7", "Go type string"},
	}
	for _, c := range bad {
		s, err := ScalarOf(c.kind, "n", c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ScalarOf(%s, %v) = %+v, %v; want an error with %q", c.kind, c.v, s, err, c.want)
		}
	}
}

func TestParseScalarKind(t *testing.T) {
	for in, want := range map[string]ScalarKind{"u32": ScalarU32, " f64 ": ScalarF64, "bool": ScalarBool, "unsigned int": ScalarU32, "size_t": ScalarU64, "double": ScalarF64} {
		if got, err := ParseScalarKind(in); err != nil || got != want {
			t.Errorf("ParseScalarKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseScalarKind("half2"); err == nil || !strings.Contains(err.Error(), `"half2"`) {
		t.Errorf("half2: %v", err)
	}
}

// TestScalarOfHalf: 16-bit float scalars are rounded to nearest even
// straight from float64, their F is the rounded value, and a value beyond
// the type's range is refused naming it.
func TestScalarOfHalf(t *testing.T) {
	for _, c := range []struct {
		kind ScalarKind
		v    any
		bits uint16
		f    float64
	}{
		{ScalarF16, 2.0, 0x4000, 2},
		{ScalarF16, 2, 0x4000, 2},
		{ScalarF16, 0.1, 0x2e66, 0.0999755859375},
		{ScalarF16, 65504.0, 0x7bff, 65504},
		{ScalarF16, 65519.0, 0x7bff, 65504},
		{ScalarF16, 1 + 0x1p-11, 0x3c00, 1},                     // a tie: to even
		{ScalarF16, 1 + 3*0x1p-11, 0x3c02, 1 + 0x1p-9},          // a tie: to even, upward
		{ScalarF16, 1 + 0x1p-11 + 0x1p-40, 0x3c01, 1 + 0x1p-10}, // through float32 this would tie and round down
		{ScalarF16, 0x1p-24, 0x0001, 0x1p-24},                   // the smallest subnormal
		{ScalarF16, 0x1p-25, 0x0000, 0},                         // a tie with zero
		{ScalarF16, 3 * 0x1p-25, 0x0002, 0x1p-23},
		{ScalarF16, math.Copysign(0, -1), 0x8000, 0},
		{ScalarF16, math.Inf(-1), 0xfc00, math.Inf(-1)},
		{ScalarBF16, 2.0, 0x4000, 2},
		{ScalarBF16, 1.0 / 3, 0x3eab, 0.333984375},
		{ScalarBF16, 257, 0x4380, 256},
		{ScalarBF16, 1e38, 0x7e96, float64(BF16ToF32(0x7e96))},
	} {
		s, err := ScalarOf(c.kind, "a", c.v)
		if err != nil {
			t.Errorf("ScalarOf(%s, %v): %v", c.kind, c.v, err)
			continue
		}
		want := []byte{byte(c.bits), byte(c.bits >> 8)}
		if !bytes.Equal(s.Bytes(), want) || s.F != c.f || s.Size() != 2 {
			t.Errorf("ScalarOf(%s, %v): bytes %x F %v size %d, want %x F %v", c.kind, c.v, s.Bytes(), s.F, s.Size(), want, c.f)
		}
	}
	for _, c := range []struct {
		kind ScalarKind
		v    any
		want string
	}{
		{ScalarF16, 65520.0, "scalar a: 65520 does not fit in f16 (±65504, after rounding to nearest even)"},
		{ScalarF16, -70000, "scalar a: -70000 does not fit in f16"},
		{ScalarF16, uint64(math.MaxUint64), "does not fit in f16"},
		{ScalarBF16, 1e39, "scalar a: 1e+39 does not fit in bf16 (±3.38953e+38"},
	} {
		s, err := ScalarOf(c.kind, "a", c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ScalarOf(%s, %v) = %+v, %v; want an error with %q", c.kind, c.v, s, err, c.want)
		}
	}
	for _, name := range []string{"half", "__half", "__nv_bfloat16", "nv_bfloat16", "f16", "bf16"} {
		if _, err := ParseScalarKind(name); err != nil {
			t.Errorf("ParseScalarKind(%q): %v", name, err)
		}
	}
}

// Slot holds Bytes in its low bytes and zeros above them, for every kind
// (a negative narrow integer is not sign-extended into the slot).
func TestScalarSlotIsBytes(t *testing.T) {
	for k := range scalarKinds {
		for _, s := range []Scalar{{Kind: k, I: -3, F: -3}, {Kind: k, I: 1, F: 0.5}} {
			v, ok := s.Slot()
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v)
			if want := s.Bytes(); !ok || string(b[:len(want)]) != string(want) || strings.Trim(string(b[len(want):]), "\x00") != "" {
				t.Errorf("%s %+v: slot %#x (%v), bytes % x", k, s, v, ok, want)
			}
		}
	}
	if _, ok := (Scalar{Kind: "f8"}).Slot(); ok {
		t.Error("an unknown kind has a slot")
	}
}
