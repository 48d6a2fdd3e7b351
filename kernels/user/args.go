package user

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// uarg is one of a dispatch's args: a buffer's name, a scalar
// expression, or an array value (arrayargs.go).
type uarg struct {
	text   string          // as written
	buf    string          // a buffer's name; "" for an expression
	p      *expr.Program   // the expression, for a scalar
	elems  []*expr.Program // an array value's expressions
	fields []structValue   // a struct value's fields (args_struct.go)
}

// uparam binds one kernel parameter to one of a dispatch's args.
type uparam struct {
	arg   int        // index in udisp.args
	param csrc.Param // the parameter as the source declares it
	// kind is a scalar's C type; "" for a scalar of the dtype's own type
	// (T alpha), which is known per spec.
	kind profiler.ScalarKind
	// elem is the element type the parameter's pointee requires of its
	// buffer ("" when any will do: T*, a template parameter, void*, …).
	elem profiler.DType
	st   *structBinding // a by-value struct parameter (args_struct.go)
	acc  *accessorParam // a PyTorch packed accessor a buffer fills (torch_accessor.go)
}

// ubinding is how a dispatch's args meet one source's entry, in the
// kernel's parameter order (CUDA) or buffers then the scalar struct
// (Metal).
type ubinding struct {
	sig         csrc.Signature
	file        string // the file that defines the entry: the source or one of its local headers
	params      []uparam
	interleaved bool // a scalar comes before a buffer: the dispatch carries its Order
	// overloads are, for an entry naming overloads that differ in their
	// pointer types, each dtype's (args_overloads.go); noOverload says why
	// a dtype has none.
	overloads  map[profiler.DType]ubinding
	noOverload map[profiler.DType]string
}

// cScalarKinds map C scalar types, as the signature writes them without
// qualifiers, to the kind mltop passes (LP64: long is 64-bit).
var cScalarKinds = map[string]profiler.ScalarKind{
	"char": profiler.ScalarI8, "signed char": profiler.ScalarI8, "int8_t": profiler.ScalarI8,
	"unsigned char": profiler.ScalarU8, "uint8_t": profiler.ScalarU8, "uchar": profiler.ScalarU8,
	"short": profiler.ScalarI16, "short int": profiler.ScalarI16, "signed short": profiler.ScalarI16, "int16_t": profiler.ScalarI16,
	"unsigned short": profiler.ScalarU16, "unsigned short int": profiler.ScalarU16, "uint16_t": profiler.ScalarU16, "ushort": profiler.ScalarU16,
	"int": profiler.ScalarI32, "signed": profiler.ScalarI32, "signed int": profiler.ScalarI32, "int32_t": profiler.ScalarI32,
	"unsigned": profiler.ScalarU32, "unsigned int": profiler.ScalarU32, "uint32_t": profiler.ScalarU32, "uint": profiler.ScalarU32,
	"long": profiler.ScalarI64, "long int": profiler.ScalarI64, "long long": profiler.ScalarI64, "long long int": profiler.ScalarI64,
	"int64_t": profiler.ScalarI64, "ptrdiff_t": profiler.ScalarI64, "ssize_t": profiler.ScalarI64,
	"unsigned long": profiler.ScalarU64, "unsigned long int": profiler.ScalarU64, "unsigned long long": profiler.ScalarU64,
	"unsigned long long int": profiler.ScalarU64, "uint64_t": profiler.ScalarU64, "size_t": profiler.ScalarU64,
	"ulong": profiler.ScalarU64, // Metal's (MLX's rbitsc takes constant const ulong& bytes_per_key)
	"bool":  profiler.ScalarBool, "float": profiler.ScalarF32, "double": profiler.ScalarF64,
	// 16-bit floats: passed as their bits (CUDA's __half is 2 bytes, aligned
	// 2; Metal's half and bfloat likewise).
	"half": profiler.ScalarF16, "__half": profiler.ScalarF16,
	"__nv_bfloat16": profiler.ScalarBF16, "nv_bfloat16": profiler.ScalarBF16, "bfloat": profiler.ScalarBF16, "bfloat16_t": profiler.ScalarBF16,
	// PyTorch's (the torch stub's classes hold the same 2 bytes; prepare_torchhalf.go)
	"c10::Half": profiler.ScalarF16, "at::Half": profiler.ScalarF16, "c10::BFloat16": profiler.ScalarBF16, "at::BFloat16": profiler.ScalarBF16,
}

