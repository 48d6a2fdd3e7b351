package user

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file binds a mapping in args, `{x_ptr: x, dim: D, seqlen: L}`, to a
// struct a CUDA kernel takes by value: each key a field (a nested struct's
// as "inner.n" or a nested mapping), a pointer field given a buffer, a
// scalar field an expression, an array field a list; fields not given
// are zero.

// structMarker starts the text argList keeps for a mapping item: the
// marker, then the entries as JSON (structText, structEntries).
const structMarker = "\x00struct"

// structEntry is one key of a struct value: a buffer or expression, or a
// list of them.
type structEntry struct {
	Key   string   `json:"k"`
	Val   string   `json:"v,omitempty"`
	Elems []string `json:"e,omitempty"`
	List  bool     `json:"l,omitempty"`
	// Paths are, for nested lists ([[g], [p]]), each element's indices,
	// outermost first; nil for a flat list.
	Paths [][]int `json:"p,omitempty"`
}

// structText encodes a mapping node of args, nested mappings flattened to
// dotted keys.
func structText(m *ast.MappingNode) (string, error) {
	var out []structEntry
	if err := flattenMapping(m, "", &out); err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	return structMarker + string(b), err
}

func flattenMapping(m *ast.MappingNode, prefix string, out *[]structEntry) error {
	for _, kv := range m.Values {
		key := prefix + strings.TrimSpace(kv.Key.String())
		switch v := kv.Value.(type) {
		case *ast.MappingNode:
			if err := flattenMapping(v, key+".", out); err != nil {
				return err
			}
		case *ast.SequenceNode:
			e := structEntry{Key: key, List: true}
			nested := false
			if err := flattenList(v, key, nil, &e, &nested); err != nil {
				return err
			}
			if !nested {
				e.Paths = nil
			}
			*out = append(*out, e)
		default:
			e := structEntry{Key: key}
			if err := yaml.NodeToValue(v, &e.Val); err != nil {
				tk := v.GetToken()
				return fmt.Errorf("[%d:%d] field %s: want a buffer name or an expression, got %s", tk.Position.Line, tk.Position.Column, key, strings.TrimSpace(v.String()))
			}
			*out = append(*out, e)
		}
	}
	return nil
}

// flattenList reads a list value, nested lists (one per dimension of a
// multi-dimensional array field) to elements with their indices.
func flattenList(v *ast.SequenceNode, key string, at []int, e *structEntry, nested *bool) error {
	for k, item := range v.Values {
		path := append(slices.Clone(at), k)
		if inner, ok := item.(*ast.SequenceNode); ok {
			*nested = true
			if err := flattenList(inner, key, path, e, nested); err != nil {
				return err
			}
			continue
		}
		var s string
		if err := yaml.NodeToValue(item, &s); err != nil {
			tk := item.GetToken()
			return fmt.Errorf("[%d:%d] field %s: an array field takes a list of expressions or buffers, as [rows, 1, 1] (a list per dimension for a multi-dimensional array, as [[g], [p]]); got %s", tk.Position.Line, tk.Position.Column, key, strings.TrimSpace(item.String()))
		}
		e.Elems = append(e.Elems, s)
		e.Paths = append(e.Paths, path)
	}
	return nil
}

// structEntries decodes what structText wrote; ok is false for any other arg.
func structEntries(a string) ([]structEntry, bool) {
	rest, ok := strings.CutPrefix(a, structMarker)
	if !ok {
		return nil, false
	}
	var out []structEntry
	return out, json.Unmarshal([]byte(rest), &out) == nil
}

// structShown writes a struct value as the manifest does: {x_ptr: x, dim: D}.
func structShown(es []structEntry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		v := e.Val
		if e.List {
			v = listShown(e.Elems, e.Paths)
		}
		parts[i] = e.Key + ": " + v
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// structValue is one key of a struct arg, read: each element a buffer's
// name or an expression.
type structValue struct {
	key   string
	list  bool
	paths [][]int         // nested lists: each element's indices; nil for a flat list
	bufs  []string        // per element: a buffer's name, or ""
	progs []*expr.Program // per element: the expression, or nil
	// perIndex: one expression for every element of an array field, which
	// reads the element's index as i.
	perIndex bool
	// shadowsIndex: the expression reads i, which the manifest declares
	// (a dim or value), so i is that name, not the element index.
	shadowsIndex bool
}

func (v structValue) shown() string {
	var parts []string
	for i := range v.bufs {
		parts = append(parts, v.elemShown(i))
	}
	if v.list {
		return listShown(parts, v.paths)
	}
	return parts[0]
}

// elemShown writes element i as the manifest does: a buffer or an expression.
func (v structValue) elemShown(i int) string {
	if v.bufs[i] != "" {
		return v.bufs[i]
	}
	return v.progs[i].Source()
}

// listShown writes a list value as the manifest does: [a, b], or nested
// [[a], [b]] when paths give each element's indices.
func listShown(elems []string, paths [][]int) string {
	if paths == nil {
		return "[" + strings.Join(elems, ", ") + "]"
	}
	var b strings.Builder
	var prev []int
	for k, p := range paths {
		common := 0
		for common < len(prev) && common < len(p) && prev[common] == p[common] {
			common++
		}
		b.WriteString(strings.Repeat("]", len(prev)-common))
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.Repeat("[", len(p)-common))
		b.WriteString(elems[k])
		prev = p
	}
	b.WriteString(strings.Repeat("]", len(prev)))
	return b.String()
}

