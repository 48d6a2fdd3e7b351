package user

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// buffers reads the buffers: names, dtypes, shapes, inits and tolerances.
func (bl *builder) buffers() error {
	f, m, d, seen, vars, names := bl.f, bl.m, bl.d, bl.seen, bl.vars, bl.bufferNames
	if len(m.Buffers) == 0 {
		return d.err("$", "buffers", "no buffers: list the kernel's arrays, e.g. `- {name: X, dtype: T, shape: [rows, cols]}`")
	}
	bl.markShapeKnobs()
	for i, b := range m.Buffers {
		path, field := fmt.Sprintf("$.buffers[%d]", i), fmt.Sprintf("buffers[%d]", i)
		if !userNameRE.MatchString(b.Name) {
			return d.err(path, field+".name", "buffer name %q: %s", b.Name, identHint(b.Name))
		}
		if names[b.Name] || vars[b.Name] != 0 || seen[b.Name] != "" {
			return d.err(path+".name", field+".name", "%s is already used (a buffer, knob, dim or flag): buffer names must be unique", b.Name)
		}
		names[b.Name] = true
		ub, err := bl.buffer(b, path)
		if err != nil {
			return err
		}
		f.bufs = append(f.bufs, ub)
	}
	if !slices.ContainsFunc(f.bufs, func(b ubuf) bool { return b.checked() }) {
		return d.err("$.buffers", "buffers", "no output: mark the buffers the kernel writes with `out: true` (or `inout: true` for those it updates in place): they are checked against the reference")
	}
	return nil
}

// buffer reads one buffer (its name already checked) at YAML path.
func (bl *builder) buffer(b bufferYAML, path string) (ubuf, error) {
	d := bl.d
	field := "buffers[" + b.Name + "]"
	ub := ubuf{name: b.Name, out: b.Out, inout: b.InOut, scratch: b.Scratch}
	if b.Scratch {
		var err error
		if b, err = bl.scratchBuffer(b, path); err != nil {
			return ub, err
		}
	}
	if b.Out && b.InOut {
		return ub, d.err(path+".inout", field+".inout", "out and inout both set: inout already means the buffer is checked, so drop `out: true`")
	}
	switch b.DType {
	case "", bl.dtypeName():
		ub.dtype = ""
	default:
		dt, err := profiler.ParseBufferDType(b.DType)
		if err != nil {
			return ub, d.err(path+".dtype", field+".dtype", "%v (or %s for the spec's dtype)", err, bl.dtypeName())
		}
		ub.dtype = dt
	}
	if len(b.Shape) == 0 {
		return ub, d.err(path, field+".shape", "no shape: add e.g. `shape: [rows, cols]`")
	}
	for k, s := range b.Shape {
		spath, sfield := d.item(path+".shape", field+".shape", k)
		p, err := bl.compile(s, spath, sfield)
		if err != nil {
			return ub, err
		}
		ub.shape = append(ub.shape, p)
	}
	init, err := bl.parseBufferInit(b, ub.dtype, path)
	if IsError(err) {
		return ub, err // an argument's expression, at its own position
	}
	if err != nil {
		return ub, d.err(path+".init", field+".init", "%v", err)
	}
	ub.init = init
	if sym, err := bl.bufferSymbol(b, path); err != nil {
		return ub, err
	} else if sym != "" {
		ub.symbol = &usymbol{name: sym} // the declaration is read with the sources (symbols)
	}
	if b.Tol != nil {
		if !ub.checked() {
			return ub, d.err(path+".tol", field+".tol", "only outputs (out: true or inout: true) are checked: drop tol or mark the buffer out")
		}
		ub.tol = b.Tol
	}
	return ub, bl.bufferGrowth(b, &ub, path)
}

// parseBufferInit reads a buffer's init (at YAML path): npy:file.npy
// (read now), or one of parseInit's generators, whose arguments may be
// expressions of the spec.
func (bl *builder) parseBufferInit(b bufferYAML, dt profiler.DType, path string) (initSpec, error) {
	if b.InOut {
		if b.Init == "" {
			return initSpec{}, fmt.Errorf("%s is inout (updated in place), so it needs initial values: add e.g. `init: normal(0, 1)` or `init: \"npy:%s.npy\"`", b.Name, b.Name)
		}
		if s, _ := parseInit(b.Init, true, dt, nil); s.kind == profiler.InitPoison {
			return initSpec{}, fmt.Errorf("%s is inout: poison initial values would make every result NaN; give it a real init such as normal(0, 1)", b.Name)
		}
	}
	if rel, ok := npyInitPath(b.Init); ok {
		return bl.readNPYInit(rel, dt)
	}
	return parseInit(b.Init, b.Out, dt, bl.initArgCompiler(b, path))
}

