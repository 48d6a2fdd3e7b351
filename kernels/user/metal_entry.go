package user

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file wires what the metal package reads in a Metal source into the
// manifest: entries by [[host_name]], scalars bound one per [[buffer(n)]]
// index (MLX style) as their parameter's type, and function constants
// (`constants:`). bind (dispatches.go) calls the first two.

// metalOverloads are the kernels a Metal entry names: the template a
// [[host_name]] instantiates, its parameter types read with the template
// arguments put in (metal.EntrySignature); a template named with its
// arguments (`scale_rows<T>`), those of its arguments the manifest fixes
// put in (metalTemplateSignature); or the kernels of that name. Each
// `constant T&` scalar parameter (MLX style, one per [[buffer(n)]]) comes
// back as a by-value T, so that it takes an expression evaluated as its
// own C type; T may be the dtype name. found lists the kernels and host
// names when there is no such entry.
func metalOverloads(src string, e *entryExpr, dtype string) (sigs []csrc.Signature, found []string, err error) {
	hosts, err := metal.HostNames(src)
	if err != nil {
		return nil, nil, err
	}
	if _, isHost := hosts[e.name]; isHost && !e.hasArgs {
		sig, _, err := metal.EntrySignature(src, e.name)
		if err != nil {
			return nil, nil, err
		}
		sigs = []csrc.Signature{sig}
	} else if sigs, found = metal.KernelOverloads(src, e.name); len(sigs) == 0 {
		found = append(found, slices.Sorted(maps.Keys(hosts))...)
		return nil, found, nil
	}
	for i := range sigs {
		if e.hasArgs {
			sigs[i] = metalTemplateSignature(sigs[i], e, dtype)
		}
		if sigs[i], err = byValueScalars(sigs[i], dtype); err != nil {
			return nil, nil, err
		}
	}
	return sigs, nil, nil
}

// metalTemplateSignature puts into a kernel template's parameter types
// the entry's template arguments that are the same for every spec: a
// type it names (`k<float>`: `device U* x` is `device float* x`) and the
// dtype name (`k<T>` over `template <typename U>`: `device T* x`, a
// buffer of the dtype). Arguments of knobs or {expr} stay template
// parameters.
func metalTemplateSignature(sig csrc.Signature, e *entryExpr, dtype string) csrc.Signature {
	binds := map[string]string{}
	for i, arg := range e.topArgs() {
		if i >= len(sig.Template) {
			break
		}
		if text, ok := fixedArg(arg, dtype); ok {
			binds[sig.Template[i]] = text
		}
	}
	return metal.BindTemplate(sig, binds)
}

// fixedArg is a template argument's text when no spec changes it: words
// and numbers only, or the dtype name.
func fixedArg(arg []entryPart, dtype string) (string, bool) {
	arg = slices.DeleteFunc(slices.Clone(arg), func(p entryPart) bool { // the spaces around a name
		return p.name == "" && p.p == nil && strings.TrimSpace(p.lit) == ""
	})
	if len(arg) == 1 && arg[0].name == dtype {
		return dtype, true
	}
	var words []string
	for _, p := range arg {
		if p.lit == "" {
			return "", false
		}
		words = append(words, strings.Fields(p.lit)...)
	}
	return strings.Join(words, " "), len(words) > 0
}

// metalTemplate is the entry as metal.CheckTemplateEntry reads it when the
// manifest loads: the dtype name stands for a type, a knob, dim, flag or
// {expr} for a value a spec gives ("": its range is checked per spec,
// metalTemplateFits).
func (e *entryExpr) metalTemplate(dtype string) metal.TemplateEntry {
	te := metal.TemplateEntry{Name: e.name, Written: e.text, DType: dtype}
	for _, arg := range e.topArgs() {
		switch text, fixed := fixedArg(arg, dtype); {
		case fixed:
			te.Args = append(te.Args, text)
		default:
			te.Args = append(te.Args, "")
		}
	}
	return te
}