// structArg reads a mapping arg: buffer names stay names, the rest are
// compiled as expressions.
func (bl *builder) structArg(es []structEntry, path, field string) (uarg, error) {
	// {} is a struct value with no fields: an empty struct's (a functor's)
	// one byte; bindStruct refuses it for a struct with fields.
	a := uarg{text: structShown(es), fields: []structValue{}}
	for _, e := range es {
		elems, list := []string{e.Val}, e.List
		if list {
			elems = e.Elems
		}
		v := structValue{key: e.Key, list: list, paths: e.Paths}
		for j, s := range elems {
			if bl.bufferNames[s] {
				v.bufs, v.progs = append(v.bufs, s), append(v.progs, nil)
				continue
			}
			vars := bl.vars
			if _, declared := vars[elementIndex]; declared && !list && readsName(s, elementIndex) {
				v.shadowsIndex = true
			}
			if !list && readsIndex(s, vars) {
				vars, v.perIndex = maps.Clone(vars), true
				vars[elementIndex] = expr.Int
			}
			p, err := bl.compileIn(vars, s, fmt.Sprintf("%s.%s[%d]", path, e.Key, j), fmt.Sprintf("%s.%s", field, e.Key))
			if err != nil {
				return a, err
			}
			v.bufs, v.progs = append(v.bufs, ""), append(v.progs, p)
		}
		a.fields = append(a.fields, v)
	}
	return a, nil
}

// codeWithHeaders is the source of lang with its local headers as one
// text, where a struct parameter's definition may be.
func (bl *builder) codeWithHeaders(lang string, s source) string {
	if p := bl.f.prep[lang]; p != nil && len(p.units) > 1 {
		return joinUnits(p.units).code
	}
	return s.code
}

// structBinding is a struct parameter's layout and the leaf each of its
// arg's values fills.
type structBinding struct {
	layout structLayout
	leaves []structLeaf // per value of the arg, in order
	at     [][]int      // per value: the flat index each list element fills (args_struct_arrays.go)
	spec   *specStruct  // the type reads the spec (`Scale<T>`): laid out per spec (args_struct_spec.go)
}

// structParam lays out the struct a by-value parameter takes; found is
// false when the parameter's type is not a struct the source defines.
func (bl *builder) structParam(prm csrc.Param, ts typeScope) (structLayout, bool, error) {
	if prm.Pointer || ts.code == "" {
		return structLayout{}, false, nil
	}
	t := structTypeName(prm)
	if c, ok := ts.classes[t]; ok {
		t = c // a template parameter the entry binds to a struct
	}
	if _, scalar := cScalarKinds[ts.resolve(t)]; scalar || t == "" {
		return structLayout{}, false, nil
	}
	if _, enum := ts.enums[ts.resolve(t)]; enum {
		return structLayout{}, false, nil
	}
	if l, ok := vectorLayout(ts.resolve(t)); ok && ts.vectors {
		return l, true, nil
	}
	return newStructTypes(ts.code, ts).layout(t, 0)
}

// structTypeName is a by-value parameter's type without its qualifiers.
func structTypeName(prm csrc.Param) string {
	return strings.Join(strings.Fields(strings.NewReplacer("const", " ", "volatile", " ", "struct", " ").Replace(prm.Scalar)), " ")
}

