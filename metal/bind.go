package metal

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// EntrySignature finds entry's signature in a user's Metal source: a
// [[kernel]] function of that name, or the template a [[host_name]] of
// that name instantiates, its parameter types read with the template
// arguments put in (`const device T*` with T → float is `const device
// float*`). found lists the entries there are when entry is not one.
func EntrySignature(src, entry string) (sig csrc.Signature, found []string, err error) {
	hosts, err := HostNames(src)
	if err != nil {
		return sig, nil, err
	}
	inst, isHost := hosts[entry]
	if !isHost {
		sigs, found := KernelOverloads(src, entry)
		if len(sigs) == 0 {
			for h := range hosts {
				found = append(found, h)
			}
			return sig, found, fmt.Errorf("no kernel %q", entry)
		}
		return withScalarAliases(src, sigs[0]), nil, nil
	}
	binds, err := inst.Bindings(src)
	if err != nil {
		return sig, nil, fmt.Errorf("[[host_name(%q)]]: %w", entry, err)
	}
	sig, _, ok := csrc.FindEntry(src, inst.Template)
	if !ok {
		return sig, nil, fmt.Errorf("[[host_name(%q)]] instantiates %s, which is not a kernel of the source", entry, inst.Template)
	}
	sig = withScalarAliases(src, BindTemplate(sig, binds))
	sig.Entry = entry
	return sig, nil, nil
}

// withScalarAliases writes the `constant` parameters of sig whose type is
// an alias of a scalar type the source declares (`using T = half;`, as
// mltop declares the dtype name, or `typedef float real;`) with that
// type, so that Slots reads `constant T& eps` as a half scalar rather
// than a struct.
func withScalarAliases(src string, sig csrc.Signature) csrc.Signature {
	var aliases map[string]string
	for i, p := range sig.Params {
		if !strings.Contains(p.Type, "constant") {
			continue
		}
		if aliases == nil {
			aliases = scalarAliases(src)
		}
		if t := SubstituteTemplateArgs(p.Type, aliases); t != p.Type {
			sig.Params = slices.Clone(sig.Params)
			sig.Params[i].Type = t
		}
	}
	return sig
}

// scalarAliases maps each alias src declares of a Metal scalar type (a
// few levels deep) to that type.
func scalarAliases(src string) map[string]string {
	defs := csrc.Typedefs(src)
	out := map[string]string{}
	for name, t := range defs {
		for range 4 {
			u, ok := defs[t]
			if !ok || u == "" {
				break
			}
			t = u
		}
		if _, scalar := metalScalarKinds[strings.TrimPrefix(t, "metal::")]; scalar && t != name {
			out[name] = strings.TrimPrefix(t, "metal::")
		}
	}
	return out
}

// BindTemplate is sig with the names binds maps (template parameters)
// replaced by their values in every parameter's type: with T → float,
// `const device T*` is `const device float*`.
func BindTemplate(sig csrc.Signature, binds map[string]string) csrc.Signature {
	if len(binds) == 0 {
		return sig
	}
	sig.Params = slices.Clone(sig.Params)
	for i := range sig.Params {
		p := &sig.Params[i]
		p.Type = SubstituteTemplateArgs(p.Type, binds)
		if p.Scalar != "" {
			p.Scalar = SubstituteTemplateArgs(p.Scalar, binds)
		}
		if p.Pointee != "" {
			p.Pointee = SubstituteTemplateArgs(p.Pointee, binds)
		}
	}
	return sig
}

// SlotKind says how one [[buffer(n)]] parameter of a kernel is set.
type SlotKind int

const (
	// SlotBuffer is a `device T*`: one of the dispatch's buffers.
	SlotBuffer SlotKind = iota
	// SlotScalar is a `constant T&` of a scalar type (MLX style): one of
	// the dispatch's scalars, as T's bytes.
	SlotScalar
	// SlotArray is a `constant T*` (MLX's x_shape): the consecutive
	// scalars named "name[0]", "name[1]", …, each as T's bytes, or, when
	// the dispatch gives no such scalars, one of its buffers (Metal binds
	// a constant pointer with setBuffer as it does a device one).
	SlotArray
	// SlotStruct is a `constant S&` of a struct: all the dispatch's
	// scalars packed as PackScalars does.
	SlotStruct
)

// Slot is one bindable parameter of a kernel.
type Slot struct {
	Name  string
	Index int // its [[buffer(n)]]
	Kind  SlotKind
	Type  string // the element or value type: "float", "int", "Params"
}