// checkMetalTemplate refuses, when the manifest loads, a Metal entry with
// template arguments that its template cannot take (metal.CheckTemplateEntry):
// no such kernel template, arguments of the wrong count or kind, a
// literal its parameter's type cannot hold.
func (bl *builder) checkMetalTemplate(e *entryExpr, s source, path, field string) error {
	if !e.hasArgs {
		return nil
	}
	if err := metal.CheckTemplateEntry(bl.metalCode(), e.metalTemplate(bl.dtypeName())); err != nil {
		return bl.d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
	}
	return nil
}

// metalTemplateFits checks a Metal template entry as a spec renders it
// (`scale_rows<half, 70000>`) against the template in the program's
// source: an error says which argument does not fit (the spec is
// invalid). The backends launch what metal.InstantiateEntry makes of it.
func metalTemplateFits(prog profiler.Program, entry string) error {
	te, ok := metal.ParseTemplateEntry(entry)
	if !ok {
		return nil
	}
	code, err := metal.AssembleUserSource(prog)
	if err != nil {
		return err
	}
	return metal.CheckTemplateEntry(code, te)
}

// metalSlots are sig's [[buffer(n)]] slots (metal.Slots), where a
// `constant T&` of the dtype name T is a scalar of the dtype: of ctype,
// the spec's Metal type, when a spec is known, else of type T (its kind
// then follows the spec, as a buffer of T's element type does).
func metalSlots(sig csrc.Signature, dtype, ctype string) ([]metal.Slot, error) {
	as := ctype
	if as == "" {
		as = "float" // a scalar type of the same slot kind
	}
	concrete := metal.BindTemplate(sig, map[string]string{dtype: as})
	slots, err := metal.Slots(concrete)
	if err != nil || ctype != "" {
		return slots, err
	}
	for i, p := range sig.Params {
		if k := slices.IndexFunc(slots, func(sl metal.Slot) bool { return sl.Name == p.Name }); k >= 0 && concrete.Params[i].Type != p.Type {
			slots[k].Type = metal.SubstituteTemplateArgs(slots[k].Type, map[string]string{as: dtype})
		}
	}
	return slots, nil
}

// byValueScalars rewrites sig's `constant T&` parameters of a scalar type
// (or of the dtype name) as by-value T parameters (their Type stays as
// written, for messages).
func byValueScalars(sig csrc.Signature, dtype string) (csrc.Signature, error) {
	slots, err := metalSlots(sig, dtype, "")
	if err != nil {
		return sig, err
	}
	params := slices.Clone(sig.Params)
	k := 0
	for i := range params {
		if !strings.HasPrefix(params[i].Attr, "buffer(") {
			continue
		}
		sl := slots[k]
		k++
		if sl.Kind != metal.SlotScalar {
			continue
		}
		p := &params[i]
		p.Pointer, p.ReadOnly, p.Pointee, p.Scalar = false, false, "", sl.Type // half: an f16 scalar, rounded once
	}
	sig.Params = params
	return sig, nil
}

// metalStruct says whether a Metal entry takes its scalars as one struct
// (`constant Params& p [[buffer(n)]]`).
func (bl *builder) metalStruct(sig csrc.Signature) bool {
	slots, _ := metalSlots(sig, bl.dtypeName(), "") // an error was reported by metalOverloads
	return slices.ContainsFunc(slots, func(sl metal.Slot) bool { return sl.Kind == metal.SlotStruct })
}

