package user

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// dtypes reads the dtypes (f32 when none are listed).
func (bl *builder) dtypes() error {
	f, m, d := bl.f, bl.m, bl.d
	if len(m.DTypes) == 0 {
		m.DTypes = []string{"f32"}
	}
	for i, s := range m.DTypes {
		dt, err := profiler.ParseDType(s)
		if err != nil {
			path, field := d.item("$.dtypes", "dtypes", i)
			return d.err(path, field, "%v", err)
		}
		f.schema.DTypes = append(f.schema.DTypes, dt)
	}
	return nil
}

// params reads the knobs and dims in file order.
func (bl *builder) params() error {
	f, m, d := bl.f, bl.m, bl.d
	for _, name := range orderedKeys(d.keys("$.knobs"), m.Knobs) {
		p, err := bl.param("knobs", name, m.Knobs[name], false)
		if err != nil {
			return err
		}
		f.schema.Knobs = append(f.schema.Knobs, p)
	}
	for _, name := range orderedKeys(d.keys("$.dims"), m.Dims) {
		p, err := bl.param("dims", name, m.Dims[name], true)
		if err != nil {
			return err
		}
		f.schema.Dims = append(f.schema.Dims, p)
	}
	return nil
}

// param checks one knob (or dim, isDim) and declares it in the builder's
// expression variables.
func (bl *builder) param(kind, name string, p paramYAML, isDim bool) (profiler.Param, error) {
	d := bl.d
	path := fmt.Sprintf("$.%s.%s", kind, name)
	field := kind + "." + name
	if !userNameRE.MatchString(name) {
		return profiler.Param{}, d.err(path, field, "%q is not a C identifier: it becomes a -D macro (%s)", name, identHint(name))
	}
	if prev, dup := bl.seen[name]; dup {
		if prev == "the dtype" {
			return profiler.Param{}, d.err(path, field, "%s is already the dtype's name in the source: set `dtype_name: floatX` (the source's name for the element type) to free %s for a %s", name, name, kind[:len(kind)-1])
		}
		return profiler.Param{}, d.err(path, field, "%s is already %s: names must be unique across knobs, dims and flags", name, prev)
	}
	if msg := reservedError(name, kind[:len(kind)-1]); msg != "" {
		return profiler.Param{}, d.err(path, field, "%s", msg)
	}
	if msg := builtinNameError(name); msg != "" {
		return profiler.Param{}, d.err(path, field, "%s", msg)
	}
	bl.seen[name] = kind
	out := profiler.Param{Name: name, Doc: p.Doc, Values: p.Values, Multiple: p.Multiple, Shape: p.Shape || isDim}
	out.Min, out.Max = 1, 1<<31-1
	if !isDim {
		out.Min = 0
	}
	if p.Min != nil {
		out.Min = *p.Min
	}
	if p.Max != nil {
		out.Max = *p.Max
	}
	if out.Min > out.Max {
		return out, d.err(path, field, "min %d is above max %d", out.Min, out.Max)
	}
	switch {
	case p.Default != nil:
		out.Default = *p.Default
	case len(p.Values) > 0:
		out.Default = p.Values[0]
	default:
		return out, d.err(path, field, "no default: add `default: N` (or a `values:` list whose first entry is the default)")
	}
	if err := out.Check(out.Default); err != nil {
		return out, d.err(path+".default", field+".default", "the default is not allowed: %v", err)
	}
	bl.vars[name] = expr.Int
	return out, nil
}

// flags reads the flags in file order.
func (bl *builder) flags() error {
	f, m, d, seen, vars := bl.f, bl.m, bl.d, bl.seen, bl.vars
	for _, name := range orderedKeys(d.keys("$.flags"), m.Flags) {
		path, field := "$.flags."+name, "flags."+name
		if !userNameRE.MatchString(name) {
			return d.err(path, field, "%q is not a C identifier: it becomes a -D macro (%s)", name, identHint(name))
		}
		if prev, dup := seen[name]; dup {
			return d.err(path, field, "%s is already %s: names must be unique across knobs, dims and flags", name, prev)
		}
		if msg := reservedError(name, "flag"); msg != "" {
			return d.err(path, field, "%s", msg)
		}
		if msg := builtinNameError(name); msg != "" {
			return d.err(path, field, "%s", msg)
		}
		seen[name] = "flags"
		fl := profiler.FlagParam{Name: name}
		switch v := m.Flags[name].(type) {
		case bool:
			fl.Default = v
		case map[string]any:
			for k, x := range v {
				switch k {
				case "default":
					b, ok := x.(bool)
					if !ok {
						return d.err(path+".default", field+".default", "want true or false, got %v", x)
					}
					fl.Default = b
				case "doc":
					fl.Doc = fmt.Sprint(x)
				default:
					return d.err(path+"."+k, field+"."+k, "unknown key %q: a flag has default and doc", k)
				}
			}
		case nil:
		default:
			return d.err(path, field, "want `name: false` or `name: {default: false, doc: …}`, got %v", v)
		}
		f.schema.Flags = append(f.schema.Flags, fl)
		vars[name] = expr.Bool
	}
	return nil
}

// rules compiles the rules over the knobs, dims and flags.
func (bl *builder) rules() error {
	f, m, d, vars := bl.f, bl.m, bl.d, bl.vars
	for i, r := range m.Rules {
		p, err := bl.compileExpr(r, vars, d.where(d.item("$.rules", "rules", i)))
		if err != nil {
			return err
		}
		f.rules = append(f.rules, p)
	}
	return nil
}
