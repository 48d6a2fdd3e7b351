package profiler

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// scalarKinds are the kinds' C sizes (equal to their alignments).
var scalarKinds = map[ScalarKind]int{
	ScalarI8: 1, ScalarU8: 1, ScalarBool: 1, ScalarI16: 2, ScalarU16: 2,
	ScalarI32: 4, ScalarU32: 4, ScalarF32: 4, ScalarI64: 8, ScalarU64: 8, ScalarF64: 8,
	ScalarF16: 2, ScalarBF16: 2,
}

// scalarKindNames lists the kinds for error messages, in size order.
const scalarKindNames = "i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, bool"

// ParseScalarKind reads a kind's name ("u32", "f64", "bool"); it also
// takes the C names int, unsigned, float, double, size_t and the <stdint.h> ones.
func ParseScalarKind(s string) (ScalarKind, error) {
	k := ScalarKind(strings.TrimSpace(s))
	if _, ok := scalarKinds[k]; ok {
		return k, nil
	}
	if c, ok := cScalarNames[string(k)]; ok {
		return c, nil
	}
	return "", fmt.Errorf("scalar type %q is not one of %s", s, scalarKindNames)
}

var cScalarNames = map[string]ScalarKind{
	"int8_t": ScalarI8, "char": ScalarI8, "signed char": ScalarI8, "uint8_t": ScalarU8, "unsigned char": ScalarU8,
	"int16_t": ScalarI16, "short": ScalarI16, "uint16_t": ScalarU16, "unsigned short": ScalarU16,
	"int": ScalarI32, "int32_t": ScalarI32, "unsigned": ScalarU32, "unsigned int": ScalarU32, "uint32_t": ScalarU32,
	"int64_t": ScalarI64, "long long": ScalarI64, "uint64_t": ScalarU64, "unsigned long long": ScalarU64, "size_t": ScalarU64,
	"float": ScalarF32, "double": ScalarF64, "half": ScalarF16, "__half": ScalarF16,
	"__nv_bfloat16": ScalarBF16, "nv_bfloat16": ScalarBF16,
}

// kind is the scalar's kind, an empty one being i32 (as before kinds had
// names).
func (s Scalar) kind() ScalarKind {
	if s.Kind == "" {
		return ScalarI32
	}
	return s.Kind
}

// Size is the parameter's size in bytes in C (0 for an unknown kind).
func (s Scalar) Size() int { return scalarKinds[s.kind()] }

// Align is the parameter's C alignment: its size, for every kind.
func (s Scalar) Align() int { return s.Size() }

// Bytes is the value as C lays it out, little endian; bool is one byte, 0
// or 1. An unknown kind gives nil.
func (s Scalar) Bytes() []byte {
	v, ok := s.Slot()
	if !ok {
		return nil
	}
	return binary.LittleEndian.AppendUint64(nil, v)[:s.Size()]
}

// Slot is Bytes in the low bytes of a uint64, the rest zero (a CUDA
// parameter slot), without allocating; ok is false for an unknown kind.
func (s Scalar) Slot() (v uint64, ok bool) {
	switch s.kind() {
	case ScalarF32:
		v = uint64(math.Float32bits(float32(s.F)))
	case ScalarF64:
		v = math.Float64bits(s.F)
	case ScalarF16: // F is a binary16 value (ScalarOf rounds it): exact in float32
		v = uint64(F32ToF16(float32(s.F)))
	case ScalarBF16:
		v = uint64(F32ToBF16(float32(s.F)))
	case ScalarBool:
		if s.I != 0 {
			v = 1
		}
	default:
		v = uint64(s.I) // two's complement: the low bytes are the narrower value
	}
	n := s.Size()
	if n == 0 {
		return 0, false
	}
	if n < 8 {
		v &= 1<<(8*n) - 1
	}
	return v, true
}

// intRange is an integer kind's smallest and largest value (the largest
// as a uint64, for u64).
func intRange(k ScalarKind) (lo int64, hi uint64) {
	switch k {
	case ScalarI8:
		return math.MinInt8, math.MaxInt8
	case ScalarU8:
		return 0, math.MaxUint8
	case ScalarI16:
		return math.MinInt16, math.MaxInt16
	case ScalarU16:
		return 0, math.MaxUint16
	case ScalarI32:
		return math.MinInt32, math.MaxInt32
	case ScalarU32:
		return 0, math.MaxUint32
	case ScalarI64:
		return math.MinInt64, math.MaxInt64
	case ScalarBool:
		return 0, 1
	}
	return 0, math.MaxUint64 // u64
}

func isFloatKind(k ScalarKind) bool {
	return k == ScalarF32 || k == ScalarF64 || k == ScalarF16 || k == ScalarBF16
}