// pairTypes are the two-element 16-bit float vectors, which mltop does
// not pass by value as a scalar (a CUDA kernel's __half2 is a vector
// struct of x and y: args_vector.go).
var pairTypes = map[string]bool{"__half2": true, "half2": true, "__nv_bfloat162": true, "nv_bfloat162": true, "bfloat2": true}

// elemTypes are the pointees whose buffers must have one element type
// (fitsPointee relaxes a few pairs).
var elemTypes = map[string]profiler.DType{
	"float": profiler.F32, "float1": profiler.F32, "float2": profiler.F32, "float3": profiler.F32, "float4": profiler.F32,
	"half": profiler.F16, "__half": profiler.F16, "half2": profiler.F16, "__half2": profiler.F16, "half4": profiler.F16,
	"__nv_bfloat16": profiler.BF16, "nv_bfloat16": profiler.BF16, "__nv_bfloat162": profiler.BF16,
	"bfloat": profiler.BF16, "bfloat2": profiler.BF16, "bfloat4": profiler.BF16, "bfloat16_t": profiler.BF16,
	"double": profiler.F64, "double2": profiler.F64, "double4": profiler.F64,
	"__nv_fp8_e4m3": profiler.FP8E4M3, "__nv_fp8x2_e4m3": profiler.FP8E4M3, "__nv_fp8x4_e4m3": profiler.FP8E4M3,
	"__nv_fp8_e5m2": profiler.FP8E5M2, "__nv_fp8x2_e5m2": profiler.FP8E5M2, "__nv_fp8x4_e5m2": profiler.FP8E5M2,
	// PyTorch's names (the torch stub declares them; prepare_std.go)
	"c10::Half": profiler.F16, "at::Half": profiler.F16, "c10::BFloat16": profiler.BF16, "at::BFloat16": profiler.BF16,
	"c10::Float8_e4m3fn": profiler.FP8E4M3, "at::Float8_e4m3fn": profiler.FP8E4M3,
	"c10::Float8_e5m2": profiler.FP8E5M2, "at::Float8_e5m2": profiler.FP8E5M2,
	"signed char": profiler.I8, "int8_t": profiler.I8, "char2": profiler.I8, "char4": profiler.I8,
	"unsigned char": profiler.U8, "uint8_t": profiler.U8, "uchar": profiler.U8, "uchar2": profiler.U8, "uchar3": profiler.U8, "uchar4": profiler.U8, "__nv_fp8_storage_t": profiler.U8,
	"short": profiler.I16, "short int": profiler.I16, "signed short": profiler.I16, "int16_t": profiler.I16, "short2": profiler.I16, "short4": profiler.I16,
	"unsigned short": profiler.U16, "unsigned short int": profiler.U16, "uint16_t": profiler.U16, "ushort": profiler.U16, "ushort2": profiler.U16, "ushort4": profiler.U16,
	"int": profiler.I32, "signed int": profiler.I32, "int32_t": profiler.I32, "int2": profiler.I32, "int4": profiler.I32,
	"unsigned": profiler.U32, "unsigned int": profiler.U32, "uint32_t": profiler.U32, "uint": profiler.U32, "uint2": profiler.U32, "uint4": profiler.U32,
	"long": profiler.I64, "long int": profiler.I64, "long long": profiler.I64, "long long int": profiler.I64,
	"int64_t": profiler.I64, "ptrdiff_t": profiler.I64,
	"unsigned long": profiler.U64, "unsigned long int": profiler.U64, "unsigned long long": profiler.U64,
	"unsigned long long int": profiler.U64, "uint64_t": profiler.U64, "size_t": profiler.U64, "ulong": profiler.U64,
}

