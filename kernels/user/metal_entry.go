package user

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file wires what the metal package reads in a Metal source into the
// manifest: entries by [[host_name]], function constants (`constants:`),
// and scalars bound one per [[buffer(n)]] index (MLX style).

// checkMetalEntry checks a dispatch's args against its Metal entry: a
// kernel or a [[host_name]] instantiation. Buffers go to the `device`
// parameters in order; the scalars either to one `constant Struct&` or
// one per `constant T&` parameter (by index, at T's size).
func (bl *builder) checkMetalEntry(ud udisp, s source, path, field string) error {
	d := bl.d
	if bl.f.mlx != nil {
		return nil // mltop wrote the signature from the inputs and outputs (mlx.go)
	}
	sig, found, err := metal.EntrySignature(s.code, ud.entry)
	if err != nil {
		hint := "no kernel functions found"
		if len(found) > 0 {
			slices.Sort(found)
			hint = "kernels found: " + strings.Join(found, ", ")
		}
		return d.err(path+".entry", field+".entry", "%s: %v (%s)", s.path, err, hint)
	}
	slots, err := metal.Slots(sig)
	if err != nil {
		return d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
	}
	var bufs, scalars, structs int
	for _, sl := range slots {
		switch sl.Kind {
		case metal.SlotBuffer:
			bufs++
		case metal.SlotStruct:
			structs++
		case metal.SlotScalar:
			scalars++
		case metal.SlotArray:
			if !slices.ContainsFunc(ud.scalars, func(u uscalar) bool { return strings.HasPrefix(u.name, sl.Name+"[") }) {
				return d.err(path+".args", field+".args", "%s:%d %s takes %s (constant %s*), which mltop fills only for MLX-style manifests (`mlx:`): pass it as a device buffer instead", s.path, sig.Line, sig, sl.Name, sl.Type)
			}
		}
	}
	ok := bufs == len(ud.bufArgs) && (structs == 1 && scalars == 0 && len(ud.scalars) > 0 || structs == 0 && scalars == len(ud.scalars)-bl.arrayScalars(ud))
	if !ok {
		return d.err(path+".args", field+".args", "%d buffers and %d scalars but %s:%d %s takes %d device buffers and %s: list the buffers and scalars in the parameter order",
			len(ud.bufArgs), len(ud.scalars), s.path, sig.Line, sig, bufs, scalarParams(structs, scalars))
	}
	return nil
}

// arrayScalars counts the scalars a dispatch fills constant arrays with
// (named "x_shape[0]", …: MLX-style manifests).
func (bl *builder) arrayScalars(ud udisp) int {
	n := 0
	for _, u := range ud.scalars {
		if strings.HasSuffix(u.name, "]") && strings.Contains(u.name, "[") {
			n++
		}
	}
	return n
}

func scalarParams(structs, scalars int) string {
	switch {
	case structs > 0:
		return fmt.Sprintf("%d constant struct (which takes all the scalars)", structs)
	case scalars == 1:
		return "1 `constant T&` scalar"
	}
	return fmt.Sprintf("%d `constant T&` scalars", scalars)
}

// fconst is one manifest `constants:` entry.
type fconst struct {
	decl metal.DeclaredConstant
	p    *expr.Program
}

// constants reads `constants:`: each key names a function constant of the
// Metal source, each value is an expression over the knobs, dims and
// flags. A declared constant without a value is an error unless the
// source tests it with is_function_constant_defined. The constants are
// not defined as macros (the source declares them).
func (bl *builder) constants() error {
	f, m, d := bl.f, bl.m, bl.d
	src, ok := f.src["metal"]
	if !ok {
		if len(m.Constants) > 0 {
			return d.err("$.constants", "constants", "constants: sets Metal function constants, but the manifest has no Metal source")
		}
		return nil
	}
	decls, err := metal.FunctionConstants(src.code)
	if err != nil {
		return d.err("$.constants", "constants", "%s: %v", src.path, err)
	}
	byName := map[string]metal.DeclaredConstant{}
	var names []string
	for _, dc := range decls {
		byName[dc.Name] = dc
		names = append(names, dc.Name)
		f.paramNames["metal"][dc.Name] = true
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
	for _, dc := range decls {
		if _, given := m.Constants[dc.Name]; given || definedTest(src.code, dc.Name) {
			continue
		}
		return d.err("$.constants", "constants", "%s declares function constant %s (%s, index %d) but constants: gives it no value: add `constants: {%s: <expression>}` (or test it with is_function_constant_defined(%s) in the source)",
			src.path, dc.Name, dc.Type, dc.Index, dc.Name, dc.Name)
	}
	return nil
}

// definedTest says whether src tests name with is_function_constant_defined.
func definedTest(src, name string) bool { return metal.TestsDefined(src, name) }

// functionConstants are the constants' values for a spec, checked against
// their declarations (range, kind) as the Metal backend will.
func (f *Family) functionConstants(e map[string]any, code string) ([]profiler.FunctionConstant, error) {
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
	if _, err := metal.ResolveConstants(code, out); err != nil {
		return nil, fmt.Errorf("%v (for %s)", err, f.constValues(e))
	}
	return out, nil
}

// constValues names the values the constants' expressions used.
func (f *Family) constValues(e map[string]any) string {
	var parts []string
	for _, c := range f.consts {
		parts = append(parts, c.decl.Name+": "+c.p.Source()+" ("+valuesOf(c.p, e)+")")
	}
	return strings.Join(parts, "; ")
}
