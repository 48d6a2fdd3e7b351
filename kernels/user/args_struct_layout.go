package user

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// This file lays out a struct a CUDA kernel takes by value (causal-conv1d's
// `ConvParamsBase params`) as C does: each field at its natural alignment,
// the struct aligned as its largest field, its size rounded up to that; a
// base class's fields first (standard-layout single inheritance), a nested
// struct's fields under "inner.field".

// structLeaf is one scalar or pointer field of a laid-out struct (an
// array field is one leaf of count elements).
type structLeaf struct {
	path     string // the args mapping's key: "x_ptr", "inner.n"
	decl     string // as the source declares it: "void* x_ptr"
	kind     profiler.ScalarKind
	pointer  bool
	readOnly bool           // a pointer to const
	elem     profiler.DType // the element type a pointer field requires of its buffer; "" for any
	offset   int
	count    int   // 1, or an array's elements
	extents  []int // an array's extents, outermost first; nil for one element
	size     int   // one element's bytes
}

// structLayout is a struct's C layout.
type structLayout struct {
	name        string
	size, align int
	dataEnd     int // the end of the last field: size minus the tail padding
	leaves      []structLeaf
}

// structTypes lays out the structs of one source (with its local headers).
type structTypes struct {
	code   string
	toks   []csrc.Token
	ts     typeScope
	macros map[string]string
	arrays map[string][]int64 // constant integer arrays an extent may index
}

func newStructTypes(code string, ts typeScope) *structTypes {
	ts.typedefs = csrc.Typedefs(code) // member usings (`using index_t = uint32_t;`) and the headers' typedefs too
	st := &structTypes{code: code, toks: csrc.Tokenize(code), ts: ts, macros: csrc.ObjectMacros(csrc.Scan(code))}
	st.arrays = constArrays(st.toks, st.macros)
	return st
}

// layout lays out struct name, or a class template's instance
// (`TensorListMetadata<4>`: args_struct_template.go); found is false when
// the source defines no struct of that name (after its typedefs).
func (st *structTypes) layout(name string, depth int) (structLayout, bool, error) {
	name = st.ts.resolve(name)
	base, targs := splitTemplateName(name)
	decl, found, err := csrc.FindStruct(st.code, base)
	if !found || err != nil {
		return structLayout{}, found, err
	}
	if depth > 8 {
		return structLayout{}, true, fmt.Errorf("struct %s nests structs more than 8 deep", name)
	}
	subst, err := templateSubst(structTemplateParams(st.toks, decl.Name), targs, name)
	if err != nil {
		return structLayout{}, true, err
	}
	l := structLayout{name: decl.Name, align: 1}
	if targs != nil {
		l.name = name
	}
	if decl.Base != "" {
		base, found, err := st.layout(decl.Base, depth+1)
		switch {
		case err != nil:
			return l, true, err
		case !found:
			return l, true, fmt.Errorf("struct %s derives from %s, which mltop does not find in the source or its local headers", decl.Name, decl.Base)
		case base.dataEnd < base.size && base.dataEnd > 0 && st.notPOD(decl.Base, depth+1):
			return l, true, fmt.Errorf("struct %s derives from %s, which has tail padding and is no plain C struct (a constructor, default member initializers, a base class, private or protected fields, or a field of such a struct): C++ may place %s's fields in that padding; mltop does not lay that out", decl.Name, decl.Base, decl.Name)
		}
		if len(base.leaves) > 0 {
			l.leaves, l.size, l.dataEnd, l.align = base.leaves, base.size, base.size, base.align
		}
	}
	off := l.size
	for _, f := range decl.Fields {
		leaves, size, align, err := st.field(name, f, subst, depth)
		if err != nil {
			return l, true, err
		}
		off = alignUp(off, align)
		for _, lf := range leaves {
			lf.offset += off
			l.leaves = append(l.leaves, lf)
		}
		off += size
		l.align = max(l.align, align)
	}
	l.dataEnd = off
	l.size = max(alignUp(off, l.align), 1) // an empty struct takes a byte (but none as a base)
	return l, true, nil
}