// Slots reads the [[buffer(n)]] parameters of a signature, in order.
func Slots(sig csrc.Signature) ([]Slot, error) {
	var out []Slot
	for _, p := range sig.Params {
		if !strings.HasPrefix(p.Attr, "buffer(") {
			continue
		}
		var s Slot
		if _, err := fmt.Sscanf(p.Attr, "buffer(%d)", &s.Index); err != nil {
			return nil, fmt.Errorf("%s: parameter %s: cannot read [[%s]]", sig.Entry, p.Name, p.Attr)
		}
		s.Name = p.Name
		words := strings.Fields(strings.NewReplacer("*", " * ", "&", " & ").Replace(p.Type))
		space, ref := "", ""
		var typ []string
		for _, w := range words {
			switch w {
			case "device", "constant":
				space = w
			case "*", "&":
				ref = w
			default:
				typ = append(typ, strings.TrimPrefix(w, "metal::"))
			}
		}
		s.Type = strings.Join(typ, " ")
		switch {
		case space == "constant" && ref == "&" && metalScalarSize(s.Type) > 0:
			s.Kind = SlotScalar
		case space == "constant" && ref == "&":
			s.Kind = SlotStruct
		case space == "constant" && ref == "*":
			s.Kind = SlotArray
			if metalScalarSize(s.Type) == 0 {
				return nil, fmt.Errorf("%s: parameter %s is a constant array of %s: mltop sets constant arrays of scalar types only", sig.Entry, p.Name, s.Type)
			}
		default:
			s.Kind = SlotBuffer
		}
		out = append(out, s)
	}
	return out, nil
}

// metalScalarKinds are the MSL scalar types a scalar slot can have.
var metalScalarKinds = map[string]profiler.ScalarKind{
	"bool": profiler.ScalarBool, "char": profiler.ScalarI8, "int8_t": profiler.ScalarI8, "uchar": profiler.ScalarU8, "uint8_t": profiler.ScalarU8,
	"short": profiler.ScalarI16, "int16_t": profiler.ScalarI16, "ushort": profiler.ScalarU16, "uint16_t": profiler.ScalarU16,
	"int": profiler.ScalarI32, "int32_t": profiler.ScalarI32, "uint": profiler.ScalarU32, "uint32_t": profiler.ScalarU32, "unsigned": profiler.ScalarU32, "unsigned int": profiler.ScalarU32,
	"long": profiler.ScalarI64, "int64_t": profiler.ScalarI64, "ulong": profiler.ScalarU64, "uint64_t": profiler.ScalarU64, "size_t": profiler.ScalarU64,
	"float": profiler.ScalarF32, "half": profiler.ScalarF16, "bfloat": profiler.ScalarBF16,
}

// metalScalarSize is the size of an MSL scalar type, 0 for anything
// else.
func metalScalarSize(t string) int {
	if k, ok := metalScalarKinds[t]; ok {
		return profiler.Scalar{Kind: k}.Size()
	}
	return 0
}

// Bound is bytes set with setBytes at a buffer index.
type Bound struct {
	Index int
	Bytes []byte
}

// Binding is where a launch's buffers and scalars go: Buffers[i] is the
// index of the dispatch's buffer i, Bytes the setBytes calls.
type Binding struct {
	Buffers []int
	Bytes   []Bound
}

// Bind places a dispatch's buffers and scalars on a kernel's slots. With
// no slots (a built-in kernel) the buffers take indices 0…n-1 and the
// scalars one struct at n. Otherwise the buffers go in order to the
// SlotBuffer slots and to the SlotArray slots no scalar is named for; the
// scalars either all to the one SlotStruct, packed, or one per SlotScalar
// (converted to the slot's type, at its C size) and by name to the other
// SlotArray slots.
func Bind(slots []Slot, nbufs int, scalars []profiler.Scalar) (Binding, error) {
	var b Binding
	if slots == nil {
		for i := range nbufs {
			b.Buffers = append(b.Buffers, i)
		}
		sc, err := PackScalars(scalars)
		if err != nil {
			return b, err
		}
		b.Bytes = []Bound{{Index: nbufs, Bytes: sc}}
		return b, nil
	}
	var valueSlots, bufferArrays []Slot
	for _, s := range slots {
		switch {
		case s.Kind == SlotBuffer:
			b.Buffers = append(b.Buffers, s.Index)
		case s.Kind == SlotArray && !namesElements(scalars, s.Name):
			b.Buffers = append(b.Buffers, s.Index)
			bufferArrays = append(bufferArrays, s)
		default:
			valueSlots = append(valueSlots, s)
		}
	}
	if len(b.Buffers) != nbufs {
		msg := fmt.Sprintf("the kernel takes %d device buffers but the dispatch gives %d", len(b.Buffers), nbufs)
		for _, s := range bufferArrays {
			msg += fmt.Sprintf("; parameter %s (constant %s*) counts as one: give it a buffer, or scalars named %s[0], %s[1], …", s.Name, s.Type, s.Name, s.Name)
		}
		return b, fmt.Errorf("%s", msg)
	}
	if len(valueSlots) == 1 && valueSlots[0].Kind == SlotStruct {
		sc, err := PackScalars(scalars)
		if err != nil {
			return b, err
		}
		b.Bytes = []Bound{{Index: valueSlots[0].Index, Bytes: sc}}
		return b, nil
	}
	rest := scalars
	for _, s := range valueSlots {
		var bs []byte
		switch s.Kind {
		case SlotStruct:
			return b, fmt.Errorf("parameter %s (constant %s&) is a struct beside other scalar parameters: mltop fills one struct only when it is the kernel's only scalar parameter", s.Name, s.Type)
		case SlotScalar:
			if len(rest) == 0 {
				return b, fmt.Errorf("parameter %s (constant %s&) has no scalar: the dispatch gives %d", s.Name, s.Type, len(scalars))
			}
			v, err := scalarBytes(s, rest[0])
			if err != nil {
				return b, err
			}
			bs, rest = v, rest[1:]
		case SlotArray:
			for len(rest) > 0 && strings.HasPrefix(rest[0].Name, s.Name+"[") {
				v, err := scalarBytes(s, rest[0])
				if err != nil {
					return b, err
				}
				bs, rest = append(bs, v...), rest[1:]
			}
			if len(bs) == 0 {
				return b, fmt.Errorf("parameter %s (constant %s*) has no values: give scalars named %s[0], %s[1], …", s.Name, s.Type, s.Name, s.Name)
			}
		}
		b.Bytes = append(b.Bytes, Bound{Index: s.Index, Bytes: bs})
	}
	if len(rest) > 0 {
		return b, fmt.Errorf("%d scalars left over (from %s) after the kernel's %d scalar parameters", len(rest), rest[0].Name, len(valueSlots))
	}
	return b, nil
}

