package user

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file connects compile preparation to the manifest: the dtype_name,
// defines and include_dirs keys, the names offered to the source, and the
// per-spec Program.

// udefine is one entry of the manifest's defines:.
type udefine struct {
	name string
	p    *expr.Program
}

// dtypeLiterals are the dtype names a defines: expression may compare the
// dtype with: `floatX == bf16`.
var dtypeLiterals = []profiler.DType{profiler.F32, profiler.F16, profiler.BF16}

// defines compiles the manifest's defines: over the knobs, dims, flags, the
// dtype name and the dtype literals f32, f16, bf16.
func (bl *builder) defines() error {
	vars := bl.defineVars()
	for _, name := range slices.Sorted(maps.Keys(bl.m.Defines)) {
		path, field := "$.defines."+name, "defines."+name
		if !userNameRE.MatchString(name) {
			return bl.d.err(path, field, "%q is not a C identifier: a define becomes `#define %s value` (%s)", name, name, identHint(name))
		}
		if prev, dup := bl.seen[name]; dup {
			return bl.d.err(path, field, "%s is already %s, which mltop gives the source itself: remove it from defines", name, prev)
		}
		if msg := reservedError(name, "define"); msg != "" {
			return bl.d.err(path, field, "%s", msg)
		}
		if msg := builtinNameError(name); msg != "" {
			return bl.d.err(path, field, "%s", msg)
		}
		text, err := defineText(bl.m.Defines[name])
		if err != nil {
			return bl.d.err(path, field, "%v", err)
		}
		p, err := expr.Compile(text, vars, bl.d.where(path, field))
		if err != nil {
			return err
		}
		bl.f.defines = append(bl.f.defines, udefine{name: name, p: p})
	}
	return nil
}

// defineVars are the names a defines: expression may use: the
// manifest's, and the dtype literals.
func (bl *builder) defineVars() expr.Vars {
	vars := maps.Clone(bl.vars)
	for _, dt := range dtypeLiterals {
		if _, taken := vars[string(dt)]; !taken {
			vars[string(dt)] = expr.DType
		}
	}
	return vars
}

// sourceMacros decide the sources' #if conditions when they are scanned
// (which code is live, which host code is blanked): NVRTC's own macros,
// with the manifest's defines: over them, as the compiler gets them. An
// integer define is defined at every spec; a condition is defined or not
// where its value is the same at every spec (true, false), else it stays
// unknown and every branch on it is read, as is a define that does not
// compile (defines reports it).
func (bl *builder) sourceMacros() csrc.Macros {
	m := csrc.NVRTCMacros()
	if len(bl.m.Defines) == 0 {
		return m
	}
	vars := bl.defineVars()
	for name, v := range bl.m.Defines {
		delete(m, name)
		if b, ok := v.(bool); ok {
			m[name] = b
			continue
		}
		text, err := defineText(v)
		if err != nil {
			continue
		}
		p, err := expr.Compile(text, vars, bl.d.where("$.defines."+name, "defines."+name))
		switch {
		case err != nil:
		case !p.IsBool():
			m[name] = true
		case len(p.Names()) == 0:
			if b, err := p.Bool(nil); err == nil {
				m[name] = b
			}
		}
	}
	return m
}

// utf8BOM is the byte-order mark some editors (Visual Studio) write at
// the start of a UTF-8 file.
const utf8BOM = "\ufeff"

// sourceText is a source or header file's text without a leading UTF-8
// byte-order mark: nvcc skips it, but mltop puts its own lines ahead of the
// text, which would leave the mark mid-text for the compiler to refuse. The
// mark is on line 1, so every line keeps its number.
func sourceText(b []byte) string {
	return strings.TrimPrefix(string(b), utf8BOM)
}

// defineText is a define's expression: a number, a bool or an expression.
func defineText(v any) (string, error) {
	if b, ok := v.(bool); ok {
		return strconv.FormatBool(b), nil
	}
	return exprText(v)
}