// notPOD says whether struct name is no C++03 POD, whose tail padding the
// Itanium ABI lets a derived class's fields use: a constructor, default
// member initializers, a base class, private or protected fields, or a
// field of such a struct.
func (st *structTypes) notPOD(name string, depth int) bool {
	d, found, err := csrc.FindStruct(st.code, st.ts.resolve(name))
	if !found || err != nil || depth > 8 {
		return false
	}
	if d.Initialized || d.Hidden || d.Base != "" {
		return true
	}
	for _, f := range d.Fields {
		t := st.ts.resolve(f.Type)
		if _, scalar := cScalarKinds[t]; !f.Pointer && !scalar && st.notPOD(t, depth+1) {
			return true
		}
	}
	return false
}

// field lays out one field at offset 0: its leaves, its bytes and its
// alignment.
func (st *structTypes) field(owner string, f csrc.StructField, subst map[string]string, depth int) (leaves []structLeaf, size, align int, err error) {
	count := 1
	var extents []int
	for _, x := range f.Extents {
		n, ok := st.extentValue(x, subst)
		if !ok || n <= 0 {
			return nil, 0, 0, fmt.Errorf("struct %s: field `%s`: mltop needs the array's extent %q as a positive constant", owner, f.Declared(), x)
		}
		count *= int(n)
		extents = append(extents, int(n))
	}
	if a, ok := subst[f.Type]; ok {
		f.Type = a // a field of the template's type parameter
	}
	shown := f // the extents as numbers: `ptrs[kLanes[n - 1]]` of Lists<2> is ptrs[4]
	shown.Extents = nil
	for _, n := range extents {
		shown.Extents = append(shown.Extents, strconv.Itoa(n))
	}
	lf := structLeaf{path: f.Name, decl: shown.Declared(), count: count, extents: extents}
	t := st.ts.resolve(f.Type)
	switch {
	case f.Pointer:
		lf.pointer, lf.readOnly, lf.size = true, f.PointeeConst, 8
		lf.elem = st.ts.elem(csrc.Param{Pointee: f.Type, Pointer: true})
		return []structLeaf{lf}, 8 * count, 8, nil
	case st.ts.generic(f.Type):
		return nil, 0, 0, fmt.Errorf("struct %s: field `%s` has the dtype's type, whose size changes with the dtype: declare it float (or the C type it holds)", owner, f.Declared())
	}
	if e, ok := st.ts.enums[t]; ok {
		t = e // an enum is its underlying type
	}
	if k, ok := cScalarKinds[t]; ok {
		lf.kind = k
		lf.size = profiler.Scalar{Kind: k}.Size()
		return []structLeaf{lf}, lf.size * count, lf.size, nil
	}
	inner, found, err := st.layout(t, depth+1)
	if !found && err == nil {
		inner, found = vectorLayout(t) // uint3, float4, __half2, dim3: x, y, z, w
	}
	if err != nil {
		return nil, 0, 0, err
	}
	if !found {
		return nil, 0, 0, fmt.Errorf("struct %s: field `%s` has type %s, which is neither a scalar type (int, int64_t, float, …, typedefs of them), a pointer, a CUDA vector type (uint3, float4, …) nor a struct mltop finds in the source or its local headers", owner, f.Declared(), t)
	}
	if count > 1 {
		return nil, 0, 0, fmt.Errorf("struct %s: field `%s` is an array of structs: mltop fills arrays of scalars and pointers only", owner, f.Declared())
	}
	for _, il := range inner.leaves {
		il.path = f.Name + "." + il.path
		leaves = append(leaves, il)
	}
	return leaves, inner.size, inner.align, nil
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// fieldList names the leaves as the mapping's keys: "dim, x_ptr, shape[4]".
func (l structLayout) fieldList() string {
	names := make([]string, len(l.leaves))
	for i, lf := range l.leaves {
		names[i] = fieldName(lf.path, lf.count)
		if len(lf.extents) > 1 {
			names[i] = lf.path + strings.ReplaceAll(fmt.Sprint(lf.extents), " ", "][")
		}
	}
	return strings.Join(names, ", ")
}

func (l structLayout) leaf(path string) (structLeaf, bool) {
	for _, lf := range l.leaves {
		if lf.path == path {
			return lf, true
		}
	}
	return structLeaf{}, false
}