// bindStruct binds an arg to a by-value struct parameter, or refuses a
// struct value elsewhere and a buffer or scalar given to a struct; handled
// is false when neither is the case.
func (bl *builder) bindStruct(a uarg, prm csrc.Param, ts typeScope, apath, afield, file string, sig csrc.Signature) (up uparam, handled bool, err error) {
	d := bl.d
	up = uparam{param: prm}
	l, found, lerr := bl.structParam(prm, ts)
	if a.fields == nil && !found {
		return up, false, nil
	}
	at := fmt.Sprintf("%s:%d", file, sig.Line)
	switch {
	case a.fields != nil && prm.Pointer:
		return up, true, d.err(apath, afield, "struct value %s goes to parameter `%s` of %s, a pointer: a {field: value} mapping fills a struct taken by value; give a buffer here", a.text, describe(prm), at)
	case lerr != nil:
		return up, true, d.err(apath, afield, "parameter `%s` of %s: %v", describe(prm), at, lerr)
	case a.fields != nil && !found:
		return up, true, d.err(apath, afield, "struct value %s goes to parameter `%s` of %s, but mltop finds no struct %s in the source or its local headers: give an expression for a scalar, or define the struct where mltop reads it", a.text, describe(prm), at, prm.Scalar)
	case a.fields == nil:
		what := "expression " + a.text
		if a.buf != "" {
			what = "buffer " + a.buf
		}
		return up, true, d.err(apath, afield, "%s goes to parameter `%s` of %s, a struct taken by value: give a mapping of its fields, as {%s} (fields: %s)", what, describe(prm), at, exampleFields(l), l.fieldList())
	}
	where := fmt.Sprintf("parameter `%s` of %s", describe(prm), at)
	b, key, err := structLeaves(a, l, where, func(v structValue, lf structLeaf) error { return bl.checkStructValue(v, lf, l) })
	if err != nil {
		if key != "" {
			apath, afield = apath+"."+key, afield+"."+key
		}
		return up, true, d.err(apath, afield, "%v", err)
	}
	if parts, ok := ts.specClasses[structTypeName(prm)]; ok {
		if b.spec, err = bl.specStruct(ts.entry, parts, a, ts, where); err != nil {
			return up, true, d.err(apath, afield, "%v", err)
		}
	}
	up.st = b
	return up, true, nil
}

// structLeaves finds the leaf each value of a fills in layout l (where
// names the parameter); key is the value at fault in an error. check,
// when not nil, holds each value against its leaf.
func structLeaves(a uarg, l structLayout, where string, check func(structValue, structLeaf) error) (b *structBinding, key string, err error) {
	if len(a.fields) == 0 && len(l.leaves) > 0 {
		return nil, "", fmt.Errorf("{} goes to %s, struct %s, which has fields: give the fields to set, as {%s} (fields: %s; {} is for a struct without fields, such as a functor)", where, l.name, exampleFields(l), l.fieldList())
	}
	b = &structBinding{layout: l}
	seen := map[string]bool{}
	for _, v := range a.fields {
		lf, ok := l.leaf(v.key)
		switch {
		case !ok && len(l.leaves) == 0:
			return nil, v.key, fmt.Errorf("struct %s (%s) has no fields, so nothing to set as %s: pass {}", l.name, where, v.key)
		case !ok:
			return nil, v.key, fmt.Errorf("struct %s (%s) has no field %s%s: its fields are %s", l.name, where, v.key, structHint(v.key, leafPaths(l)), l.fieldList())
		case seen[v.key]:
			return nil, v.key, fmt.Errorf("field %s of struct %s is given twice", v.key, l.name)
		}
		seen[v.key] = true
		if check != nil {
			if err := check(v, lf); err != nil {
				return nil, v.key, err
			}
		}
		pos, err := elementPositions(v, lf, l.name)
		if err != nil {
			return nil, v.key, err
		}
		b.leaves, b.at = append(b.leaves, lf), append(b.at, pos)
	}
	return b, "", nil
}

// checkStructValue holds one value against its field: a buffer for a
// pointer, an expression (whose constant fits) for a scalar, a list of
// the field's length for an array.
func (bl *builder) checkStructValue(v structValue, lf structLeaf, l structLayout) error {
	switch {
	case lf.count == 1 && v.list:
		return fmt.Errorf("list %s goes to field `%s` of struct %s, which is not an array: give one %s", v.shown(), lf.decl, l.name, map[bool]string{true: "buffer", false: "expression"}[lf.pointer])
	case lf.count == 1 && v.perIndex:
		return fmt.Errorf("%s reads i, the element index of an array field, but field `%s` of struct %s is not an array", v.shown(), lf.decl, l.name)
	case lf.count > 1 && !v.list && lf.pointer:
		return fmt.Errorf("%s goes to field `%s` of struct %s, an array of pointers: give a list of buffers (a shorter list leaves the rest null)", v.shown(), lf.decl, l.name)
	}
	consts := bl.f.constants()
	for i, buf := range v.bufs {
		switch {
		case lf.pointer && buf == "":
			return fmt.Errorf("expression %s goes to field `%s` of struct %s, a pointer: give a buffer (%s)", v.progs[i].Source(), lf.decl, l.name, strings.Join(bufNames(bl.f.bufs), ", "))
		case !lf.pointer && buf != "":
			return fmt.Errorf("buffer %s goes to field `%s` of struct %s, a scalar: give an expression (a number, a dim, a value)", buf, lf.decl, l.name)
		case lf.pointer && lf.readOnly && bl.buf(buf).out:
			return fmt.Errorf("output buffer %s goes to field `%s` of struct %s, which the kernel cannot write through: drop the const, or give an input there", buf, lf.decl, l.name)
		case !lf.pointer && !v.perIndex:
			if x, ok := constArg(v.progs[i], consts); ok {
				if _, err := profiler.ScalarOf(lf.kind, v.key, x); err != nil {
					return fmt.Errorf("%s = %v goes to field `%s` of struct %s: %v", v.progs[i].Source(), x, lf.decl, l.name, err)
				}
			}
		}
	}
	return nil
}

