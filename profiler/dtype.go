package profiler

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is the element type of a kernel's tensors. Specs use F32, F16 and
// BF16; the other types are a buffer's fixed type: integers (index
// buffers, images, quantized values, bit masks), F64 and the two 8-bit
// floats. Values travel as float32 on the host, so integers are exact up
// to 2^24 in magnitude, unless the buffer carries their 32-bit patterns
// instead (BufferSpec.IntBits: every i32 and u32 value); an F64 output is
// decoded at f64 precision for its check (DecodeF64).
type DType string

const (
	F32     DType = "f32"
	F16     DType = "f16"
	BF16    DType = "bf16"
	F64     DType = "f64"
	FP8E4M3 DType = "fp8e4m3" // __nv_fp8_e4m3: 4 exponent bits, 3 mantissa bits, max 448, no Inf
	FP8E5M2 DType = "fp8e5m2" // __nv_fp8_e5m2: 5 exponent bits, 2 mantissa bits, max 57344
	I8      DType = "i8"
	U8      DType = "u8"
	I16     DType = "i16"
	U16     DType = "u16"
	I32     DType = "i32"
	U32     DType = "u32"
	I64     DType = "i64"
	U64     DType = "u64"
)

// BufferDTypes are every type a buffer may have, in the order messages
// list them.
var BufferDTypes = []DType{F32, F16, BF16, F64, FP8E4M3, FP8E5M2, I8, U8, I16, U16, I32, U32, I64, U64}

// IsInt says whether d is an integer type.
func (d DType) IsInt() bool {
	switch d {
	case I8, U8, I16, U16, I32, U32, I64, U64:
		return true
	}
	return false
}

// IsFP8 says whether d is one of the 8-bit float types.
func (d DType) IsFP8() bool { return d == FP8E4M3 || d == FP8E5M2 }

// IntRange is the smallest and largest value of an integer type; ok is
// false for the float types.
func (d DType) IntRange() (lo, hi float64, ok bool) {
	switch d {
	case I8:
		return math.MinInt8, math.MaxInt8, true
	case U8:
		return 0, math.MaxUint8, true
	case I16:
		return math.MinInt16, math.MaxInt16, true
	case U16:
		return 0, math.MaxUint16, true
	case I32:
		return math.MinInt32, math.MaxInt32, true
	case U32:
		return 0, math.MaxUint32, true
	case I64:
		return math.MinInt64, math.MaxInt64, true
	case U64:
		return 0, math.MaxUint64, true
	}
	return 0, 0, false
}

// bufferDTypeNames are the spellings of the buffer types beyond
// ParseDType's.
var bufferDTypeNames = map[string]DType{
	"f64": F64, "float64": F64, "fp64": F64, "double": F64,
	"fp8e4m3": FP8E4M3, "e4m3": FP8E4M3, "float8_e4m3": FP8E4M3, "float8_e4m3fn": FP8E4M3,
	"fp8e5m2": FP8E5M2, "e5m2": FP8E5M2, "float8_e5m2": FP8E5M2,
	"i8": I8, "int8": I8, "u8": U8, "uint8": U8,
	"i16": I16, "int16": I16, "u16": U16, "uint16": U16,
	"i32": I32, "int32": I32, "u32": U32, "uint32": U32,
	"i64": I64, "int64": I64, "u64": U64, "uint64": U64,
}

// ParseBufferDType accepts a buffer's fixed element type: any of
// BufferDTypes, by its name or a long spelling (int8, uint8, float64,
// e4m3, …).
func ParseBufferDType(s string) (DType, error) {
	if d, ok := bufferDTypeNames[s]; ok {
		return d, nil
	}
	if d, err := ParseDType(s); err == nil {
		return d, nil
	}
	return "", fmt.Errorf("unknown dtype %q: use one of %s", s, JoinDTypes(BufferDTypes))
}

// FloatDTypes are the dtypes a Spec may ask for.
var FloatDTypes = []DType{F32, F16, BF16}

// ParseDType accepts the spellings users type.
func ParseDType(s string) (DType, error) {
	switch s {
	case "f32", "float32", "fp32":
		return F32, nil
	case "f16", "float16", "fp16", "half":
		return F16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	}
	return "", fmt.Errorf("unknown dtype %q: use one of f32, f16, bf16", s)
}

// Size is the element size in bytes.
func (d DType) Size() int {
	switch d {
	case I8, U8, FP8E4M3, FP8E5M2:
		return 1
	case F16, BF16, I16, U16:
		return 2
	case I64, U64, F64:
		return 8
	default:
		return 4
	}
}

// Round returns x rounded to the nearest value representable in d
// (round-to-nearest-even) as a float32; integer types truncate toward
// zero and saturate at their range, the 8-bit floats saturate at their
// largest finite value (as CUDA's __nv_fp8 constructors do).
func (d DType) Round(x float32) float32 {
	switch d {
	case F16:
		return F16ToF32(F32ToF16(x))
	case BF16:
		return BF16ToF32(F32ToBF16(x))
	case FP8E4M3, FP8E5M2:
		return float32(fp8Formats[d].decode(fp8Formats[d].encode(float64(x))))
	}
	if lo, hi, ok := d.IntRange(); ok {
		return float32(saturate(float64(x), lo, hi))
	}
	return x
}

