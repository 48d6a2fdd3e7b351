package scaffold

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// This file writes the arg of a CUDA struct taken by value as the mapping
// mltop lays out (docs/own-kernels.md, "A struct taken by value"): pointer
// fields are buffers, integer fields dims, float fields values, arrays
// lists; a field new cannot type (the loader cannot lay it out either) is
// left out with a TODO saying the manifest loads once its type changes.

// structFiller collects one struct arg's mapping entries.
type structFiller struct {
	c       *context
	p       *plan
	k       *kernelScan
	pname   string
	macros  map[string]string
	entries []string // "key: value"
	leftOut []string // fields left out: "name (why)"
}

// scalarStruct is the fields of struct name when each is one scalar (a
// Metal kernel's `constant P& p`, whose fields mltop packs into one
// struct); nil when the source defines no such struct, or it has a base,
// no field, or a pointer or array field.
func (c *context) scalarStruct(name string) []csrc.StructField {
	fs, seen := c.scalarStructs[name]
	if !seen {
		fs = readScalarStruct(c.src, name)
		c.scalarStructs[name] = fs
	}
	return fs
}

// metalStruct is the Metal parameter struct name as the loader packs it
// (metal.StructFields): scalar fields and fixed arrays of them, as ggml's
// kargs declare `int32_t nef1[3]; uint64_t nbf1[3];` beside the scalars.
// nil when the source has no such struct or mltop cannot pack it.
func (c *context) metalStruct(name string) []metal.StructField {
	if c.lang != "metal" {
		return nil
	}
	fs, seen := c.metalStructs[name]
	if !seen {
		var found bool
		var err error
		fs, found, err = metal.StructFields(c.src, strings.TrimSpace(strings.ReplaceAll(name, "const", "")))
		if !found || err != nil {
			fs = nil
		}
		c.metalStructs[name] = fs
	}
	return fs
}

func readScalarStruct(src, name string) []csrc.StructField {
	d, found, err := csrc.FindStruct(src, name)
	if !found || err != nil || d.Base != "" || len(d.Fields) == 0 {
		return nil
	}
	for _, f := range d.Fields {
		if f.Pointer || f.Extents != nil {
			return nil
		}
	}
	return d.Fields
}

// structMapping is the arg of struct ctype taken by value as a mapping of
// its fields; an error when new cannot read the struct (its arg is then
// the 0 and TODO of structArg).
func (c *context) structMapping(p *plan, k *kernelScan, pname, ctype string) (string, error) {
	sf := &structFiller{c: c, p: p, k: k, pname: pname, macros: csrc.ObjectMacros(csrc.Scan(c.src))}
	if err := sf.fill(ctype, "", 0); err != nil {
		return "", err
	}
	if len(sf.entries) == 0 {
		return "", fmt.Errorf("struct %s has no field mltop new can fill", ctype)
	}
	if len(sf.leftOut) > 0 {
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("fields of %s left out: %s; mltop lays out scalars, pointers and structs of them: change those fields' types", pname, strings.Join(sf.leftOut, ", ")),
			"%s: %s (struct %s): fields left out: %s; mltop lays out scalar, pointer and struct fields only, so the manifest does not load until those fields are declared as such", k.sig.Entry, pname, ctype, strings.Join(sf.leftOut, ", ")))
	}
	return "{" + strings.Join(sf.entries, ", ") + "}", nil
}

// fill adds the fields of struct name (its base's first) under prefix;
// an error when the struct is not found or cannot be read.
func (sf *structFiller) fill(name, prefix string, depth int) error {
	name = sf.c.resolve(name)
	d, found, err := csrc.FindStruct(sf.c.src, templateName(name))
	if found && err == nil && name != templateName(name) {
		sf.instantiate(d, name)
	}
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("no struct %s in the source or its local headers", name)
	case depth > 8:
		return fmt.Errorf("struct %s nests structs more than 8 deep", name)
	}
	if d.Base != "" {
		if err := sf.fill(d.Base, prefix, depth+1); err != nil {
			return err
		}
	}
	for _, f := range d.Fields {
		if err := sf.field(f, prefix, depth); err != nil {
			return err
		}
	}
	return nil
}