// initArgCompiler compiles the init arguments of buffer b (at YAML path)
// that are not numbers, over the knobs, dims, flags and values. A knob
// that does not change the shape is refused: inputs are made once per
// shape, so such a knob could not change them.
func (bl *builder) initArgCompiler(b bufferYAML, path string) argCompiler {
	field := "buffers[" + b.Name + "].init"
	return func(src string, off int) (*expr.Program, error) {
		w := bl.d.where(path+".init", field)
		w.Col += off
		p, err := bl.compileExpr(src, bl.vars, w)
		if err != nil {
			var ee *expr.Error
			if errors.As(err, &ee) {
				ee.Msg += fmt.Sprintf(" (an argument of init %s)", strings.TrimSpace(b.Init))
			}
			return nil, exprError(err, field)
		}
		if p.ResultKind() == expr.Bool {
			return nil, &Error{File: w.File, Line: w.Line, Col: w.Col, Field: field, Msg: fmt.Sprintf("'%s' in init %s is true or false: an init argument is a number", src, strings.TrimSpace(b.Init))}
		}
		if k := bl.nonShapeKnob(p.Names()); k != "" {
			return nil, &Error{File: w.File, Line: w.Line, Col: w.Col, Field: field, Msg: fmt.Sprintf("'%s' in init %s uses knob %s, which does not change the shape: inputs are made once per shape, so mark it `shape: true` or use a dim", src, strings.TrimSpace(b.Init), k)}
		}
		return p, nil
	}
}

// nonShapeKnob is the first knob that is not a shape knob (`shape: true`,
// or in a buffer's shape) that names (or the values they name) depend on,
// "" if none.
func (bl *builder) nonShapeKnob(names []string) string {
	for _, n := range names {
		if _, ok := bl.m.Knobs[n]; ok && !bl.isShapeKnob(n) {
			return n
		}
		for _, v := range bl.f.values {
			if v.name == n {
				if k := bl.nonShapeKnob(v.p.Names()); k != "" {
					return k
				}
			}
		}
	}
	return ""
}

// bufferGrowth reads terms, magnitude and accumulate (outputs only).
func (bl *builder) bufferGrowth(b bufferYAML, ub *ubuf, path string) error {
	d, field := bl.d, "buffers["+b.Name+"]"
	if b.Terms == nil {
		if b.Magnitude != "" || b.Accumulate != "" {
			return d.err(path+".terms", field+".terms", "magnitude and accumulate tune the growth term of `terms:`: add `terms: <reduction length>` (e.g. terms: cols) or drop them")
		}
		return nil
	}
	if !ub.checked() {
		return d.err(path+".terms", field+".terms", "terms widens an output's tolerance, and %s is an input: drop terms or mark the buffer out", b.Name)
	}
	p, err := bl.compile(b.Terms, path+".terms", field+".terms")
	if err != nil {
		return err
	}
	g := &growthSpec{terms: p}
	switch b.Magnitude {
	case "", "squares":
	case "want":
		g.magWant = true
	default:
		return d.err(path+".magnitude", field+".magnitude", "%q: use squares (‖terms‖₂ from the reference run on squared inputs; exact for sums, dot products and matmuls) or want (|want| alone, for references that are not multilinear)", b.Magnitude)
	}
	switch b.Accumulate {
	case "":
	case "f32", "float32":
		g.accF32 = true
	case bl.dtypeName(), "dtype":
		g.accT = true
	default:
		return d.err(path+".accumulate", field+".accumulate", "%q: use f32 (the kernel sums in float, the default) or T (it sums in the buffer's dtype)", b.Accumulate)
	}
	ub.growth = g
	return nil
}

type ubuf struct {
	name   string
	dtype  profiler.DType // "" = the spec's dtype
	shape  []*expr.Program
	init   initSpec
	out    bool
	inout  bool
	tol    *tolYAML
	growth *growthSpec // nil: no terms
	symbol *usymbol    // nil: a kernel argument; else the module global it fills (symbols.go)

	// scratch: working memory reset to its init before every launch,
	// never checked nor given to the reference (scratch.go).
	scratch bool
}

// reads says whether the kernel reads the buffer's initial values (and
// the reference gets them).
func (b ubuf) reads() bool { return (!b.out || b.inout) && !b.scratch }

// checked says whether the buffer is compared with the reference.
func (b ubuf) checked() bool { return b.out || b.inout }

// role is the buffer's role in a plan.
func (b ubuf) role() profiler.Role {
	switch {
	case b.scratch:
		return profiler.ScratchReset
	case b.inout:
		return profiler.InOut
	case b.out:
		return profiler.Out
	}
	return profiler.In
}

// growthSpec is an output's `terms:` (see Growth in profiler).
type growthSpec struct {
	terms   *expr.Program
	magWant bool // magnitude: want
	accT    bool // accumulate: T
	accF32  bool // accumulate: f32 given (an f64 output otherwise sums in f64)
}

func bufNames(bs []ubuf) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.name
	}
	return out
}
