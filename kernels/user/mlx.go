package user

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file reads `mlx:`, a kernel given the way mx.fast.metal_kernel
// takes one: the body only, input and output names, template arguments.
// mltop writes the signature (metal.WriteMLXKernel) per spec, binds the
// buffers by name and fills x_shape / x_strides / x_ndim from the
// buffers' shapes.

type mlxYAML struct {
	Name     string             `yaml:"name"`
	Body     string             `yaml:"body"`
	BodyFile string             `yaml:"body_file"`
	Header   string             `yaml:"header"`
	Inputs   yamlmsg.StringList `yaml:"inputs"`
	Outputs  yamlmsg.StringList `yaml:"outputs"`
	Template map[string]any     `yaml:"template"`
}

type mlxKernel struct {
	name, header    string
	body            string // with a #line in front that points into the user's text
	inputs, outputs []string
	// scalars are the inputs that are a dim, knob, flag or value rather
	// than a buffer, by name: their Metal type (int, float, bool), bound
	// as MLX binds a 0-d array, `const constant int& T [[buffer(n)]]`
	scalars  map[string]string
	template []mlxTemplateArg
	file     string // what the body's #line names
}

// mlxTemplateArg is a literal type name (`float`, `half`) or an
// expression over the knobs, dims, flags and T (the dtype's type).
type mlxTemplateArg struct {
	name, literal string
	p             *expr.Program
}

// mlxTypeNames are template values taken as written.
var mlxTypeNames = map[string]bool{"float": true, "half": true, "bfloat": true, "bfloat16_t": true, "int": true, "uint": true, "short": true, "ushort": true,
	"char": true, "uchar": true, "long": true, "ulong": true, "bool": true, "int32_t": true, "uint32_t": true, "int64_t": true, "uint64_t": true}

// mlx reads `mlx:`, writes the kernel for the default spec (so that the
// dispatches are checked against it like any source) and fills in the
// dispatches' entry and buffers.
func (bl *builder) mlx() error {
	f, m, d := bl.f, bl.m, bl.d
	if m.MLX == nil {
		return nil
	}
	x := m.MLX
	if _, both := m.Sources["metal"]; both {
		return d.err("$.mlx", "mlx", "both mlx: and sources: {metal: …} give the Metal kernel: keep one")
	}
	k := &mlxKernel{name: x.Name, header: x.Header, inputs: x.Inputs, outputs: x.Outputs, scalars: map[string]string{}}
	if k.name == "" {
		k.name = m.Name
	}
	if err := bl.mlxBody(k, x); err != nil {
		return err
	}
	if err := bl.mlxPlaceholders(k); err != nil {
		return err
	}
	for i, names := range [][]string{x.Inputs, x.Outputs} {
		key := [2]string{"inputs", "outputs"}[i]
		if key == "outputs" && len(names) == 0 {
			return d.err("$.mlx", "mlx.outputs", "no outputs: list the output buffers' names, e.g. `outputs: [out]`")
		}
		for j, n := range names {
			b := slices.IndexFunc(f.bufs, func(u ubuf) bool { return u.name == n })
			path, field := d.item("$.mlx."+key, "mlx."+key, j)
			if b < 0 && key == "inputs" {
				if err := bl.mlxScalarInput(k, n, path, field); err != nil {
					return err
				}
				continue
			}
			if b < 0 {
				return d.err(path, field, "%q is not a buffer (%s): each output is one of buffers: by name", n, strings.Join(bufNames(f.bufs), ", "))
			}
			if key == "outputs" && !f.bufs[b].out {
				return d.err(path, field, "output %s is not an output buffer: give it `out: true` in buffers:", n)
			}
		}
	}
	for _, name := range orderedKeys(d.keys("$.mlx.template"), x.Template) {
		path, field := "$.mlx.template."+name, "mlx.template."+name
		ta := mlxTemplateArg{name: name}
		v := x.Template[name]
		s, isString := v.(string)
		switch b, isBool := v.(bool); {
		case isBool:
			ta.literal = strconv.FormatBool(b)
		case isString && mlxTypeNames[strings.TrimSpace(s)]:
			ta.literal = strings.TrimSpace(s)
		default:
			p, err := bl.compile(v, path, field)
			if err != nil {
				return err
			}
			ta.p = p
		}
		k.template = append(k.template, ta)
	}
	f.mlx = k
	def := profiler.Spec{Kernel: m.Name, DType: f.schema.DTypes[0]}.WithDefaults(f.schema)
	e, err := f.env(def)
	if err != nil {
		return d.err("$.mlx", "mlx", "%v", err)
	}
	code, err := f.writeMLX(e, def.DType)
	if err != nil {
		return d.err("$.mlx", "mlx", "%v", err)
	}
	f.src["metal"] = source{path: k.file, code: code, language: "metal"}
	if f.mlxUnfilled, err = f.writeMLXText(e, def.DType, false); err != nil {
		return d.err("$.mlx", "mlx", "%v", err)
	}
	return bl.mlxDispatches(k)
}