// namesElements says whether scalars holds an element of the array
// parameter name ("name[0]", …).
func namesElements(scalars []profiler.Scalar, name string) bool {
	for _, sc := range scalars {
		if strings.HasPrefix(sc.Name, name+"[") {
			return true
		}
	}
	return false
}

// scalarBytes is sc's value as slot s's type (a half or bfloat rounded to
// nearest even, refused beyond its range).
func scalarBytes(s Slot, sc profiler.Scalar) ([]byte, error) {
	var v any = sc.I
	switch sc.Kind {
	case profiler.ScalarF32, profiler.ScalarF64, profiler.ScalarF16, profiler.ScalarBF16:
		v = sc.F
	}
	k, ok := metalScalarKinds[s.Type]
	if !ok {
		return nil, fmt.Errorf("parameter %s has type %s: mltop sets scalar parameters of scalar types only", s.Name, s.Type)
	}
	conv, err := profiler.ScalarOf(k, sc.Name, v)
	if err != nil {
		return nil, fmt.Errorf("parameter %s (%s): %w", s.Name, s.Type, err)
	}
	return conv.Bytes(), nil
}

// MacroKernelSource is src with its #defines expanded (line numbers kept,
// directives dropped) when that text writes a kernel of one of the names
// that src itself does not write out, or, with no names, when src writes
// no kernel and the expanded text does: what `mltop new` reads for a
// kernel only a macro writes (candle's `INDEX_OP(is_u32_f32, uint32_t,
// float)`). ok is false when src itself has what was asked for.
func MacroKernelSource(src string, names []string) (expanded string, ok bool) {
	if !defineRE.MatchString(src) {
		return "", false
	}
	hosts, _ := HostNames(src)
	var missing []string
	for _, n := range names {
		if sigs, _ := csrc.Overloads(src, n); len(sigs) > 0 {
			continue
		}
		if _, isHost := hosts[n]; isHost {
			continue
		}
		missing = append(missing, n)
	}
	if len(names) > 0 && len(missing) == 0 || len(names) == 0 && len(csrc.FindEntries(src)) > 0 {
		return "", false
	}
	expanded = expandMacros(src)
	for _, n := range missing {
		if sigs, _ := csrc.Overloads(expanded, n); len(sigs) == 0 {
			return "", false
		}
	}
	if len(names) == 0 && len(csrc.FindEntries(expanded)) == 0 {
		return "", false
	}
	return expanded, true
}

// defineRE finds a #define, also written `# define` (candle's
// indexing.metal writes its kernel macros so).
var defineRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]`)

// KernelOverloads are the kernels name designates in src (csrc.Overloads),
// or, when the source writes none of that name out, those its #defines
// write: candle's `FILL_OP(f32, float)` defines `kernel void fill_f32(…)`
// through a macro. The expanded text's signatures name the macro's
// arguments (T is float there). With none, the names of all the kernels,
// those the macros write included.
func KernelOverloads(src, name string) ([]csrc.Signature, []string) {
	sigs, found := csrc.Overloads(src, name)
	if len(sigs) > 0 || !defineRE.MatchString(src) {
		return sigs, found
	}
	expanded, all := csrc.Overloads(expandMacros(src), name)
	if len(expanded) > 0 {
		return expanded, nil
	}
	return nil, all
}
