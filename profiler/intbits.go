package profiler

import (
	"encoding/binary"
	"math"
)

// Integer buffers and their host slots (BufferSpec.IntBits). The host
// holds a buffer's values as []float32; a float32 holds integers exactly
// only up to 2^24 in magnitude. A buffer with IntBits carries the 32-bit
// pattern of each integer in its slot instead, so that every value of an
// i32 or u32 buffer, and every value of an i64 (u64) buffer within the
// int32 (uint32) range, reaches the device and the reference exactly.

// BitsRange is the range of integers a slot of an IntBits buffer of type
// d holds: int32's for i32 and i64, uint32's for u32 and u64; ok is false
// for the other types, which carry no patterns.
func BitsRange(d DType) (lo, hi int64, ok bool) {
	switch d {
	case I32, I64:
		return math.MinInt32, math.MaxInt32, true
	case U32, U64:
		return 0, math.MaxUint32, true
	}
	return 0, 0, false
}

// Bits says whether b's slots are integer patterns: IntBits on a type that
// carries them, with an init that makes integers (not normal or uniform,
// whose draws stay floats).
func (b BufferSpec) Bits() bool {
	if !b.IntBits || b.Init == InitNormal || b.Init == InitUniform {
		return false
	}
	_, _, ok := BitsRange(b.Type)
	return ok
}

// IntValue is the integer that slot v of buffer b holds: its pattern when
// b carries patterns (Bits), else v as an integer of b's type (truncated
// toward zero and saturated, as Encode stores it).
func IntValue(b BufferSpec, v float32) int64 {
	if b.Bits() {
		u := math.Float32bits(v)
		if b.Type == I32 || b.Type == I64 {
			return int64(int32(u))
		}
		return int64(u)
	}
	lo, hi, ok := b.Type.IntRange()
	if !ok {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	x := saturate(float64(v), max(lo, math.MinInt64), min(hi, 0x1p63))
	if x >= 0x1p63 {
		return math.MaxInt64
	}
	return int64(x)
}

// Value is slot v of buffer b as a number: exact for every slot of a
// buffer that carries patterns (Bits), else v.
func Value(b BufferSpec, v float32) float64 {
	if b.Bits() {
		return float64(IntValue(b, v))
	}
	return float64(v)
}

// IntSlot is the slot that holds the integer v in buffer b: its pattern
// when b carries patterns (Bits; v saturated to BitsRange), else v
// rounded to b's type (Round).
func IntSlot(b BufferSpec, v int64) float32 {
	if b.Bits() {
		lo, hi, _ := BitsRange(b.Type)
		return math.Float32frombits(uint32(min(max(v, lo), hi)))
	}
	return b.Type.Round(float32(v))
}

// EncodeBuffer writes vals, slots of buffer b, into dst in b's storage
// format: a buffer that carries patterns (Bits) stores each slot's
// integer exactly (sign-extended for i64, zero-extended for u64); any
// other is b.Type.Encode.
func EncodeBuffer(b BufferSpec, dst []byte, vals []float32) {
	if !b.Bits() {
		b.Type.Encode(dst, vals)
		return
	}
	switch b.Type {
	case I32, U32:
		for i, v := range vals {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case I64, U64:
		for i, v := range vals {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(IntValue(b, v)))
		}
	}
}

// Recode is vals, slots of buffer from, as slots of buffer to (another
// plan's buffer that takes the same values: a check kernel's). vals
// itself when neither carries patterns (Bits); else each value is
// decoded (IntValue, or the float for a float buffer) and re-encoded
// (IntSlot, or the float value rounded to to's type). lost is the first
// element whose value to does not hold exactly (saturated or rounded),
// -1 when none.
func Recode(from, to BufferSpec, vals []float32) (out []float32, lost int) {
	lost = -1
	if !from.Bits() && !to.Bits() {
		return vals, lost
	}
	out = make([]float32, len(vals))
	for i, v := range vals {
		if x := IntValue(from, v); to.Bits() {
			out[i] = IntSlot(to, x)
			if IntValue(to, out[i]) != x && lost < 0 {
				lost = i
			}
		} else {
			out[i] = to.Type.Round(float32(x))
			if float64(out[i]) != float64(x) && lost < 0 {
				lost = i
			}
		}
	}
	return out, lost
}