// mlxScalarTypes are the Metal types MLX gives a 0-d input made from a
// Python int, bool or float (int32, bool, float32).
var mlxScalarTypes = map[expr.Kind]string{expr.Int: "int", expr.Bool: "bool", expr.Float: "float"}

// mlxScalarInput takes input n, which names no buffer, as a scalar input
// when it is a dim, knob, flag or value (MLX's `inputs=[x, T]` with T a
// Python int), else says what an input may be.
func (bl *builder) mlxScalarInput(k *mlxKernel, n, path, field string) error {
	kind, named := bl.seen[n]
	typ, scalar := mlxScalarTypes[bl.vars[n]]
	if !named || !scalar || kind != "dims" && kind != "knobs" && kind != "flags" && kind != "values" {
		names := bufNames(bl.f.bufs)
		for name, k := range bl.seen {
			if k == "dims" || k == "knobs" || k == "flags" || k == "values" {
				names = append(names, name)
			}
		}
		slices.Sort(names) // one suggestion however the map iterates
		return bl.d.err(path, field, "%q is neither a buffer (%s) nor a dim, knob, flag or value: %san input is a buffer, or a scalar (MLX's 0-d input) declared under dims:, knobs:, flags: or values:",
			n, strings.Join(bufNames(bl.f.bufs), ", "), profiler.DidYouMean(n, names))
	}
	k.scalars[n] = typ
	return nil
}

// mlxBody reads the body, inline or from body_file, with a #line in front
// so that compiler messages point into it.
func (bl *builder) mlxBody(k *mlxKernel, x *mlxYAML) error {
	f, d := bl.f, bl.d
	switch {
	case x.Body != "" && x.BodyFile != "":
		return d.err("$.mlx", "mlx", "both body: and body_file: given: keep one")
	case x.BodyFile != "":
		p := filepath.Join(f.dir, x.BodyFile)
		b, err := bl.read(p)
		if err != nil {
			return d.err("$.mlx.body_file", "mlx.body_file", "cannot read %s: %v: the path is relative to the manifest's folder", p, unwrapPath(err))
		}
		f.includePaths = append(f.includePaths, p) // watched and versioned with the sources
		k.file, k.body = p, fmt.Sprintf("#line 1 %q\n%s", p, sourceText(b))
	case x.Body != "":
		line := d.bodyLine("$.mlx.body")
		k.file, k.body = f.path, fmt.Sprintf("#line %d %q\n%s", max(line, 1), f.path, x.Body)
	default:
		return d.err("$.mlx", "mlx.body", "no body: give `body: |` with the kernel's body, or `body_file: k.metal`")
	}
	return nil
}

// mlxDispatches gives each dispatch the kernel's name as its entry and
// the inputs and outputs as its buffers.
func (bl *builder) mlxDispatches(k *mlxKernel) error {
	m, d := bl.m, bl.d
	for i := range m.Dispatches {
		ds := &m.Dispatches[i]
		path, field := fmt.Sprintf("$.dispatches[%d]", i), fmt.Sprintf("dispatches[%d]", i)
		if ds.Entry != "" && ds.Entry != k.name {
			return d.err(path+".entry", field+".entry", "entry %s: an mlx: kernel's entry is its name, %s: leave entry out", ds.Entry, k.name)
		}
		if len(ds.Args) > 0 {
			return d.err(path+".args", field+".args", "an mlx: kernel's arguments are its inputs and outputs (and their _shape, _strides, _ndim): leave args out")
		}
		ds.Entry = k.name
		ds.Args = nil
		for _, n := range k.inputs {
			if k.scalars[n] == "" { // scalar inputs are mlxScalars'
				ds.Args = append(ds.Args, n)
			}
		}
		ds.Args = append(ds.Args, k.outputs...)
	}
	return nil
}