// fnuzPointee says why a buffer cannot go to a pointer to pointee, one of
// PyTorch's fnuz 8-bit floats (which the torch stub declares), or "".
func fnuzPointee(pointee string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(pointee, "c10::"), "at::"), "torch::")
	if name != "Float8_e4m3fnuz" && name != "Float8_e5m2fnuz" {
		return ""
	}
	return fmt.Sprintf("%s is PyTorch's fnuz format (exponent bias one more than %s's, no negative zero, 0x80 the only NaN), which mltop's fp8 buffers (fp8e4m3, fp8e5m2: the OCP formats) cannot hold or check: take the data as uint8_t* (a u8 buffer) and convert it in the kernel", pointee, strings.TrimSuffix(name, "fnuz"))
}

// fitsPointee says whether a buffer of type have may be bound to a
// pointer to want (elemTypes): the same type; an i32 buffer for an
// unsigned 32-bit pointee (the 4-byte integer buffer before u32 existed);
// an fp8 buffer for an unsigned byte pointer (kernels that take fp8 data
// as uint8_t* and convert it themselves). A plain char* is not in
// elemTypes: it views any buffer's bytes.
func fitsPointee(have, want profiler.DType) bool {
	switch {
	case have == want:
		return true
	case want == profiler.U32:
		return have == profiler.I32
	case want == profiler.U8:
		return have.IsFP8()
	}
	return false
}

// typeScope resolves the type names of one source.
type typeScope struct {
	typedefs map[string]string
	dtype    string // the manifest's dtype name
	sig      csrc.Signature
	code     string // the source with its local headers, where structs are defined (CUDA)
	// pinned are the template parameters the entry's arguments bind to a
	// C type (entryExpr.pinnedTypes): no longer the dtype.
	pinned map[string]string
	// classes are the template parameters the entry binds to a type of
	// the source's own (entryExpr.pinnedClassTypes): a struct, an enum.
	classes map[string]string
	// specClasses are those of classes whose type reads the spec
	// (`Scale<T>`): the entry's parts, rendered per spec (args_struct_spec.go).
	specClasses map[string][]entryPart
	entry       *entryExpr
	enums       map[string]string // the enums of code, by name: their underlying type (args_enum.go)
	// vectors: CUDA's built-in vector types (uint3, float4, __half2, dim3)
	// are structs of x, y, z, w (args_vector.go); not so in Metal.
	vectors bool
}

// pinnedScalars keeps, of the entry's pinned template parameters, those
// whose type is a C scalar type, through the source's typedefs
// (`my_remove_if<mytype>` with `typedef int mytype;`): a struct or a
// type mltop does not know stays as before, the dtype's.
func (ts typeScope) pinnedScalars(pinned map[string]string) map[string]string {
	out := map[string]string{}
	for param, t := range pinned {
		r := typeScope{typedefs: ts.typedefs}.resolve(t)
		_, scalar := cScalarKinds[r]
		_, elem := elemTypes[r]
		if scalar || elem {
			out[param] = r
		}
	}
	return out
}

// resolve follows the source's typedefs (a few levels).
func (ts typeScope) resolve(t string) string {
	if u, ok := ts.pinned[t]; ok {
		t = u
	}
	for range 4 {
		u, ok := ts.typedefs[t]
		if !ok || u == "" {
			return t
		}
		t = u
	}
	return t
}

// generic says whether t stands for the dtype (its name, a template
// parameter, or a typedef whose meaning depends on the preprocessor).
func (ts typeScope) generic(t string) bool {
	if _, ok := ts.classes[t]; ok {
		return false
	}
	if _, ok := ts.pinned[t]; ok {
		return false
	}
	if t == ts.dtype || ts.sig.IsTemplateParam(t) {
		return true
	}
	u, ok := ts.typedefs[t]
	return ok && u == ""
}

