package user

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// This file lays out, per spec, a struct whose type the entry writes with
// the dtype name, a knob, a dim or an {expr} in its template arguments
// (`apply<Lists<2>, Scale<T>, float>`): at f16 the parameter is a
// Scale<__half>, at f32 a Scale<float>. The load checks the args against
// the layout at every dtype (knobs and dims at their defaults); a spec
// lays it out with its own values.

// specStruct is a struct parameter whose type reads the spec.
type specStruct struct {
	entry     *entryExpr
	parts     []entryPart // the entry's template argument naming the type
	ts        typeScope
	dtypeName string
	cType     func(profiler.DType) string // what the dtype name stands for (Family.cType)
	where     string                      // the parameter, for messages
	bindings  sync.Map                    // rendered type → specLayout
}

type specLayout struct {
	b   *structBinding
	err error
}

// classTypes renders the entry's class-typed template arguments (params:
// pinnedClassTypes) at the first dtype and default knobs and dims: those
// are the types the load checks the args against. spec keeps the parts of
// the arguments that read the spec.
func (bl *builder) classTypes(entry *entryExpr, parts map[string][]entryPart) (classes map[string]string, spec map[string][]entryPart, err error) {
	classes = map[string]string{}
	for param, arg := range parts {
		if !classDependsOnSpec(arg) {
			classes[param] = literalText(arg)
			continue
		}
		t, err := bl.classAt(entry, arg, bl.f.schema.DTypes[0])
		if err != nil {
			return nil, nil, err
		}
		classes[param] = t
		if spec == nil {
			spec = map[string][]entryPart{}
		}
		spec[param] = arg
	}
	return classes, spec, nil
}

// classAt renders a class-typed template argument at dtype dt, knobs and
// dims at their defaults.
func (bl *builder) classAt(entry *entryExpr, arg []entryPart, dt profiler.DType) (string, error) {
	f := bl.f
	env, err := f.env(profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.schema))
	if err != nil {
		return "", err
	}
	t, err := entry.renderParts(arg, env, f.dtypeName(), f.cType("cuda", dt))
	return strings.TrimSpace(t), err
}

// specStruct checks arg a against the struct at every other dtype of the
// manifest and keeps what a spec needs to lay it out.
func (bl *builder) specStruct(entry *entryExpr, parts []entryPart, a uarg, ts typeScope, where string) (*specStruct, error) {
	f := bl.f
	ss := &specStruct{entry: entry, parts: parts, ts: ts, dtypeName: f.dtypeName(), where: where,
		cType: func(dt profiler.DType) string { return f.cType("cuda", dt) }}
	for _, dt := range bl.f.schema.DTypes[1:] {
		t, err := bl.classAt(entry, parts, dt)
		if err != nil {
			return nil, err
		}
		if _, err := ss.layoutOf(t, a); err != nil {
			return nil, fmt.Errorf("at %s: %w", dt, err)
		}
	}
	return ss, nil
}

// bindingFor lays out the struct for a spec (dtype dt, environment e) and
// finds the leaf each value of a fills.
func (ss *specStruct) bindingFor(a uarg, dt profiler.DType, e map[string]any) (*structBinding, error) {
	t, err := ss.entry.renderParts(ss.parts, e, ss.dtypeName, ss.cType(dt))
	if err != nil {
		return nil, err
	}
	return ss.layoutOf(strings.TrimSpace(t), a)
}

// layoutOf lays out type t (once per type) and binds a's values to it.
func (ss *specStruct) layoutOf(t string, a uarg) (*structBinding, error) {
	if got, ok := ss.bindings.Load(t); ok {
		return got.(specLayout).b, got.(specLayout).err
	}
	b, err := ss.bind(t, a)
	ss.bindings.Store(t, specLayout{b, err})
	return b, err
}

func (ss *specStruct) bind(t string, a uarg) (*structBinding, error) {
	l, found, err := newStructTypes(ss.ts.code, ss.ts).layout(t, 0)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s, %s: %w", ss.where, t, err)
	case !found:
		return nil, fmt.Errorf("%s is %s, which mltop does not find in the source or its local headers", ss.where, t)
	}
	b, key, err := structLeaves(a, l, ss.where, nil)
	if err != nil {
		if key != "" {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return nil, err
	}
	b.spec = ss
	return b, nil
}