// checkMetalSlots refuses the [[buffer(n)]] parameters mltop cannot fill
// for this manifest: a struct beside other scalar parameters, a struct
// without scalars. (A `constant T*` array takes a buffer, as a device
// pointer does: bindOne checks it.)
func (bl *builder) checkMetalSlots(ud udisp, sig csrc.Signature, s source, path, field string) error {
	d := bl.d
	slots, err := metalSlots(sig, bl.dtypeName(), "")
	if err != nil {
		return d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
	}
	var structs, scalars int
	for _, sl := range slots {
		switch sl.Kind {
		case metal.SlotStruct:
			structs++
		case metal.SlotScalar:
			scalars++
		}
	}
	hasScalar := slices.ContainsFunc(ud.args, func(a uarg) bool { return a.buf == "" })
	switch {
	case structs > 1 || structs == 1 && scalars > 0:
		return d.err(path+".entry", field+".entry", "%s:%d %s takes %d constant structs and %d `constant T&` scalars: mltop fills one struct only when it is the kernel's only scalar parameter, else one `constant T&` per scalar", s.path, sig.Line, sig, structs, scalars)
	case structs == 1 && !hasScalar:
		return d.err(path+".args", field+".args", "%s:%d %s takes a constant struct but args gives no scalars: list the struct's fields as expressions after the buffers, in the struct's order", s.path, sig.Line, sig)
	}
	return nil
}

// metalFits places a dispatch's buffers and scalars on its entry's
// [[buffer(n)]] slots as the Metal backend will (metal.Bind; a slot of
// the dtype name as ctype, the spec's type), so that a
// value its slot cannot hold (a half beyond ±65504) makes the spec
// invalid when planned rather than failing the run.
func metalFits(pd profiler.Dispatch, sig csrc.Signature, dtype, ctype string) error {
	slots, err := metalSlots(sig, dtype, ctype)
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", pd.Name, err)
	}
	if _, err := metal.Bind(slots, len(pd.Args), pd.Scalars); err != nil {
		return fmt.Errorf("dispatch %s: %w", pd.Name, err)
	}
	return nil
}

// fconst is one manifest `constants:` entry.
type fconst struct {
	decl metal.DeclaredConstant
	p    *expr.Program
}

// constants reads `constants:`: each key names a function constant of the
// Metal source, each value is an expression over the knobs, dims and
// flags. A declared constant without a value is an error unless the
// source tests it with is_function_constant_defined or only kernels that
// no dispatch launches read it (Metal asks a value only of the function
// that uses it). The constants are not defined as macros (the source
// declares them). It runs after dispatches, which name the kernels.
func (bl *builder) constants() error {
	f, m, d := bl.f, bl.m, bl.d
	src, ok := f.src["metal"]
	if !ok {
		if len(m.Constants) > 0 {
			return d.err("$.constants", "constants", "constants: sets Metal function constants, but the manifest has no Metal source")
		}
		return nil
	}
	// The source with its local headers: a constant's index may name a
	// header's #define (ggml: FC_BIN + 1), and a header may declare one.
	launched := bl.launchedMetalKernels()
	decls, err := metal.FunctionConstants(launched.code)
	if err != nil {
		return d.err("$.constants", "constants", "%s: %v", src.path, err)
	}
	byName := map[string]metal.DeclaredConstant{}
	var names []string
	for _, dc := range decls {
		byName[dc.Name] = dc
		names = append(names, dc.Name)
	}
	for _, name := range orderedKeys(d.keys("$.constants"), m.Constants) {
		path, field := "$.constants."+name, "constants."+name
		dc, ok := byName[name]
		if !ok {
			declared := "declares none"
			if len(names) > 0 {
				declared = "declares " + strings.Join(names, ", ")
			}
			return d.err(path, field, "%s has no function constant %s (it %s): declare `constant int %s [[function_constant(n)]];` or remove the key", src.path, name, declared, name)
		}
		p, err := bl.compile(m.Constants[name], path, field)
		if err != nil {
			return err
		}
		if dc.Kind == profiler.ConstBool && !p.IsBool() {
			return d.err(path, field, "%s is declared bool in %s: give a flag or a comparison, e.g. `%s: causal` or `%s: \"BQ > 32\"`", name, src.path, name, name)
		}
		f.consts = append(f.consts, fconst{decl: dc, p: p})
	}
	given := func(name string) bool { _, ok := m.Constants[name]; return ok }
	if need := ConstantsNeedingValue(launched.code, decls, given, launched.notLaunched); len(need) > 0 {
		dc := need[0] // the first the source declares
		return d.err("$.constants", "constants", "%s declares function constant %s (%s, index %d) but constants: gives it no value: add `constants: {%s: <expression>}` (or test it with is_function_constant_defined(%s) in the source)",
			src.path, dc.Name, dc.Type, dc.Index, dc.Name, dc.Name)
	}
	return nil
}

