package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// MTLDataType values of the scalar types a function constant can have
// (Metal/MTLDataType.h).
const (
	MTLDataTypeFloat  uint64 = 3
	MTLDataTypeHalf   uint64 = 16
	MTLDataTypeInt    uint64 = 29
	MTLDataTypeUInt   uint64 = 33
	MTLDataTypeShort  uint64 = 37
	MTLDataTypeUShort uint64 = 41
	MTLDataTypeChar   uint64 = 45
	MTLDataTypeUChar  uint64 = 49
	MTLDataTypeBool   uint64 = 53
	MTLDataTypeLong   uint64 = 81
	MTLDataTypeULong  uint64 = 85
)

// constKinds maps each MSL spelling of a scalar type to its kind.
var constKinds = map[string]profiler.ConstKind{
	"bool": profiler.ConstBool, "char": profiler.ConstChar, "int8_t": profiler.ConstChar,
	"uchar": profiler.ConstUChar, "uint8_t": profiler.ConstUChar, "unsigned char": profiler.ConstUChar,
	"short": profiler.ConstShort, "int16_t": profiler.ConstShort,
	"ushort": profiler.ConstUShort, "uint16_t": profiler.ConstUShort, "unsigned short": profiler.ConstUShort,
	"int": profiler.ConstInt, "int32_t": profiler.ConstInt,
	"uint": profiler.ConstUInt, "uint32_t": profiler.ConstUInt, "unsigned": profiler.ConstUInt, "unsigned int": profiler.ConstUInt,
	"long": profiler.ConstLong, "int64_t": profiler.ConstLong,
	"ulong": profiler.ConstULong, "uint64_t": profiler.ConstULong, "size_t": profiler.ConstULong,
	"half": profiler.ConstHalf, "float": profiler.ConstFloat,
}

// constLayout is each kind's MTLDataType and size in bytes.
var constLayout = map[profiler.ConstKind]struct {
	dataType uint64
	size     int
}{
	profiler.ConstBool: {MTLDataTypeBool, 1}, profiler.ConstChar: {MTLDataTypeChar, 1}, profiler.ConstUChar: {MTLDataTypeUChar, 1},
	profiler.ConstShort: {MTLDataTypeShort, 2}, profiler.ConstUShort: {MTLDataTypeUShort, 2},
	profiler.ConstInt: {MTLDataTypeInt, 4}, profiler.ConstUInt: {MTLDataTypeUInt, 4},
	profiler.ConstLong: {MTLDataTypeLong, 8}, profiler.ConstULong: {MTLDataTypeULong, 8},
	profiler.ConstHalf: {MTLDataTypeHalf, 2}, profiler.ConstFloat: {MTLDataTypeFloat, 4},
}

// DeclaredConstant is one `constant T name [[function_constant(n)]];` of a
// Metal source.
type DeclaredConstant struct {
	Name  string
	Index int
	Type  string             // as written: "int", "uint32_t", "bool"
	Kind  profiler.ConstKind // Type's kind
	Start int                // byte offsets of the declaration, `constant` to `;`
	End   int
}

// functionConstantDecl matches a declaration; the index may be an
// expression with one level of parentheses (`FC_BIN + (1)`).
var functionConstantDecl = regexp.MustCompile(`\bconstant\s+((?:unsigned\s+)?[\w:]+)\s+(\w+)\s*\[\[\s*function_constant\s*\(((?:[^()]|\([^()]*\))*)\)\s*\]\]\s*;`)

// FunctionConstants finds the function constants src declares, in source
// order. Comments are skipped. The index is a number or an integer
// constant expression over src's object-like #defines, as ggml writes
// `[[function_constant(FC_BIN + 1)]]` (csrc.IntConst): pass the source
// with the headers that define them. An index that does not evaluate, a
// type mltop cannot set, or a name or index declared twice is an error.
func FunctionConstants(src string) ([]DeclaredConstant, error) {
	var out []DeclaredConstant
	names, indices := map[string]bool{}, map[int]string{}
	var macros map[string]string // read on the first index that is not a number
	for _, m := range functionConstantDecl.FindAllStringSubmatchIndex(csrc.BlankComments(src), -1) {
		typ := strings.Join(strings.Fields(src[m[2]:m[3]]), " ")
		name, idx := src[m[4]:m[5]], strings.TrimSpace(src[m[6]:m[7]])
		n, err := constantIndex(idx, src, &macros)
		if err != nil {
			return nil, fmt.Errorf("function constant %s: %w", name, err)
		}
		kind, ok := constKinds[strings.TrimPrefix(typ, "metal::")]
		if !ok {
			return nil, fmt.Errorf("function constant %s has type %s: mltop sets only bool, char, uchar, short, ushort, int, uint, long, ulong, half and float", name, typ)
		}
		if names[name] {
			return nil, fmt.Errorf("function constant %s is declared twice", name)
		}
		if other, dup := indices[n]; dup {
			return nil, fmt.Errorf("function constants %s and %s share index %d: give each its own", other, name, n)
		}
		names[name], indices[n] = true, name
		out = append(out, DeclaredConstant{Name: name, Index: n, Type: typ, Kind: kind, Start: m[0], End: m[1]})
	}
	return out, nil
}

