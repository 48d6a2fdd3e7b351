package user

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// dispatches reads the dispatches; at least one must be timed.
func (bl *builder) dispatches() error {
	f, m, d := bl.f, bl.m, bl.d
	if len(m.Dispatches) == 0 {
		return d.err("$", "dispatches", "no dispatches: add `dispatches: [{entry: my_kernel, grid: [...], threads: [...], args: [...]}]`")
	}
	for i, ds := range m.Dispatches {
		if err := bl.dispatch(i, ds); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(f.disps, func(u udisp) bool { return u.timed }) {
		return d.err("$.dispatches", "dispatches", "every dispatch is `timed: false`: at least one must be timed")
	}
	return nil
}

// dispatch reads dispatch i: entry, grid, threads, args and TGM, then
// binds the args to the entry's parameters in every source.
func (bl *builder) dispatch(i int, ds dispatchYAML) error {
	f, d, compile := bl.f, bl.d, bl.compile
	path, field := fmt.Sprintf("$.dispatches[%d]", i), fmt.Sprintf("dispatches[%d]", i)
	if ds.Entry == "" {
		return d.err(path, field+".entry", "no entry: name the kernel function (__global__ / kernel)")
	}
	entry, err := bl.entry(ds.Entry, path+".entry", field+".entry")
	if err != nil {
		return err
	}
	ud := udisp{name: ds.Name, entry: entry, timed: ds.Timed == nil || *ds.Timed, cooperative: ds.Cooperative}
	if ud.name == "" {
		ud.name = entry.name
	}
	if _, cuda := f.src["cuda"]; ud.cooperative && !cuda {
		return d.err(path+".cooperative", field+".cooperative", "%v", coopMetalError(ud.name))
	}
	for _, g := range []struct {
		key string
		in  []any
		out *[3]*expr.Program
	}{{"grid", ds.Grid, &ud.grid}, {"threads", ds.Threads, &ud.threads}} {
		if len(g.in) == 0 || len(g.in) > 3 {
			return d.err(path, field+"."+g.key, "want 1 to 3 expressions, e.g. `%s: [rows, 1, 1]`, got %d", g.key, len(g.in))
		}
		for k := range 3 {
			var v any = 1
			if k < len(g.in) {
				v = g.in[k]
			}
			vpath, vfield := d.item(path+"."+g.key, g.key, k)
			compile := compile
			if g.key == "grid" {
				compile = bl.compileWithDevice
			}
			p, err := compile(v, vpath, vfield)
			if err != nil {
				return err
			}
			g.out[k] = p
		}
	}
	if ud.args, err = bl.args(ds, path, field); err != nil {
		return err
	}
	for k, t := range ds.TGM {
		if t.Name == "" {
			return d.err(fmt.Sprintf("%s.tgm[%d]", path, k), fmt.Sprintf("%s.tgm[%d].name", field, k), "each TGM item needs a name")
		}
		p, err := compile(t.Bytes, fmt.Sprintf("%s.tgm[%d].bytes", path, k), fmt.Sprintf("tgm[%s].bytes", t.Name))
		if err != nil {
			return err
		}
		ud.tgm = append(ud.tgm, utgm{name: t.Name, note: t.Note, bytes: p})
	}
	if ds.DynamicTGM != nil {
		p, err := compile(ds.DynamicTGM, path+".dynamic_tgm", field+".dynamic_tgm")
		if err != nil {
			return err
		}
		ud.dynTGM = p
	}
	ud.bind = map[string]ubinding{}
	for _, lang := range slices.Sorted(mapsKeys(f.src)) {
		b, err := bl.bind(ud, lang, path, field)
		if err != nil {
			return err
		}
		ud.bind[lang] = b
	}
	f.disps = append(f.disps, ud)
	return nil
}

// entry parses a dispatch's entry expression; errors point at the
// offending character.
func (bl *builder) entry(text, path, field string) (*entryExpr, error) {
	d := bl.d
	w := d.where(path, field)
	// the names the source and the local headers it includes (found as
	// the compiler finds them, include_dirs too) declare: a traits struct
	// in a header is a template argument as good as one in the source
	var code strings.Builder
	for lang, s := range bl.f.src {
		if p := bl.f.prep[lang]; p != nil {
			for _, u := range p.units {
				code.WriteString(u.code + "\n")
			}
			continue
		}
		code.WriteString(s.code + "\n")
	}
	declared := map[string]bool{}
	for _, t := range csrc.Tokenize(code.String()) {
		if t.Kind == csrc.Ident {
			declared[t.Text] = true
		}
	}
	// the namespaces each name is declared in, for a template argument the
	// kernel's namespace declares (enclosing)
	scopes := map[string][]string{}
	for _, p := range bl.f.prep {
		if p == nil {
			continue
		}
		for _, u := range p.units {
			if u.scan == nil {
				continue
			}
			for _, dc := range u.scan.Decls {
				switch dc.Kind {
				case csrc.Type, csrc.Alias, csrc.Variable, csrc.Function, csrc.Namespace:
					for _, n := range dc.Names {
						scopes[n] = append(scopes[n], dc.Scope)
					}
				}
			}
		}
	}
	sc := entryScope{dtype: bl.dtypeName(), vars: bl.vars, declared: func(n string) bool { return declared[n] },
		scopes: func(n string) []string { return scopes[n] },
		compile: func(src string, off int) (*expr.Program, error) {
			at := w
			at.Col += off
			p, err := bl.compileExpr(src, bl.vars, at)
			if err != nil {
				return nil, exprError(err, "") // the message names the field
			}
			return p, nil
		}}
	e, err := parseEntry(text, sc)
	var ee *entryError
	if errors.As(err, &ee) {
		return nil, &Error{File: w.File, Line: w.Line, Col: w.Col + ee.Off, Field: field, Msg: ee.Msg}
	}
	return e, err
}

// args reads a dispatch's args: each a buffer's name or a scalar
// expression, in the order of the entry's parameters.
func (bl *builder) args(ds dispatchYAML, path, field string) ([]uarg, error) {
	f, d, vars := bl.f, bl.d, bl.vars
	var out []uarg
	for k, a := range ds.Args {
		apath, afield := d.item(path+".args", field+".args", k)
		if es, ok := structEntries(a); ok {
			ua, err := bl.structArg(es, apath, afield)
			if err != nil {
				return nil, err
			}
			out = append(out, ua)
			continue
		}
		if elems, ok := arrayText(a); ok {
			ua, err := bl.arrayArg(a, elems, apath, afield)
			if err != nil {
				return nil, err
			}
			out = append(out, ua)
			continue
		}
		if bl.bufferNames[a] {
			out = append(out, uarg{text: a, buf: a})
			continue
		}
		p, err := bl.compileWithDevice(a, apath, afield)
		if err != nil {
			var ee *expr.Error
			if errors.As(err, &ee) && strings.HasPrefix(ee.Msg, "unknown name") {
				names := append(bufNames(f.bufs), vars.Names()...)
				return nil, d.err(apath, afield, "%q is neither a buffer (%s) nor an expression over %s%s", a, strings.Join(bufNames(f.bufs), ", "), strings.Join(vars.Names(), ", "), didYouMeanIn(ee.Msg, names))
			}
			return nil, err
		}
		out = append(out, uarg{text: a, p: p})
	}
	return out, nil
}

// bind finds the entry in the source of lang (overloads picked by their
// parameter count) and binds each arg to its parameter: a pointer takes a
// buffer, a by-value parameter an expression, a const pointer no output.
func (bl *builder) bind(ud udisp, lang, path, field string) (ubinding, error) {
	f, d := bl.f, bl.d
	name := ud.entry.name
	find := func(code string) ([]csrc.Signature, []string, error) {
		if lang == "metal" { // a [[host_name]] instantiation: its template's signature (metal_entry.go)
			return metalOverloads(code, ud.entry, bl.dtypeName())
		}
		sigs, found := csrc.Overloads(code, name)
		return sigs, found, nil
	}
	s, sigs, found, err := f.findEntry(lang, find)
	if err != nil {
		return ubinding{}, d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
	}
	if len(sigs) == 0 {
		hint := "no kernel functions found"
		if len(found) > 0 {
			hint = "kernels found: " + strings.Join(found, ", ")
		}
		return ubinding{}, d.err(path+".entry", field+".entry", "%s has no kernel %q (%s)", s.path+localHeaders(f.prep[lang]), name, hint)
	}
	// A parameter pack becomes one parameter per type the entry names.
	unnamedPack := make([]error, len(sigs))
	if lang == "cuda" {
		for k := range sigs {
			if sigs[k], unnamedPack[k], err = expandPack(sigs[k], ud.entry, bl.dtypeName()); err != nil {
				return ubinding{}, d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
			}
		}
	}
	hasScalar := slices.ContainsFunc(ud.args, func(a uarg) bool { return a.buf == "" })
	// A Metal entry takes its scalars either as one struct after the
	// buffers or one per `constant T&` parameter (metalStruct).
	takesStruct := func(g csrc.Signature) bool { return lang == "metal" && hasScalar && bl.metalStruct(g) }
	nbuf := 0
	for _, a := range ud.args {
		if a.buf != "" {
			nbuf++
		}
	}
	sig, err := csrc.Pick(name, sigs, func(g csrc.Signature) bool {
		want := len(ud.args)
		if takesStruct(g) {
			want = nbuf + 1 // the scalars arrive as one struct
		}
		return fits(g, ud.args, want, takesStruct(g))
	})
	bc := bindContext{s: s, sigs: sigs, unnamedPack: unnamedPack, nbuf: nbuf, takesStruct: takesStruct}
	var ambiguous *csrc.AmbiguousError
	if errors.As(err, &ambiguous) && lang == "cuda" {
		return bl.bindOverloads(ud, ambiguous, bc, path, field)
	}
	if err != nil {
		return ubinding{}, d.err(path+".entry", field+".entry", "%s: %v", s.path, err)
	}
	return bl.bindTo(ud, lang, sig, bc, path, field)
}

// bindContext is what bind found of an entry: the source that defines it,
// its overloads, and how its args read.
type bindContext struct {
	s           source
	sigs        []csrc.Signature
	unnamedPack []error // per overload: a pack whose types the entry leaves out
	nbuf        int     // the args that are buffers
	takesStruct func(csrc.Signature) bool
}

// bindTo binds each arg to its parameter of overload sig.
func (bl *builder) bindTo(ud udisp, lang string, sig csrc.Signature, bc bindContext, path, field string) (ubinding, error) {
	f, d, s, sigs, unnamedPack := bl.f, bl.d, bc.s, bc.sigs, bc.unnamedPack
	nbuf, takesStruct := bc.nbuf, bc.takesStruct
	ts := typeScope{typedefs: csrc.Typedefs(s.code), dtype: bl.dtypeName(), sig: sig}
	ts.pinned = ts.pinnedScalars(ud.entry.pinnedTypes(nonPackTemplate(sig)))
	if lang == "metal" {
		if k := slices.IndexFunc(ud.args, func(a uarg) bool { return a.fields != nil }); k >= 0 {
			apath, afield := d.item(path+".args", field+".args", k)
			return ubinding{}, d.err(apath, afield, "struct value %s: Metal takes a kernel's scalars as the args after its buffers, which fill its constant struct in order; a {field: value} mapping is for CUDA kernels that take a struct by value", ud.args[k].text)
		}
		if err := bl.checkMetalTemplate(ud.entry, s, path, field); err != nil {
			return ubinding{}, err
		}
		if err := bl.checkMetalSlots(ud, sig, s, path, field); err != nil {
			return ubinding{}, err
		}
		if f.mlx != nil {
			b, err := bl.bindMLX(ud, sig, ts, s, path, field)
			b.file = s.path
			return b, err
		}
	}
	if takesStruct(sig) {
		b, err := bl.bindMetalStruct(ud, sig, ts, s, nbuf, path, field)
		b.file = s.path
		return b, err
	}
	ts.code = bl.codeWithHeaders(lang, s)
	ts.vectors = lang == "cuda"
	ts.enums = enumTypes(ts.code)
	ud.entry.castEnums(sig, ts)
	classes, specClasses, err := bl.classTypes(ud.entry, ud.entry.pinnedClassTypes(nonPackTemplate(sig)))
	if err != nil {
		return ubinding{}, d.err(path+".entry", field+".entry", "%v", err)
	}
	ts.classes, ts.entry = ts.sourceClasses(classes), ud.entry
	for param := range specClasses {
		if _, ok := ts.classes[param]; !ok {
			delete(specClasses, param) // not a struct or enum of the source
		}
	}
	ts.specClasses = specClasses
	params := sig.Bindable()
	if len(params) != len(ud.args) {
		if k := slices.IndexFunc(sigs, func(g csrc.Signature) bool { return g.Line == sig.Line }); k >= 0 && unnamedPack[k] != nil {
			return ubinding{}, d.err(path+".entry", field+".entry", "%s: %v", s.path, unnamedPack[k])
		}
		return ubinding{}, d.err(path+".args", field+".args", "%s", countMismatch(ud.args, params, s.path, sig))
	}
	b := ubinding{sig: sig, file: s.path}
	seenScalar := false
	for k, prm := range params {
		apath, afield := d.item(path+".args", field+".args", k)
		up, err := bl.bindOne(ud.args[k], prm, ts, apath, afield, s.path, sig)
		if err != nil {
			return b, err
		}
		up.arg = k
		if ud.args[k].buf == "" {
			seenScalar = true
		} else if seenScalar {
			b.interleaved = true
		}
		b.params = append(b.params, up)
	}
	return b, bl.checkConstArgs(ud, b, path, field, s.path)
}

// fits says whether an overload takes args: as many parameters, a
// pointer for each buffer and a by-value parameter for each expression.
func fits(sig csrc.Signature, args []uarg, want int, metalStruct bool) bool {
	params := sig.Bindable()
	if len(params) != want {
		return false
	}
	if metalStruct {
		return true
	}
	for k, p := range params {
		_, accessor, _ := parseAccessor(p) // a packed accessor takes a buffer too
		if (p.Pointer || accessor) != (args[k].buf != "" || args[k].elems != nil) {
			return false
		}
	}
	return true
}

// bindOne checks one arg against its parameter.
func (bl *builder) bindOne(a uarg, prm csrc.Param, ts typeScope, apath, afield, file string, sig csrc.Signature) (uparam, error) {
	d := bl.d
	up := uparam{param: prm}
	if sup, handled, err := bl.bindStruct(a, prm, ts, apath, afield, file, sig); handled {
		return sup, err
	}
	if acc, ok, err := parseAccessor(prm); ok && a.elems == nil {
		return bl.bindAccessor(a, prm, up, acc, err, ts, apath, afield, file, sig)
	}
	switch {
	case a.elems != nil:
		return bl.bindArray(a, prm, up, apath, afield, file, sig)
	case prm.Pointer && a.buf == "":
		return up, d.err(apath, afield, "%q goes to parameter `%s` of %s:%d, a pointer: bind one of the buffers (%s)", a.text, describe(prm), file, sig.Line, strings.Join(bufNames(bl.f.bufs), ", "))
	case !prm.Pointer && a.buf != "":
		return up, d.err(apath, afield, "buffer %s goes to parameter `%s` of %s:%d, a by-value scalar: give an expression (a number, a dim, a value)", a.buf, describe(prm), file, sig.Line)
	case prm.Pointer:
		if b := bl.buf(a.buf); b.out && prm.ReadOnly && isConstantSpace(prm) {
			return up, d.err(apath, afield, "output buffer %s goes to parameter `%s` of %s:%d, in Metal's read-only constant address space: bind an input there (or make the parameter `device`)", a.buf, describe(prm), file, sig.Line)
		} else if b.out && prm.ReadOnly {
			return up, d.err(apath, afield, "output buffer %s goes to parameter `%s` of %s:%d, which the kernel cannot write through: drop the const, or bind an input there", a.buf, describe(prm), file, sig.Line)
		}
		if why := fnuzPointee(ts.resolve(prm.Pointee)); why != "" && !ts.generic(prm.Pointee) {
			return up, d.err(apath, afield, "buffer %s goes to parameter `%s` of %s:%d: %s", a.buf, describe(prm), file, sig.Line, why)
		}
		up.elem = ts.elem(prm)
	default:
		k, err := ts.scalarKind(prm)
		if err != nil {
			return up, d.err(apath, afield, "%s:%d: %v", file, sig.Line, err)
		}
		up.kind = k
	}
	return up, nil
}

// isConstantSpace says whether a Metal pointer parameter is in the
// constant address space (`constant int* shape`).
func isConstantSpace(p csrc.Param) bool {
	return slices.Contains(strings.Fields(strings.NewReplacer("*", " ", "&", " ").Replace(p.Type)), "constant")
}

func (bl *builder) buf(name string) ubuf {
	for _, b := range bl.f.bufs {
		if b.name == name {
			return b
		}
	}
	return ubuf{}
}

// countMismatch says which parameters have no arg, or which args no
// parameter.
func countMismatch(args []uarg, params []csrc.Param, file string, sig csrc.Signature) string {
	var extra []string
	if len(args) < len(params) {
		for _, p := range params[len(args):] {
			extra = append(extra, "`"+describe(p)+"`")
		}
		return fmt.Sprintf("%d args but %s:%d %s takes %d parameters: unbound %s; args follow the parameter list, buffers and scalars in its order", len(args), file, sig.Line, sig, len(params), strings.Join(extra, ", "))
	}
	for _, a := range args[len(params):] {
		extra = append(extra, a.text)
	}
	return fmt.Sprintf("%d args but %s:%d %s takes %d parameters: %s bind nothing; args follow the parameter list, buffers and scalars in its order", len(args), file, sig.Line, sig, len(params), strings.Join(extra, ", "))
}

// bindMetalStruct binds a Metal entry whose scalars arrive as one struct
// after the buffers (constant P& p [[buffer(n)]]): the buffers first, in
// order, then the scalars: each as its field's type when the source (or a
// local header) defines the struct, an array value filling an array field;
// else f32 for a float expression and i32 otherwise.
// (Scalars as `constant float& eps [[buffer(n)]]` parameters, one per
// index, take their parameter's type: metalOverloads.)
func (bl *builder) bindMetalStruct(ud udisp, sig csrc.Signature, ts typeScope, s source, nbuf int, path, field string) (ubinding, error) {
	d := bl.d
	params := sig.Bindable()
	nsc := len(ud.args) - nbuf
	if len(params) != nbuf+1 {
		return ubinding{}, d.err(path+".args", field+".args", "%d buffers + 1 struct of %d scalars but %s:%d %s takes %d parameters: Metal takes the buffers first, then the scalars as one struct", nbuf, nsc, s.path, sig.Line, sig, len(params))
	}
	// The buffers pair with the buffer parameters in order, wherever the
	// struct sits among them (metal.Bind puts each at its own index).
	var fields *structFiller
	if slots, err := metal.Slots(sig); err == nil {
		for _, sl := range slots {
			if sl.Kind == metal.SlotStruct {
				params = slices.DeleteFunc(slices.Clone(params), func(p csrc.Param) bool { return p.Name == sl.Name })
				fs, found, err := metal.StructFields(bl.metalCode(), sl.Type)
				if err != nil {
					return ubinding{}, d.err(path+".entry", field+".entry", "%s:%d %s: %v", s.path, sig.Line, sig, err)
				}
				if found {
					fields = &structFiller{name: sl.Type, fields: fs}
				}
			}
		}
	}
	b := ubinding{sig: sig}
	for k, a := range ud.args {
		apath, afield := d.item(path+".args", field+".args", k)
		if k >= nbuf && a.buf != "" {
			return b, d.err(apath, afield, "buffer %s comes after a scalar: Metal takes the buffers first, then the scalars as one struct at the buffer index after the last buffer; reorder the kernel's parameters", a.buf)
		}
		if k >= nbuf && fields != nil {
			up, err := fields.next(a)
			if err != nil {
				return b, d.err(apath, afield, "%v", err)
			}
			up.arg = k
			b.params = append(b.params, up)
			continue
		}
		if a.elems != nil {
			return b, d.err(apath, afield, "array value %s: a kernel that takes its scalars as one constant struct takes no arrays unless mltop reads the struct's definition in the source; give its `constant T*` parameter a buffer", a.text)
		}
		if k >= nbuf {
			kind := profiler.ScalarI32
			if a.p.ResultKind() == expr.Float {
				kind = profiler.ScalarF32
			}
			b.params = append(b.params, uparam{arg: k, param: csrc.Param{Name: a.text, Scalar: string(kind)}, kind: kind})
			continue
		}
		up, err := bl.bindOne(a, params[k], ts, apath, afield, s.path, sig)
		if err != nil {
			return b, err
		}
		up.arg = k
		b.params = append(b.params, up)
	}
	if fields != nil {
		if err := fields.done(); err != nil {
			return b, d.err(path+".args", field+".args", "%v", err)
		}
	}
	return b, bl.checkConstArgs(ud, b, path, field, s.path)
}

type utgm struct {
	name, note string
	bytes      *expr.Program
}

type udisp struct {
	name          string
	entry         *entryExpr
	grid, threads [3]*expr.Program
	args          []uarg
	bind          map[string]ubinding // by source language
	tgm           []utgm
	dynTGM        *expr.Program
	timed         bool
	cooperative   bool // launched so that every block is resident at once (coop.go)
}