// scalarKind is the kind of a by-value parameter; "" for the dtype's own
// type. An error says why mltop cannot pass it.
func (ts typeScope) scalarKind(p csrc.Param) (profiler.ScalarKind, error) {
	t := strings.Join(strings.Fields(strings.NewReplacer("const", " ", "volatile", " ").Replace(p.Scalar)), " ")
	if ts.generic(t) {
		return "", nil
	}
	if c, ok := ts.classes[t]; ok {
		t = c
	}
	r := ts.resolve(t)
	if e, ok := ts.enums[r]; ok {
		r = ts.resolve(e) // an enum passes as its underlying type
	}
	if k, ok := cScalarKinds[r]; ok {
		return k, nil
	}
	if pairTypes[r] {
		return "", fmt.Errorf("parameter `%s %s` is a pair of 16-bit floats, which mltop does not pass by value: take two scalars (half a, half b, or float) and pair them inside the kernel", p.Scalar, p.Name)
	}
	return "", fmt.Errorf("parameter `%s %s`: mltop cannot pass type %s (it passes bool, char, short, int, long, long long, their unsigned forms, int8_t…uint64_t, size_t, float, double, half, __nv_bfloat16 and the dtype's type)", p.Scalar, p.Name, r)
}

// elem is the buffer element type a pointer parameter requires, "" for any.
func (ts typeScope) elem(p csrc.Param) profiler.DType {
	if ts.generic(p.Pointee) {
		return ""
	}
	r := ts.resolve(p.Pointee)
	if ts.vectors && wordTypes[r] {
		return ""
	}
	return elemTypes[r]
}

// wordTypes are CUDA's 8- and 16-byte integer vectors, which kernels use
// as the width of a load or store whatever the data: Marlin's `const int4*
// A` carries an fp16 matrix, 8 halves a word. A pointer to one takes any
// buffer, as a plain char* does (the float vectors keep their element
// type: a float4* is read as floats).
var wordTypes = map[string]bool{"int2": true, "int4": true, "uint2": true, "uint4": true}

// WordPointee says whether a CUDA pointer to t takes a buffer of any dtype
// (wordTypes): `mltop new` says so where it makes t's lanes a shape.
func WordPointee(t string) bool { return wordTypes[t] }

// describe writes a parameter as the source does: "const float* x".
func describe(p csrc.Param) string {
	t := p.Type
	if p.ReadOnly && !strings.Contains(t, "constant") {
		t = "const " + t
	}
	return strings.TrimSpace(t + " " + p.Name)
}

// bindArgs puts a dispatch's buffers and scalars into pd for a spec (dtype
// dt, environment e): each buffer checked against the element type its
// parameter requires, each scalar evaluated as its parameter's C type.
func (f *Family) bindArgs(pd *profiler.Dispatch, d udisp, b ubinding, dt profiler.DType, e map[string]any) error {
	for _, up := range b.params {
		a := d.args[up.arg]
		if a.buf != "" {
			if have := f.bufDType(a.buf, dt); up.elem != "" && !fitsPointee(have, up.elem) {
				return fmt.Errorf("dispatch %s: args[%d]: buffer %s holds %s but parameter `%s` points to %s: the buffer's dtype cannot be the parameter's type (%s)", d.name, up.arg, a.buf, have, describe(up.param), up.elem, f.dtypeFix(a.buf, have, up.elem, "write the parameter with the dtype's name, "+f.dtypeName()))
			}
			if up.acc != nil {
				st, err := f.accessorArg(pd, up, a.buf, e)
				if err != nil {
					return fmt.Errorf("dispatch %s: args[%d]: %w", d.name, up.arg, err)
				}
				pd.Order = append(pd.Order, profiler.ArgRef{Struct: true, Index: len(pd.Structs)})
				pd.Structs = append(pd.Structs, st)
				continue
			}
			pd.Order = append(pd.Order, profiler.ArgRef{Index: len(pd.Args)})
			pd.Args = append(pd.Args, a.buf)
			continue
		}
		if up.st != nil {
			st, err := f.structArgOf(pd, up, a, dt, e)
			if err != nil {
				return fmt.Errorf("dispatch %s: args[%d] for parameter `%s` (struct %s): %w", d.name, up.arg, describe(up.param), up.st.layout.name, err)
			}
			pd.Order = append(pd.Order, profiler.ArgRef{Struct: true, Index: len(pd.Structs)})
			pd.Structs = append(pd.Structs, st)
			continue
		}
		if a.elems != nil {
			scs, err := arrayScalars(up, a, e)
			if err != nil {
				return fmt.Errorf("dispatch %s: args[%d] %s for parameter `%s`: %w", d.name, up.arg, a.text, describe(up.param), err)
			}
			for _, sc := range scs {
				pd.Order = append(pd.Order, profiler.ArgRef{Scalar: true, Index: len(pd.Scalars)})
				pd.Scalars = append(pd.Scalars, sc)
			}
			continue
		}
		sc, err := scalarArg(up, a, dt, e)
		if err != nil {
			return fmt.Errorf("dispatch %s: args[%d] '%s' for parameter `%s`: %w", d.name, up.arg, a.text, describe(up.param), err)
		}
		pd.Order = append(pd.Order, profiler.ArgRef{Scalar: true, Index: len(pd.Scalars)})
		pd.Scalars = append(pd.Scalars, sc)
	}
	if !b.interleaved && len(pd.Structs) == 0 {
		pd.Order = nil // buffers then scalars: the default order
	}
	return nil
}