// structHint is "; did you mean X?" for a key near one of the fields.
func structHint(key string, paths []string) string {
	if h := profiler.DidYouMean(key, paths); h != "" {
		return "; " + strings.TrimSpace(h)
	}
	return ""
}

func leafPaths(l structLayout) []string {
	out := make([]string, len(l.leaves))
	for i, lf := range l.leaves {
		out[i] = lf.path
	}
	return out
}

// exampleFields writes the first fields as a mapping's start: "x_ptr: …, dim: …".
func exampleFields(l structLayout) string {
	var parts []string
	for _, lf := range l.leaves[:min(3, len(l.leaves))] {
		parts = append(parts, lf.path+": …")
	}
	return strings.Join(parts, ", ")
}

// structArgOf packs a struct arg for a spec: its scalars evaluated into the
// struct's bytes at their offsets, its buffers appended to pd.Args and
// listed as the pointers the backend fills in.
func (f *Family) structArgOf(pd *profiler.Dispatch, up uparam, a uarg, dt profiler.DType, e map[string]any) (profiler.StructArg, error) {
	if up.st.spec != nil { // its type reads the spec: laid out for this one
		b, err := up.st.spec.bindingFor(a, dt, e)
		if err != nil {
			return profiler.StructArg{}, err
		}
		up.st = b
	}
	l := up.st.layout
	st := profiler.StructArg{Name: up.param.Name, Type: l.name, Bytes: make([]byte, l.size)}
	for i, v := range a.fields {
		lf := up.st.leaves[i]
		if !v.list && lf.count > 1 { // one expression for every element
			if err := fillElements(st.Bytes, v.progs[0], lf, e); err != nil {
				return st, err
			}
			continue
		}
		for k := range v.bufs {
			off := lf.offset + k*lf.size
			name := lf.path
			if v.list {
				off = lf.offset + up.st.at[i][k]*lf.size
				name = fmt.Sprintf("%s[%d]", lf.path, up.st.at[i][k])
			}
			if buf := v.bufs[k]; buf != "" {
				if have := f.bufDType(buf, dt); lf.elem != "" && have != lf.elem {
					return st, fmt.Errorf("field %s: buffer %s holds %s but field `%s` points to %s: %s", name, buf, have, lf.decl, lf.elem, f.dtypeFix(buf, have, lf.elem, "declare the field with the dtype's name or void*"))
				}
				st.Pointers = append(st.Pointers, profiler.StructPointer{Field: name, Offset: off, Arg: len(pd.Args)})
				pd.Args = append(pd.Args, buf)
				continue
			}
			x, err := v.progs[k].Eval(e)
			if err != nil {
				return st, fmt.Errorf("field %s: %w", name, err)
			}
			sc, err := profiler.ScalarOf(lf.kind, name, x)
			if err != nil {
				return st, fmt.Errorf("%v (field `%s`)", err, lf.decl)
			}
			copy(st.Bytes[off:], sc.Bytes())
		}
	}
	return st, nil
}

// StructNotes say, per CUDA struct parameter of lang's source, which
// fields the args leave zero (they are passed as zero bytes).
func (f *Family) StructNotes(lang string) []string {
	var out []string
	for _, d := range f.disps {
		for _, up := range d.bind[lang].params {
			if up.st == nil {
				continue
			}
			var zero []string
			for _, lf := range up.st.layout.leaves {
				if !slices.ContainsFunc(up.st.leaves, func(g structLeaf) bool { return g.path == lf.path }) {
					zero = append(zero, lf.path)
				}
			}
			var part, cautions []string
			for k, v := range d.args[up.arg].fields {
				if p := partialNote(v, up.st.leaves[k]); p != "" {
					part = append(part, p)
				}
				cautions = append(cautions, arrayCautions(v, up.st.leaves[k])...)
			}
			var says []string
			if len(zero) > 0 {
				says = append(says, "fields not in args are zero: "+strings.Join(zero, ", "))
			}
			if len(part) > 0 {
				says = append(says, "array fields given in part, the rest zero: "+strings.Join(part, ", "))
			}
			says = append(says, cautions...)
			if len(says) > 0 {
				out = append(out, fmt.Sprintf("dispatch %s: struct %s %s (%d bytes): %s", d.name, up.st.layout.name, up.param.Name, up.st.layout.size, strings.Join(says, "; ")))
			}
		}
	}
	return out
}