// field adds one field's entry, or records why it is left out.
func (sf *structFiller) field(f csrc.StructField, prefix string, depth int) error {
	key := prefix + f.Name
	count := 1
	for _, x := range f.Extents {
		n, ok := csrc.IntConst(x, sf.macros)
		if !ok || n <= 0 {
			sf.leftOut = append(sf.leftOut, fmt.Sprintf("%s (extent %s is no constant)", key, x))
			return nil
		}
		count *= int(n)
	}
	t := sf.c.resolve(f.Type)
	var elem func(i int) string
	switch {
	case f.Pointer:
		elem = func(i int) string { return sf.buffer(f, key, count, i) }
	case sf.c.generic(t, sf.k.sig):
		sf.leftOut = append(sf.leftOut, fmt.Sprintf("%s (the dtype's type)", key))
		return nil
	case intFieldTypes[t]:
		elem = func(int) string {
			if count > 1 {
				return "1"
			}
			return sf.c.intParam(sf.p, sf.k, f.Name, t)
		}
	case t == "float" || t == "double" || halfScalar[t]:
		elem = func(int) string {
			if count > 1 {
				return "1.0"
			}
			if halfScalar[t] {
				return sf.c.halfValue(sf.p, f.Name, t)
			}
			return sf.c.value(sf.p, f.Name, "")
		}
	case t == "bool":
		elem = func(int) string { return sf.c.scalarParam(sf.p, sf.k, f.Name, "bool") }
	default:
		if m, ok := sf.c.vectorArg(t); ok && count == 1 { // uint3 g: {x: 0, y: 0, z: 0}
			sf.entries = append(sf.entries, key+": "+m)
			return nil
		}
		if _, found, _ := csrc.FindStruct(sf.c.src, t); !found || count > 1 {
			sf.leftOut = append(sf.leftOut, fmt.Sprintf("%s (type %s)", key, f.Type))
			return nil
		}
		return sf.fill(t, key+".", depth+1)
	}
	if count == 1 {
		sf.entries = append(sf.entries, key+": "+quote(elem(0)))
		return nil
	}
	vals := make([]string, count)
	for i := range vals {
		vals[i] = quote(elem(i))
	}
	sf.entries = append(sf.entries, fmt.Sprintf("%s: [%s]", key, strings.Join(vals, ", ")))
	if !f.Pointer {
		sf.k.argsTODOs = append(sf.k.argsTODOs, sf.p.todo(fmt.Sprintf("the %d elements of %s.%s", count, sf.pname, key),
			"%s: array field %s of %s has %d elements set to 1: set the values you run with", sf.k.sig.Entry, key, sf.pname, count))
	}
	return nil
}

// buffer adds the buffer a pointer field (element i of count) points to:
// named after the field, its _ptr suffix dropped when that name is free;
// an input when it points to const, else an output.
func (sf *structFiller) buffer(f csrc.StructField, key string, count, i int) string {
	name := strings.TrimSuffix(f.Name, "_ptr")
	if name == "" || name == f.Name || sf.p.taken[name] != "" || safeName(name, sf.c.dtypeName) != name {
		name = f.Name
	}
	if count > 1 {
		name = fmt.Sprintf("%s_%d", name, i)
	}
	dt := sf.c.elemDType(f.Type, sf.k.sig)
	b := &buffer{dtype: dt, readOnlyUse: f.PointeeConst}
	b.name, _ = sf.p.claim(safeName(name, sf.c.dtypeName), "buffer")
	if f.PointeeConst {
		b.init = inputInit(sf.p, dt)
	} else {
		b.role = "out"
		b.how = sf.p.todo(fmt.Sprintf("field %s of %s is not const: guessed an output; make it an input (init) if the kernel only reads it", key, sf.pname),
			"%s: pointer field %s of %s is not const: guessed buffer %s is an output", sf.k.sig.Entry, key, sf.pname, b.name)
	}
	sf.p.bufs = append(sf.p.bufs, b)
	sf.k.newBufs = append(sf.k.newBufs, b)
	return b.name
}

// intFieldTypes are the integer field types mltop lays out (a typedef
// followed first); vector types (int2, char4) are not among them.
var intFieldTypes = map[string]bool{}

func init() {
	for _, t := range strings.Split("char,signed char,int8_t,unsigned char,uint8_t,uchar,short,short int,signed short,int16_t,"+
		"unsigned short,unsigned short int,uint16_t,ushort,int,signed,signed int,int32_t,unsigned,unsigned int,uint32_t,uint,"+
		"long,long int,long long,long long int,int64_t,ptrdiff_t,ssize_t,unsigned long,unsigned long int,unsigned long long,"+
		"unsigned long long int,uint64_t,size_t", ",") {
		intFieldTypes[t] = true
	}
}

// resolve follows the source's typedefs (and member usings) to the type
// they name.
func (c *context) resolve(t string) string {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	for range 4 {
		u, ok := c.typedefs[t]
		if !ok || u == "" {
			return t
		}
		t = u
	}
	return t
}

// templateName is a class template instance's template (Lists of
// Lists<4>); other names as they are.
func templateName(t string) string {
	name, _, _ := strings.Cut(t, "<")
	return strings.TrimSpace(name)
}

// instantiate makes the template arguments of instance (`Lists<4>`) the
// values of the class template's parameters in its fields' extents
// (`float* ptrs[N]` has 4 elements).
func (sf *structFiller) instantiate(d csrc.StructDecl, instance string) {
	toks := sf.c.toks
	var tmpl []tparam
	for i, t := range toks {
		if t.Text == d.Name && t.Line == d.Line && i > 0 && (toks[i-1].Text == "struct" || toks[i-1].Text == "class") {
			tmpl = templateOf(toks, i)
			break
		}
	}
	_, list, _ := strings.Cut(instance, "<")
	args := splitArgs(strings.TrimSuffix(strings.TrimSpace(list), ">"))
	macros := map[string]string{}
	for k, v := range sf.macros {
		macros[k] = v
	}
	for i, tp := range tmpl {
		if i < len(args) && !tp.isType {
			macros[tp.name] = args[i]
		}
	}
	sf.macros = macros
}