// includeDirs are the manifest's include_dirs, relative to its folder.
func (bl *builder) includeDirs() []string {
	var dirs []string
	for _, dir := range bl.m.IncludeDirs {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(bl.f.dir, dir)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// prepare plans how each offered name reaches each source, from the
// files sourceConsts read and scanned (or reads them, when it could not).
func (bl *builder) prepare() error {
	f := bl.f
	offers := f.offers()
	var tk toolkitHeaders
	if _, ok := f.src["cuda"]; ok {
		tk = findToolkit()
	}
	f.prep = map[string]*prepared{}
	for _, lang := range slices.Sorted(maps.Keys(f.src)) {
		src := f.src[lang]
		p := bl.loaded[lang]
		if p == nil || p.units[0].path != src.path || p.units[0].code != src.code { // else read and scanned by sourceConsts (an MLX body is written after)
			var err error
			if p, err = loadSource(lang, src.path, src.code, f.includeDirs, bl.read, bl.sourceMacros()); err != nil {
				return bl.d.err("$.sources."+lang, "sources."+lang, "%v", err)
			}
		}
		p = p.prepareLoaded(offers, bl.entryNames(lang, p), tk)
		if lang == "cuda" {
			tkSrc := tk
			tkSrc.usingStd = p.usesNamespaceStd()
			tkSrc.onDevice = p.hostLibraryUse()
			p.stubs = cudaStubs(p.system, tkSrc)
			for h := range f.includes { // mltop_user.cuh and the manifest's includes: are given, not stubbed
				delete(p.stubs, h)
			}
			if ns := p.missingLocalNamespaces(); ns != "" {
				for _, h := range p.missingLocalHeaders() {
					if s, ok := p.stubs[h]; ok {
						p.stubs[h] = s + ns
					}
				}
			}
		}
		f.prep[lang] = p
	}
	return nil
}

// entryNames are the identifiers of every dispatch's entry, the dtype
// name replaced by its C types at each of the manifest's dtypes
// (`k<Traits<4, T>>`: k, Traits, float, __half, …): the kernel
// instantiated there uses what they name, though in the files only host
// code (a launcher) may name it and the kernel only through its template
// parameter, so MarkHostOnly keeps it. p is lang's source, loaded.
func (bl *builder) entryNames(lang string, p *prepared) []string {
	idents := func(text string) []string {
		var out []string
		for _, t := range csrc.Tokenize(text) {
			if t.Kind == csrc.Ident {
				out = append(out, t.Text)
			}
		}
		return out
	}
	var names []string
	for _, ds := range bl.m.Dispatches {
		for _, n := range idents(ds.Entry) {
			if n != bl.dtypeName() {
				names = append(names, n)
				continue
			}
			for _, dt := range bl.f.schema.DTypes {
				names = append(names, idents(cTypeIn(lang, dt, p))...)
			}
		}
	}
	return names
}

// offers are the names mltop gives the sources.
func (f *Family) offers() []offer {
	var out []offer
	for _, p := range f.schema.Knobs {
		out = append(out, offer{p.Name, offerInt})
	}
	for _, p := range f.schema.Dims {
		out = append(out, offer{p.Name, offerInt})
	}
	for _, fl := range f.schema.Flags {
		out = append(out, offer{fl.Name, offerBool})
	}
	for _, v := range f.values {
		if v.name == f.dtypeName() {
			continue // the value replaces the dtype name in expressions only
		}
		kind := offerFloat
		switch v.p.ResultKind() {
		case expr.Int:
			kind = offerInt
		case expr.Bool:
			kind = offerBool
		}
		out = append(out, offer{v.name, kind})
	}
	out = append(out, offer{f.dtypeName(), offerType}, offer{"DTYPE", offerInt})
	for _, dt := range dtypeLiterals {
		out = append(out, offer{"DTYPE_" + strings.ToUpper(string(dt)), offerDefine})
	}
	for _, d := range f.defines {
		out = append(out, offer{d.name, offerDefine})
	}
	return out
}

// offeredValues are the offered names' values for a spec in lang.
func (f *Family) offeredValues(s profiler.Spec, lang string) (map[string]value, error) {
	v := map[string]value{}
	num := func(n int64) value { t := strconv.FormatInt(n, 10); return value{text: t, macro: t, defined: true} }
	for _, p := range f.schema.Knobs {
		v[p.Name] = num(int64(s.Knobs[p.Name]))
	}
	for _, p := range f.schema.Dims {
		v[p.Name] = num(int64(s.Dims[p.Name]))
	}
	for _, fl := range f.schema.Flags {
		b := s.Flags[fl.Name]
		v[fl.Name] = value{text: strconv.FormatBool(b), macro: map[bool]string{false: "0", true: "1"}[b], defined: true}
	}
	ct := f.cType(lang, s.DType)
	v[f.dtypeName()] = value{text: ct, macro: ct, defined: true}
	v["DTYPE"] = num(int64(DTypeCodes[s.DType]))
	for _, dt := range dtypeLiterals {
		v["DTYPE_"+strings.ToUpper(string(dt))] = value{text: "1", macro: "1", defined: dt == s.DType}
	}
	e, err := f.env(s)
	if err != nil {
		return nil, err
	}
	for _, uv := range f.values {
		if uv.name == f.dtypeName() {
			continue
		}
		x, err := valueText(e[uv.name], lang)
		if err != nil && f.prep[lang].plan[uv.name].How != InjectUnused && f.prep[lang].plan[uv.name].How != InjectDeclared {
			return nil, fmt.Errorf("values.%s '%s' (%s): %w", uv.name, uv.p.Source(), uv.p.Where(), err)
		}
		v[uv.name] = x
	}
	for _, dt := range dtypeLiterals {
		if _, taken := e[string(dt)]; !taken {
			e[string(dt)] = string(dt)
		}
	}
	for _, d := range f.defines {
		if d.p.IsBool() {
			b, err := d.p.Bool(e)
			if err != nil {
				return nil, err
			}
			v[d.name] = value{text: "1", macro: "1", defined: b}
			continue
		}
		n, err := d.p.Int(e)
		if err != nil {
			return nil, fmt.Errorf("defines.%s '%s' (%s): %w: a define is an integer or a condition", d.name, d.p.Source(), d.p.Where(), err)
		}
		v[d.name] = num(n)
	}
	return v, nil
}

// valueText is a value's C text in lang: an integer as it is, a bool as
// flags are (true/false, 1/0 as a macro), a float with all its digits and
// a decimal point or exponent, so that it stays a floating-point literal
// (`f` suffixed in Metal, which has no double). A float that is not
// finite has no literal: an error.
func valueText(x any, lang string) (value, error) {
	switch x := x.(type) {
	case bool:
		return value{text: strconv.FormatBool(x), macro: map[bool]string{false: "0", true: "1"}[x], defined: true}, nil
	case int:
		t := strconv.Itoa(x)
		return value{text: t, macro: t, defined: true}, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return value{}, fmt.Errorf("is %v, which has no C literal: give the source a finite value", x)
		}
		t := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(t, ".e") {
			t += ".0"
		}
		if lang == "metal" {
			t += "f"
		}
		return value{text: t, macro: t, defined: true}, nil
	}
	return value{}, fmt.Errorf("is %v (%T): not a number or a bool", x, x)
}

// program is the Program of a spec's dispatches in lang (Entry aside).
func (f *Family) program(s profiler.Spec, lang string) (profiler.Program, error) {
	vals, err := f.offeredValues(s, lang)
	if err != nil {
		return profiler.Program{}, err
	}
	p := f.prep[lang]
	code, headers := p.render(vals)
	includes := maps.Clone(f.includes)
	if includes == nil {
		includes = map[string]string{}
	}
	maps.Copy(includes, headers)
	return profiler.Program{Source: f.Name(), Code: code, File: f.src[lang].path, Includes: includes, IncludeDirs: f.includeDirs}, nil
}

// injectionNotes tell the plan's reader about manifest names the source
// declares or #defines itself (their values do not reach it).
func (f *Family) injectionNotes(lang string) []string {
	var out []string
	for _, in := range f.Injections(lang) {
		if in.How == InjectDeclared || in.SourceWins {
			out = append(out, in.String())
		}
	}
	return out
}