// dtypeFix says what to do about buffer buf, holding have, bound where
// the source points to want; retype says how to make the source take the
// dtype ("write the parameter with the dtype's name, T"). When the buffer
// follows the spec's dtype and want is one of dtypes:, the kernel was most
// likely written for want alone: dropping have from dtypes: comes first.
func (f *Family) dtypeFix(buf string, have, want profiler.DType, retype string) string {
	fixed := fmt.Sprintf("or give the buffer `dtype: %s`", want)
	if f.bufDType(buf, "") != "" || !slices.Contains(f.schema.DTypes, want) {
		return retype + ", " + fixed
	}
	return fmt.Sprintf("drop %s from dtypes: %s, as the kernel takes %s alone; or %s, so that it takes each dtype; %s", have, dtypeList(f.schema.DTypes), want, retype, fixed)
}

// dtypeList is "[f32, f16]", as a manifest writes dtypes:.
func dtypeList(dts []profiler.DType) string { return "[" + profiler.JoinDTypes(dts) + "]" }

func (f *Family) bufDType(name string, dt profiler.DType) profiler.DType {
	for _, b := range f.bufs {
		if b.name == name && b.dtype != "" {
			return b.dtype
		}
	}
	return dt
}

// dtypeScalarKinds are the kinds a `T alpha` parameter takes per dtype.
var dtypeScalarKinds = map[profiler.DType]profiler.ScalarKind{
	profiler.F32: profiler.ScalarF32, profiler.F16: profiler.ScalarF16, profiler.BF16: profiler.ScalarBF16,
}

// scalarArg evaluates a scalar arg as its parameter's kind: a float
// parameter takes any number, an integer one a whole number in its range.
func scalarArg(up uparam, a uarg, dt profiler.DType, e map[string]any) (profiler.Scalar, error) {
	kind := up.kind
	if kind == "" { // the dtype's own type
		k, ok := dtypeScalarKinds[dt]
		if !ok {
			return profiler.Scalar{}, fmt.Errorf("its type is the dtype, %s here, which mltop does not pass by value (it passes f32, f16 and bf16): take it as float", dt)
		}
		kind = k
	}
	v, err := a.p.Eval(e)
	if err != nil {
		return profiler.Scalar{}, err
	}
	name := up.param.Name
	if name == "" {
		name = a.text
	}
	sc, err := profiler.ScalarOf(kind, name, v)
	if err != nil {
		return sc, fmt.Errorf("%v (C type %s)", err, up.param.Scalar)
	}
	return sc, nil
}