// bindMLX binds an mlx: kernel's buffer parameters to the dispatch's args
// (its inputs and outputs, in order). Their element types are each
// buffer's own (writeMLX), so no pointee is required of a buffer; the
// _shape, _strides and _ndim parameters are mlxScalars'.
func (bl *builder) bindMLX(ud udisp, sig csrc.Signature, ts typeScope, s source, path, field string) (ubinding, error) {
	slots, err := metal.Slots(sig)
	if err != nil {
		return ubinding{}, bl.d.err("$.mlx", "mlx", "%v", err)
	}
	b := ubinding{sig: sig}
	k := 0
	for _, prm := range sig.Params {
		if !strings.HasPrefix(prm.Attr, "buffer(") {
			continue
		}
		sl := slots[0]
		slots = slots[1:]
		if sl.Kind != metal.SlotBuffer {
			continue
		}
		if k == len(ud.args) {
			return b, bl.d.err(path+".args", field+".args", "%s", countMismatch(ud.args, sig.Bindable(), s.path, sig))
		}
		apath, afield := bl.d.item(path+".args", field+".args", k)
		up, err := bl.bindOne(ud.args[k], prm, ts, apath, afield, s.path, sig)
		if err != nil {
			return b, err
		}
		up.arg, up.elem = k, ""
		b.params = append(b.params, up)
		k++
	}
	return b, nil
}

// mlxScalars adds to each dispatch the values of the x_shape, x_strides
// and x_ndim parameters the body uses, from the buffers' shapes: args
// named as metal.Bind places them ("x_shape[0]", …, "x_ndim"), bound as
// the parameter's type, after the buffers.
func (bl *builder) mlxScalars() error {
	f := bl.f
	if f.mlx == nil {
		return nil
	}
	sig, _, err := metal.EntrySignature(f.src["metal"].code, f.mlx.name)
	if err != nil {
		return bl.d.err("$.mlx", "mlx", "%v", err)
	}
	slots, err := metal.Slots(sig)
	if err != nil {
		return bl.d.err("$.mlx", "mlx", "%v", err)
	}
	var args []uarg
	var params []uparam
	for _, sl := range slots {
		if sl.Kind == metal.SlotBuffer {
			continue
		}
		if typ := f.mlx.scalars[sl.Name]; typ != "" {
			p, err := bl.compile(sl.Name, "$.mlx.inputs", "mlx.inputs")
			if err != nil {
				return err
			}
			params = append(params, uparam{arg: len(args), param: csrc.Param{Name: sl.Name, Type: "constant " + typ, Scalar: typ}, kind: cScalarKinds[typ]})
			args = append(args, uarg{text: sl.Name, p: p})
			continue
		}
		cut := strings.LastIndex(sl.Name, "_")
		b := f.bufs[slices.IndexFunc(f.bufs, func(u ubuf) bool { return u.name == sl.Name[:cut] })]
		for k := range b.shape {
			var text string
			switch sl.Name[cut+1:] {
			case "shape":
				text = b.shape[k].Source()
			case "strides":
				text = "1"
				for _, p := range b.shape[k+1:] {
					text += " * (" + p.Source() + ")"
				}
			case "ndim":
				if k > 0 {
					continue
				}
				text = strconv.Itoa(len(b.shape))
			}
			name := fmt.Sprintf("%s[%d]", sl.Name, k)
			if sl.Kind == metal.SlotScalar {
				name = sl.Name
			}
			p, err := bl.compile(text, "$.buffers", "buffers."+b.name+".shape")
			if err != nil {
				return err
			}
			params = append(params, uparam{arg: len(args), param: csrc.Param{Name: name, Type: "constant " + sl.Type, Scalar: sl.Type}, kind: cScalarKinds[sl.Type]})
			args = append(args, uarg{text: text, p: p})
		}
	}
	for i := range f.disps {
		d := &f.disps[i]
		b := d.bind["metal"]
		for _, up := range params {
			up.arg += len(d.args)
			b.params = append(b.params, up)
		}
		d.args = append(d.args, args...)
		d.bind["metal"] = b
	}
	return nil
}