// metalKernels is the Metal source with its local headers, and which of
// its kernels the dispatches launch.
type metalKernels struct {
	code     string
	launched map[string]bool // kernel names without namespace; a [[host_name]]'s template
}

func (k metalKernels) notLaunched(name string) bool { return !k.launched[name] }

// launchedMetalKernels names the kernels the manifest's dispatches launch
// in its Metal source: an entry that is a [[host_name]] launches the
// template it instantiates.
func (bl *builder) launchedMetalKernels() metalKernels {
	code := bl.f.src["metal"].code
	if p := bl.f.prep["metal"]; p != nil && len(p.units) > 1 {
		code = joinUnits(p.units).code
	}
	k := metalKernels{code: code, launched: map[string]bool{}}
	hosts, _ := metal.HostNames(code) // an error was reported when the entries were bound
	for _, ud := range bl.f.disps {
		name := ud.entry.name
		if inst, ok := hosts[name]; ok {
			name = inst.Template
		}
		k.launched[name[strings.LastIndex(name, ":")+1:]] = true
	}
	return k
}

// ConstantsNeedingValue are the function constants of code (decls) that a
// manifest must give a value: those the launched kernels read, directly
// or through the helpers, globals and macros they use, unless given
// already or tested with is_function_constant_defined. A constant only
// kernels notLaunched reads (MLX's vjp kernels), or their helpers, needs
// none. The loader refuses a manifest that leaves one out; mltop new
// writes a value for each.
func ConstantsNeedingValue(code string, decls []metal.DeclaredConstant, given func(name string) bool, notLaunched func(kernel string) bool) []metal.DeclaredConstant {
	var out []metal.DeclaredConstant
	var reached map[string]bool // read on the first constant without a value
	for _, dc := range decls {
		if given(dc.Name) || definedTest(code, dc.Name) {
			continue
		}
		if reached == nil {
			reached = csrc.NamesReached(code, notLaunched)
		}
		if reached[dc.Name] {
			out = append(out, dc)
		}
	}
	return out
}

// definedTest says whether src tests name with is_function_constant_defined.
func definedTest(src, name string) bool { return metal.TestsDefined(src, name) }

// functionConstants are the constants' values for a spec, checked against
// their declarations (range, kind) as the Metal backend will: in the
// program's source with its headers pasted, where an index's macros are.
func (f *Family) functionConstants(e map[string]any, prog profiler.Program) ([]profiler.FunctionConstant, error) {
	var out []profiler.FunctionConstant
	for _, c := range f.consts {
		fc := profiler.FunctionConstant{Name: c.decl.Name, Index: c.decl.Index, Kind: c.decl.Kind}
		switch c.decl.Kind {
		case profiler.ConstBool:
			b, err := c.p.Bool(e)
			if err != nil {
				return nil, err
			}
			if b {
				fc.I = 1
			}
		case profiler.ConstHalf, profiler.ConstFloat:
			v, err := c.p.Float(e)
			if err != nil {
				return nil, err
			}
			fc.F = v
		default:
			v, err := c.p.Int(e)
			if err != nil {
				return nil, err
			}
			fc.I = v
		}
		out = append(out, fc)
	}
	code, err := metal.AssembleUserSource(prog)
	if err != nil {
		return nil, err
	}
	if _, err := metal.ResolveConstants(code, out); err != nil {
		return nil, fmt.Errorf("%v (for %s)", err, f.constValues(e))
	}
	return out, nil
}

// constValues names the values the constants' expressions used.
func (f *Family) constValues(e map[string]any) string {
	var parts []string
	for _, c := range f.consts {
		parts = append(parts, c.decl.Name+": "+c.p.Source()+" ("+valuesOf(e, c.p)+")")
	}
	return strings.Join(parts, "; ")
}
