package profiler

import (
	"encoding/binary"
	"math"
	"testing"
)

// Every value of an i32 or u32 buffer, and of an i64 (u64) buffer within
// int32's (uint32's) range, travels exactly: from a data init, an arange
// and a randint, through its slot, into the bytes the device gets.
func TestIntBitsExact(t *testing.T) {
	const p24 = 1 << 24
	cases := []struct {
		dt   DType
		vals []int64
	}{
		{I32, []int64{0, 1, -1, p24 - 1, p24 + 1, -p24 - 1, -p24 + 1, math.MaxInt32, math.MinInt32, math.MaxInt32 - 1}},
		{U32, []int64{0, 1, p24 + 1, p24 - 1, math.MaxInt32, 1 << 31, math.MaxUint32, math.MaxUint32 - 1}},
		{I64, []int64{0, -1, p24 + 1, -p24 - 1, math.MaxInt32, math.MinInt32}},
		{U64, []int64{0, 1, p24 + 1, math.MaxInt32 + 1, math.MaxUint32}},
	}
	for _, c := range cases {
		b := BufferSpec{Name: "d", Type: c.dt, Elems: int64(len(c.vals)), Init: InitData, IntBits: true}
		for _, v := range c.vals {
			b.Data = append(b.Data, IntSlot(b, v))
		}
		vals := Fill(b, 1)
		raw := make([]byte, b.Bytes())
		EncodeBuffer(b, raw, vals)
		for i, want := range c.vals {
			if got := IntValue(b, vals[i]); got != want {
				t.Errorf("%s data: slot %d decodes to %d, want %d", c.dt, i, got, want)
			}
			if got := Value(b, vals[i]); got != float64(want) {
				t.Errorf("%s data: Value of slot %d = %v, want %d", c.dt, i, got, want)
			}
			var got int64
			switch c.dt {
			case I32:
				got = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
			case U32:
				got = int64(binary.LittleEndian.Uint32(raw[4*i:]))
			default: // i64 sign-extended, u64 zero-extended: both read as int64
				got = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
			if got != want {
				t.Errorf("%s data: element %d encodes as %d, want %d", c.dt, i, got, want)
			}
			// The same bytes decode back to the exact value at f64.
			out := make([]float64, 1)
			c.dt.DecodeF64(raw[i*c.dt.Size():], out)
			if out[0] != float64(want) {
				t.Errorf("%s: element %d decodes as %v, want %d", c.dt, i, out[0], want)
			}
		}
		// The same values as float32 would have lost their low bits:
		// what the patterns are for.
		lost := false
		for _, v := range c.vals {
			lost = lost || int64(float32(v)) != v
		}
		if !lost {
			t.Errorf("%s: no value of the table needs patterns", c.dt)
		}
	}
}

// A randint over the whole u32 and i32 ranges draws with integer
// arithmetic: values above 2^24 and odd ones among them, every one within
// [lo, hi), each the draw the float path makes where floats are exact.
func TestIntBitsRandint(t *testing.T) {
	for _, b := range []BufferSpec{
		{Name: "h", Type: U32, Elems: 4096, Init: InitInts, Lo: 0, Hi: 1 << 32, IntBits: true},
		{Name: "s", Type: I32, Elems: 4096, Init: InitInts, Lo: math.MinInt32, Hi: 1 << 31, IntBits: true},
		{Name: "o", Type: I64, Elems: 4096, Init: InitInts, Lo: 1 << 30, Hi: 1<<31 - 1, IntBits: true},
		{Name: "w", Type: U64, Elems: 4096, Init: InitInts, Lo: 1<<32 - 3, Hi: 1 << 32, IntBits: true},
	} {
		vals := Fill(b, 3)
		var big, odd, top bool
		for i, s := range vals {
			v := IntValue(b, s)
			if v < int64(b.Lo) || v >= int64(b.Hi) {
				t.Fatalf("%s %s: element %d = %d, outside [%v, %v)", b.Name, b.Type, i, v, b.Lo, b.Hi)
			}
			big = big || v > 1<<24 || v < -1<<24
			odd = odd || (v > 1<<24 && v%2 == 1)
			top = top || v == int64(b.Hi)-1
		}
		if !big || !odd {
			t.Errorf("%s %s: no odd value beyond 2^24 among %d draws", b.Name, b.Type, len(vals))
		}
		if b.Name == "w" && !top {
			t.Errorf("u64 randint(2^32-3, 2^32) never drew 2^32-1")
		}
	}
	// The draws are those of the float path where float32 is exact.
	small := BufferSpec{Name: "ids", Type: I32, Elems: 500, Init: InitInts, Lo: -7, Hi: 1000}
	bits := small
	bits.IntBits = true
	f, p := Fill(small, 5), Fill(bits, 5)
	for i := range f {
		if int64(f[i]) != IntValue(bits, p[i]) {
			t.Fatalf("element %d: %d with patterns, %v without", i, IntValue(bits, p[i]), f[i])
		}
	}
	// A window of the stream gives the same slots as the whole fill.
	b := BufferSpec{Name: "h", Type: U32, Elems: 33, Init: InitInts, Lo: 0, Hi: 1 << 32, IntBits: true}
	whole := Fill(b, 2)
	part := make([]float32, 10)
	FillAt(part, 20, SeedFor(2, b.Name), b)
	for i := range part {
		if math.Float32bits(part[i]) != math.Float32bits(whole[20+i]) {
			t.Fatalf("FillAt element %d = %#x, Fill's %#x", 20+i, math.Float32bits(part[i]), math.Float32bits(whole[20+i]))
		}
	}
}

// arange and ones fill patterns too; IntSlot saturates to what a slot
// holds; normal and uniform stay floats even with IntBits set.
func TestIntBitsInits(t *testing.T) {
	ar := BufferSpec{Name: "a", Type: U32, Elems: 5, Init: InitArange, IntBits: true}
	for i, s := range Fill(ar, 1) {
		if IntValue(ar, s) != int64(i) {
			t.Fatalf("arange element %d = %d", i, IntValue(ar, s))
		}
	}
	one := BufferSpec{Name: "o", Type: I64, Elems: 3, Init: InitOnes, IntBits: true}
	raw := make([]byte, one.Bytes())
	EncodeBuffer(one, raw, Fill(one, 1))
	if v := binary.LittleEndian.Uint64(raw[16:]); v != 1 {
		t.Fatalf("ones encodes as %d", v)
	}
	for _, c := range []struct {
		dt   DType
		v    int64
		want int64
	}{
		{I64, 1 << 40, math.MaxInt32}, {I64, -1 << 40, math.MinInt32}, {U64, -5, 0}, {U64, 1 << 33, math.MaxUint32}, {I32, 1 << 31, math.MaxInt32},
	} {
		b := BufferSpec{Type: c.dt, Init: InitData, IntBits: true}
		if got := IntValue(b, IntSlot(b, c.v)); got != c.want {
			t.Errorf("%s: IntSlot(%d) holds %d, want %d (saturated)", c.dt, c.v, got, c.want)
		}
	}
	u := BufferSpec{Name: "u", Type: I32, Elems: 4, Init: InitUniform, Lo: 0, Hi: 10, IntBits: true}
	for _, s := range Fill(u, 1) {
		if s != float32(int32(s)) || s < 0 || s >= 10 || IntValue(u, s) != int64(s) {
			t.Fatalf("uniform on an IntBits buffer gave %v (%#x): want its float draws", s, math.Float32bits(s))
		}
	}
	// The other types carry no patterns.
	if (BufferSpec{Type: I16, Init: InitInts, IntBits: true}).Bits() || (BufferSpec{Type: F32, Init: InitData, IntBits: true}).Bits() {
		t.Fatal("i16 or f32 carries patterns")
	}
}

// Recode carries values between a buffer with patterns and one without
// (a check kernel's), and between signednesses, and says where the other
// buffer does not hold a value.
func TestRecode(t *testing.T) {
	u := BufferSpec{Type: U32, Init: InitData, IntBits: true}
	i64 := BufferSpec{Type: I64, Init: InitData, IntBits: true}
	f := BufferSpec{Type: F32, Init: InitData}
	vals := []float32{IntSlot(u, 7), IntSlot(u, 1<<24+1), IntSlot(u, 1<<31)}
	got, lost := Recode(u, i64, vals)
	if IntValue(i64, got[0]) != 7 || IntValue(i64, got[1]) != 1<<24+1 || lost != 2 {
		t.Errorf("u32 → i64: %v, lost at %d (want 2: 2^31 is beyond int32)", got, lost)
	}
	if got, lost := Recode(u, f, vals); got[0] != 7 || lost != 1 {
		t.Errorf("u32 → f32: %v, lost at %d (want 1: 2^24+1 rounds)", got, lost)
	}
	back, lost := Recode(f, u, []float32{3, 1 << 31})
	if IntValue(u, back[0]) != 3 || IntValue(u, back[1]) != 1<<31 || lost != -1 {
		t.Errorf("f32 → u32: %v, lost at %d", back, lost)
	}
	plain := []float32{1, 2}
	if got, lost := Recode(f, f, plain); &got[0] != &plain[0] || lost != -1 {
		t.Error("Recode copied values between two buffers without patterns")
	}
}