// constantIndex evaluates a [[function_constant(idx)]] index: a number,
// or an expression over src's object-like macros (read into *macros once).
func constantIndex(idx, src string, macros *map[string]string) (int, error) {
	if n, err := strconv.Atoi(idx); err == nil && n >= 0 {
		return n, nil
	}
	if *macros == nil {
		*macros = csrc.ObjectMacros(csrc.Scan(src))
	}
	v, ok := csrc.IntConst(idx, *macros)
	switch {
	case !ok:
		return 0, fmt.Errorf("index %q is not an integer constant: write a number, or an expression of numbers and #defines the source (or a header it includes) gives one value", idx)
	case v < 0 || v > math.MaxInt32:
		return 0, fmt.Errorf("index %q is %d: an index is a number from 0 to %d", idx, v, math.MaxInt32)
	}
	return int(v), nil
}

// ConstantValue is a function constant ready for
// setConstantValue:type:atIndex:.
type ConstantValue struct {
	Name     string
	Index    int
	Kind     profiler.ConstKind
	DataType uint64 // MTLDataType
	Bytes    []byte // little-endian, the type's size
	Literal  string // the value as MSL source text ("true", "4", "0.5f")
}

// ResolveConstants matches the values a program sets to the constants its
// source declares and encodes each. A value for an undeclared name, a
// kind that disagrees with the declaration or a value out of the type's
// range is an error naming it; a declared constant left without a value
// is allowed (the kernel may test is_function_constant_defined), Metal
// itself reports one that is used.
func ResolveConstants(src string, cs []profiler.FunctionConstant) ([]ConstantValue, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	decls, err := FunctionConstants(src)
	if err != nil {
		return nil, err
	}
	var out []ConstantValue
	seen := map[int]bool{}
	for _, c := range cs {
		d, err := findDecl(decls, c)
		if err != nil {
			return nil, err
		}
		if c.Kind != "" && c.Kind != d.Kind {
			return nil, fmt.Errorf("function constant %s is declared %s but set as %s: set it as %s", d.Name, d.Type, c.Kind, d.Kind)
		}
		if seen[d.Index] {
			return nil, fmt.Errorf("function constant %s is set twice", d.Name)
		}
		seen[d.Index] = true
		v, err := encodeConstant(d, c)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func findDecl(decls []DeclaredConstant, c profiler.FunctionConstant) (DeclaredConstant, error) {
	var names []string
	for _, d := range decls {
		if c.Name != "" && d.Name == c.Name || c.Name == "" && d.Index == c.Index {
			return d, nil
		}
		names = append(names, fmt.Sprintf("%s(%d)", d.Name, d.Index))
	}
	what := c.Name
	if what == "" {
		what = fmt.Sprintf("index %d", c.Index)
	}
	if len(names) == 0 {
		return DeclaredConstant{}, fmt.Errorf("function constant %s is set but the source declares none: declare `constant T %s [[function_constant(n)]];`", what, c.Name)
	}
	return DeclaredConstant{}, fmt.Errorf("function constant %s is set but the source declares only %s", what, strings.Join(names, ", "))
}

// encodeConstant checks c's value against d's type and encodes it.
func encodeConstant(d DeclaredConstant, c profiler.FunctionConstant) (ConstantValue, error) {
	lay := constLayout[d.Kind]
	v := ConstantValue{Name: d.Name, Index: d.Index, Kind: d.Kind, DataType: lay.dataType, Bytes: make([]byte, 8)}
	bad := func(lo, hi string) error {
		return fmt.Errorf("function constant %s (%s) = %d is out of range [%s, %s]", d.Name, d.Type, c.I, lo, hi)
	}
	switch d.Kind {
	case profiler.ConstHalf, profiler.ConstFloat:
		f := float32(c.F)
		if d.Kind == profiler.ConstHalf {
			if math.Abs(c.F) > 65504 {
				return v, fmt.Errorf("function constant %s (half) = %g does not fit in a half", d.Name, c.F)
			}
			binary.LittleEndian.PutUint16(v.Bytes, float32ToHalf(f))
		} else {
			binary.LittleEndian.PutUint32(v.Bytes, math.Float32bits(f))
		}
		v.Literal = strconv.FormatFloat(float64(f), 'g', -1, 32)
		if !strings.ContainsAny(v.Literal, ".eEn") {
			v.Literal += ".0"
		}
		v.Literal += "f"
		if d.Kind == profiler.ConstHalf {
			v.Literal = "half(" + v.Literal + ")"
		}
	case profiler.ConstBool:
		if c.I != 0 && c.I != 1 {
			return v, fmt.Errorf("function constant %s (bool) = %d: a bool is 0 or 1", d.Name, c.I)
		}
		v.Bytes[0] = byte(c.I)
		v.Literal = strconv.FormatBool(c.I == 1)
	default:
		signed := d.Kind == profiler.ConstChar || d.Kind == profiler.ConstShort || d.Kind == profiler.ConstInt || d.Kind == profiler.ConstLong
		bits := uint(8 * lay.size)
		if signed && bits < 64 {
			lo, hi := -int64(1)<<(bits-1), int64(1)<<(bits-1)-1
			if c.I < lo || c.I > hi {
				return v, bad(strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10))
			}
		}
		if !signed && (c.I < 0 || bits < 64 && c.I >= int64(1)<<bits) {
			return v, bad("0", strconv.FormatUint(uint64(1)<<bits-1, 10))
		}
		binary.LittleEndian.PutUint64(v.Bytes, uint64(c.I))
		v.Literal = strconv.FormatInt(c.I, 10)
		if !signed {
			v.Literal += "u"
		}
	}
	v.Bytes = v.Bytes[:lay.size]
	return v, nil
}

// float32ToHalf rounds f to IEEE binary16, to nearest even.
func float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		h := man >> shift
		if rem := man & (1<<shift - 1); rem > 1<<(shift-1) || rem == 1<<(shift-1) && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | man>>13
	if rem := man & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// InlineFunctionConstants rewrites each declaration that vals set into a
// constexpr of its value, and makes is_function_constant_defined(name) a
// constant true or false per constant, so a compiler without function
// constants (the MSL emulation) builds the kernel as Metal would
// specialise it. A constant without a value becomes its type's zero with
// is_function_constant_defined false when the source tests it that way;
// otherwise it is an error (there is no undefined value to give it).
func InlineFunctionConstants(src string, vals []ConstantValue) (string, error) {
	decls, err := FunctionConstants(src)
	if err != nil {
		return "", err
	}
	byIndex := map[int]ConstantValue{}
	for _, v := range vals {
		byIndex[v.Index] = v
	}
	var b strings.Builder
	last := 0
	for _, d := range decls {
		v, ok := byIndex[d.Index]
		if !ok && !TestsDefined(src, d.Name) {
			return "", fmt.Errorf("function constant %s [[function_constant(%d)]] has no value: set it (manifest `constants:`)", d.Name, d.Index)
		}
		b.WriteString(src[last:d.Start])
		if ok {
			fmt.Fprintf(&b, "constexpr bool mltop_fc_defined_%s = true; constexpr %s %s = %s;", d.Name, d.Type, d.Name, v.Literal)
		} else {
			fmt.Fprintf(&b, "constexpr bool mltop_fc_defined_%s = false; constexpr %s %s = {};", d.Name, d.Type, d.Name)
		}
		last = d.End
	}
	b.WriteString(src[last:])
	return "#define is_function_constant_defined(name) mltop_fc_defined_##name\n" + b.String(), nil
}

// TestsDefined says whether src tests name with is_function_constant_defined
// (outside comments): such a constant may be left without a value.
func TestsDefined(src, name string) bool {
	re := regexp.MustCompile(`\bis_function_constant_defined\s*\(\s*` + regexp.QuoteMeta(name) + `\s*\)`)
	return re.MatchString(csrc.BlankComments(src))
}