// intCTypes are the Metal types of the fixed buffer dtypes that are not a
// spec's: the integers, and fp8 as its bytes (Metal has no 8-bit float;
// the kernel decodes them). f64 never gets here (typesOn).
var intCTypes = map[profiler.DType]string{
	profiler.I8: "char", profiler.U8: "uchar", profiler.I16: "short", profiler.U16: "ushort",
	profiler.I32: "int", profiler.U32: "uint", profiler.I64: "long", profiler.U64: "ulong",
	profiler.FP8E4M3: "uchar", profiler.FP8E5M2: "uchar",
}

// writeMLX writes the kernel's source for a spec: the template's values,
// the placeholders' and the buffers' element types are the spec's.
func (f *Family) writeMLX(e map[string]any, dt profiler.DType) (string, error) {
	return f.writeMLXText(e, dt, true)
}

// writeMLXText is writeMLX, with the placeholders left as they are unless
// fill.
func (f *Family) writeMLXText(e map[string]any, dt profiler.DType, fill bool) (string, error) {
	k := f.mlx
	body, header := k.body, k.header
	if fill {
		var err error
		if body, err = fillPlaceholders(k.body, e); err != nil {
			return "", err
		}
		if header, err = fillPlaceholders(k.header, e); err != nil {
			return "", err
		}
	}
	mk := metal.MLXKernel{Name: k.name, Header: header, Body: body}
	argType := func(name string) string {
		b := f.bufs[slices.IndexFunc(f.bufs, func(u ubuf) bool { return u.name == name })]
		t := b.dtype
		if t == "" {
			t = dt
		}
		if c, ok := intCTypes[t]; ok {
			return c
		}
		return CTypes["metal"][t]
	}
	for _, n := range k.inputs {
		if typ := k.scalars[n]; typ != "" {
			mk.Inputs = append(mk.Inputs, metal.MLXArg{Name: n, Type: typ, Scalar: true})
			continue
		}
		mk.Inputs = append(mk.Inputs, metal.MLXArg{Name: n, Type: argType(n)})
	}
	for _, n := range k.outputs {
		mk.Outputs = append(mk.Outputs, metal.MLXArg{Name: n, Type: argType(n)})
	}
	for _, t := range k.template {
		v := t.literal
		if t.p != nil {
			x, err := t.p.Eval(e)
			if err != nil {
				return "", err
			}
			switch x := x.(type) {
			case bool:
				v = strconv.FormatBool(x)
			case int, int64:
				v = fmt.Sprint(x)
			case string: // the dtype
				v = CTypes["metal"][profiler.DType(x)]
			default:
				return "", fmt.Errorf("mlx template %s '%s' is %v: give a type (T, float, half), an integer or true/false", t.name, t.p.Source(), x)
			}
		}
		mk.Template = append(mk.Template, metal.TemplateArg{Name: t.name, Value: v})
	}
	return metal.WriteMLXKernel(mk)
}

// mlxProgram is the Program of an MLX-style kernel for spec s: the source
// written for s's dtype and template values, prepared like a Metal file
// (names mltop gives it reach it by the same rules).
func (f *Family) mlxProgram(s profiler.Spec, e map[string]any) (profiler.Program, error) {
	code, err := f.writeMLX(e, s.DType)
	if err != nil {
		return profiler.Program{}, err
	}
	path := f.src["metal"].path
	noFiles := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	p, err := prepareSource("metal", path, code, nil, noFiles, f.offers(), nil, toolkitHeaders{})
	if err != nil {
		return profiler.Program{}, err
	}
	vals, err := f.offeredValues(s, "metal")
	if err != nil {
		return profiler.Program{}, err
	}
	text, headers := p.render(vals)
	return profiler.Program{Source: f.Name(), Code: text, File: path, Includes: headers}, nil
}

// bodyLine is the line a string value at path starts on: the line after
// a block scalar's `|`, else the value's own line.
func (d *doc) bodyLine(path string) int {
	line, _, _ := d.pos(path)
	if d.ast == nil {
		return line
	}
	if p, err := yaml.PathString(path); err == nil {
		if n, err := p.FilterFile(d.ast); err == nil {
			if _, block := n.(*ast.LiteralNode); block {
				return line + 1
			}
		}
	}
	return line
}
