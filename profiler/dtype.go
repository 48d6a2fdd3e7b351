package profiler

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is the element type of a kernel's tensors. Specs use F32, F16 and
// BF16; the integer types exist for index buffers (token ids, embedding
// indices, targets): I32 for int, I64 for long / int64_t, U64 for
// unsigned long / uint64_t / size_t. Their values travel as float32 on
// the host, so they are exact up to 2^24 in magnitude.
type DType string

const (
	F32  DType = "f32"
	F16  DType = "f16"
	BF16 DType = "bf16"
	I32  DType = "i32"
	I64  DType = "i64"
	U64  DType = "u64"
)

// IsInt says whether d is an integer type (an index buffer's).
func (d DType) IsInt() bool { return d == I32 || d == I64 || d == U64 }

// ParseBufferDType accepts a buffer's fixed element type: a float dtype
// or an integer one (i32, i64, u64 and their long spellings).
func ParseBufferDType(s string) (DType, error) {
	switch s {
	case "i32", "int32":
		return I32, nil
	case "i64", "int64":
		return I64, nil
	case "u64", "uint64":
		return U64, nil
	}
	if d, err := ParseDType(s); err == nil {
		return d, nil
	}
	return "", fmt.Errorf("unknown dtype %q: use one of f32, f16, bf16, i32, i64, u64", s)
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
	case F16, BF16:
		return 2
	case I64, U64:
		return 8
	default:
		return 4
	}
}

// Round returns x rounded to the nearest value representable in d
// (round-to-nearest-even), as a float32.
func (d DType) Round(x float32) float32 {
	switch d {
	case F16:
		return F16ToF32(F32ToF16(x))
	case BF16:
		return BF16ToF32(F32ToBF16(x))
	case I32:
		return float32(int32(x))
	case I64:
		return float32(int64(x))
	case U64:
		return float32(uint64(max(x, 0)))
	}
	return x
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
	case I32:
		for i, v := range vals {
			u := uint32(int32(v))
			dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
	case I64:
		for i, v := range vals {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(int64(v)))
		}
	case U64:
		for i, v := range vals {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(max(v, 0)))
		}
	default:
		for i, v := range vals {
			u := math.Float32bits(v)
			dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
	}
}

// Decode reads n elements of d from src.
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
	case I32:
		for i := range out {
			out[i] = float32(int32(uint32(src[4*i]) | uint32(src[4*i+1])<<8 | uint32(src[4*i+2])<<16 | uint32(src[4*i+3])<<24))
		}
	case I64:
		for i := range out {
			out[i] = float32(int64(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case U64:
		for i := range out {
			out[i] = float32(binary.LittleEndian.Uint64(src[8*i:]))
		}
	default:
		for i := range out {
			out[i] = math.Float32frombits(uint32(src[4*i]) | uint32(src[4*i+1])<<8 | uint32(src[4*i+2])<<16 | uint32(src[4*i+3])<<24)
		}
	}
}