// ScalarOf makes a scalar of kind from v (an int, int64, uint64, float64 or
// bool), or says why v does not fit: out of the kind's range, a fraction
// for an integer kind, beyond float's range for f32.
func ScalarOf(kind ScalarKind, name string, v any) (Scalar, error) {
	if _, ok := scalarKinds[kind]; !ok {
		return Scalar{}, fmt.Errorf("scalar %s: type %q is not one of %s", name, kind, scalarKindNames)
	}
	switch x := v.(type) {
	case int:
		return scalarOfInt(kind, name, int64(x))
	case int64:
		return scalarOfInt(kind, name, x)
	case uint64:
		if x > math.MaxInt64 {
			if kind == ScalarU64 {
				return Scalar{Name: name, Kind: kind, I: int64(x)}, nil
			}
			if isFloatKind(kind) {
				return scalarOfFloat(kind, name, float64(x))
			}
			return Scalar{}, outOfRange(name, kind, fmt.Sprint(x))
		}
		return scalarOfInt(kind, name, int64(x))
	case float64:
		return scalarOfFloat(kind, name, x)
	case bool:
		i := int64(0)
		if x {
			i = 1
		}
		return scalarOfInt(kind, name, i)
	}
	return Scalar{}, fmt.Errorf("scalar %s: value %v of Go type %T: use an int, int64, uint64, float64 or bool", name, v, v)
}

func scalarOfInt(kind ScalarKind, name string, v int64) (Scalar, error) {
	if isFloatKind(kind) {
		return scalarOfFloat(kind, name, float64(v))
	}
	lo, hi := intRange(kind)
	if v < lo || (v > 0 && uint64(v) > hi) {
		return Scalar{}, outOfRange(name, kind, fmt.Sprint(v))
	}
	return Scalar{Name: name, Kind: kind, I: v}, nil
}

func scalarOfFloat(kind ScalarKind, name string, v float64) (Scalar, error) {
	switch {
	case kind == ScalarF64:
		return Scalar{Name: name, Kind: kind, F: v}, nil
	case kind == ScalarF32:
		if !math.IsInf(v, 0) && !math.IsNaN(v) && math.Abs(v) > math.MaxFloat32 {
			return Scalar{}, outOfRange(name, kind, fmt.Sprint(v))
		}
		return Scalar{Name: name, Kind: kind, F: v}, nil
	case kind == ScalarF16 || kind == ScalarBF16:
		r, ok := RoundHalf(kind, v)
		if !ok {
			return Scalar{}, outOfRange(name, kind, fmt.Sprint(v))
		}
		return Scalar{Name: name, Kind: kind, F: r}, nil
	}
	if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		return Scalar{}, fmt.Errorf("scalar %s: %v is not a whole number, and %s holds only whole numbers", name, v, kind)
	}
	if kind == ScalarU64 && v >= 0 && v < 1<<64 {
		return Scalar{Name: name, Kind: kind, I: int64(uint64(v))}, nil
	}
	if v < math.MinInt64 || v >= 1<<63 {
		return Scalar{}, outOfRange(name, kind, fmt.Sprint(v))
	}
	return scalarOfInt(kind, name, int64(v))
}

func outOfRange(name string, kind ScalarKind, v string) error {
	lo, hi := intRange(kind)
	limits := fmt.Sprintf("%d to %d", lo, hi)
	switch kind {
	case ScalarF32:
		limits = fmt.Sprintf("±%g", math.MaxFloat32)
	case ScalarF16, ScalarBF16:
		limits = fmt.Sprintf("±%.6g, after rounding to nearest even", halfFormats[kind].max)
	}
	return fmt.Errorf("scalar %s: %s does not fit in %s (%s)", name, v, kind, limits)
}

// halfFormat is a 16-bit float format: its significand's stored bits, the
// exponent of its smallest normal number and its largest finite value.
type halfFormat struct {
	mantBits, minExp int
	max              float64
}

var halfFormats = map[ScalarKind]halfFormat{
	ScalarF16:  {mantBits: 10, minExp: -14, max: 65504},
	ScalarBF16: {mantBits: 7, minExp: -126, max: float64(BF16ToF32(0x7f7f))},
}

// RoundHalf rounds v to the 16-bit float kind (f16 or bf16) to nearest
// even, straight from float64 (no double rounding through float32), with
// gradual underflow; ok is false when a finite v rounds beyond the
// kind's largest finite value. Inf and NaN pass through.
func RoundHalf(kind ScalarKind, v float64) (r float64, ok bool) {
	f, known := halfFormats[kind]
	if !known {
		return v, false
	}
	if math.IsInf(v, 0) || math.IsNaN(v) || v == 0 {
		return v, true
	}
	_, exp := math.Frexp(v) // |v| = frac·2^exp, frac in [0.5, 1): its leading bit is 2^(exp-1)
	quantum := math.Ldexp(1, max(exp-1, f.minExp)-f.mantBits)
	r = math.RoundToEven(v/quantum) * quantum
	return r, math.Abs(r) <= f.max
}