// saturate is x truncated toward zero and held within [lo, hi] (NaN
// gives 0), exactly as the integer encoders store it.
func saturate(x, lo, hi float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x <= lo:
		return lo
	case x >= hi:
		return hi
	}
	return math.Trunc(x)
}

// F32ToBF16 rounds to nearest even; NaN stays a quiet NaN with its sign.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign, force quiet bit
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 is exact.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToF16 converts to IEEE binary16 with round-to-nearest-even, gradual
// underflow to subnormals, overflow to Inf, and NaN preserved as quiet NaN.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign // rounds to zero
		}
		m := man | 0x800000 // implicit bit
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rest := m & (1<<shift - 1)
		r := m >> shift
		if rest > half || (rest == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to Inf: that is correct rounding
	}
	return sign | uint16(r)
}

// F16ToF32 is exact.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = man * 2^-24
		v := float32(man) * float32(1.0/16777216.0)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// Encode writes vals into dst in d's storage format (little endian).
// Integer types store Round's value (truncated, saturated).
func (d DType) Encode(dst []byte, vals []float32) {
	switch d {
	case F16:
		for i, v := range vals {
			h := F32ToF16(v)
			dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
		}
	case BF16:
		for i, v := range vals {
			h := F32ToBF16(v)
			dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
		}
	case F32:
		for i, v := range vals {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	default:
		n := d.Size()
		for i, v := range vals {
			d.put(dst[n*i:n*i+n], float64(v))
		}
	}
}

// put stores one element of the types Encode has no loop of its own for.
func (d DType) put(dst []byte, v float64) {
	if lo, hi, ok := d.IntRange(); ok {
		v = saturate(v, lo, hi)
	}
	switch d {
	case F64:
		binary.LittleEndian.PutUint64(dst, math.Float64bits(v))
	case FP8E4M3, FP8E5M2:
		dst[0] = fp8Formats[d].encode(v)
	case I8:
		dst[0] = byte(int8(v))
	case U8:
		dst[0] = byte(v)
	case I16:
		binary.LittleEndian.PutUint16(dst, uint16(int16(v)))
	case U16:
		binary.LittleEndian.PutUint16(dst, uint16(v))
	case I32:
		binary.LittleEndian.PutUint32(dst, uint32(int32(v)))
	case U32:
		binary.LittleEndian.PutUint32(dst, uint32(v))
	case I64:
		u := uint64(math.MaxInt64) // v is 2^63 at most: saturated
		if v < 0x1p63 {
			u = uint64(int64(v))
		}
		binary.LittleEndian.PutUint64(dst, u)
	case U64:
		u := uint64(math.MaxUint64)
		if v < 0x1p64 {
			u = uint64(v)
		}
		binary.LittleEndian.PutUint64(dst, u)
	}
}

// get reads one element of any type as a float64 (exact for every type
// but integers beyond 2^53).
func (d DType) get(src []byte) float64 {
	switch d {
	case F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(src)))
	case F16:
		return float64(F16ToF32(binary.LittleEndian.Uint16(src)))
	case BF16:
		return float64(BF16ToF32(binary.LittleEndian.Uint16(src)))
	case F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(src))
	case FP8E4M3, FP8E5M2:
		return fp8Formats[d].decode(src[0])
	case I8:
		return float64(int8(src[0]))
	case U8:
		return float64(src[0])
	case I16:
		return float64(int16(binary.LittleEndian.Uint16(src)))
	case U16:
		return float64(binary.LittleEndian.Uint16(src))
	case I32:
		return float64(int32(binary.LittleEndian.Uint32(src)))
	case U32:
		return float64(binary.LittleEndian.Uint32(src))
	case I64:
		return float64(int64(binary.LittleEndian.Uint64(src)))
	case U64:
		return float64(binary.LittleEndian.Uint64(src))
	}
	return math.NaN()
}

// Decode reads len(out) elements of d from src as float32 (an F64 loses
// its low bits: a check decodes it with DecodeF64).
func (d DType) Decode(src []byte, out []float32) {
	switch d {
	case F16:
		for i := range out {
			out[i] = F16ToF32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
	case BF16:
		for i := range out {
			out[i] = BF16ToF32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	default:
		n := d.Size()
		for i := range out {
			out[i] = float32(d.get(src[n*i:]))
		}
	}
}

// DecodeF64 reads len(out) elements of d from src at float64 precision.
func (d DType) DecodeF64(src []byte, out []float64) {
	n := d.Size()
	for i := range out {
		out[i] = d.get(src[n*i:])
	}
}

// Wide says whether float32 cannot hold every value of d exactly, so that
// a check of d's outputs decodes them with DecodeF64: f64, and the
// integers wider than 16 bits.
func (d DType) Wide() bool {
	switch d {
	case F64, I32, U32, I64, U64:
		return true
	}
	return false
}
