package user

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// uvalue is a named constant of the manifest's `values:` section: an int,
// float or bool expression over the knobs, dims, flags and the values
// before it, usable wherever an expression is (args, grid, shapes, …).
type uvalue struct {
	name string
	p    *expr.Program
}

// values reads `values: {eps: 1e-5, scale: "1.0 / sqrt(D)"}` in file
// order; each value may use the ones before it.
func (bl *builder) values() error {
	f, m, d := bl.f, bl.m, bl.d
	for _, name := range orderedKeys(d.keys("$.values"), m.Values) {
		path, field := "$.values."+name, "values."+name
		if !userNameRE.MatchString(name) {
			return d.err(path, field, "%q is not usable as a name: %s", name, identHint(name))
		}
		if prev, dup := bl.seen[name]; dup {
			return d.err(path, field, "%s is already %s: names must be unique across knobs, dims, flags and values", name, prev)
		}
		if msg := reservedError(name, "value"); msg != "" {
			return d.err(path, field, "%s", msg)
		}
		if msg := builtinNameError(name); msg != "" {
			return d.err(path, field, "%s", msg)
		}
		p, err := bl.compile(m.Values[name], path, field)
		if err != nil {
			return err
		}
		bl.seen[name] = "values"
		bl.vars[name] = p.ResultKind()
		f.values = append(f.values, uvalue{name: name, p: p})
	}
	return nil
}

// dtypeName is the name the manifest gives the element type: its
// `dtype_name:` (llm.c's floatX), T by default.
func (bl *builder) dtypeName() string { return bl.f.dtypeName() }

func (f *Family) dtypeName() string {
	if f.m.DTypeName != "" {
		return f.m.DTypeName
	}
	return "T"
}

// env is the expression environment of a spec: its knobs, dims and flags,
// the dtype under the manifest's dtype name, and the values evaluated in
// order. A value that cannot be evaluated is named in the error.
func (f *Family) env(s profiler.Spec) (map[string]any, error) {
	e := make(map[string]any, len(s.Knobs)+len(s.Dims)+len(s.Flags)+len(f.values)+1)
	for k, v := range s.Knobs {
		e[k] = v
	}
	for k, v := range s.Dims {
		e[k] = v
	}
	for k, v := range s.Flags {
		e[k] = v
	}
	e[f.dtypeName()] = string(s.DType)
	f.addSourceConsts(e)
	for _, v := range f.values {
		x, err := v.p.Eval(e)
		if err != nil {
			return nil, fmt.Errorf("value %s '%s' (%s): %v", v.name, v.p.Source(), v.p.Where(), err)
		}
		if i, ok := x.(int64); ok {
			x = int(i)
		}
		e[v.name] = x
	}
	return e, nil
}
