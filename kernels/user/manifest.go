// Package user makes kernel families out of data: a `kernel.yaml` manifest
// beside a user's .cu / .metal sources (docs/own-kernels.md).
// A loaded manifest is a profiler.Family like the built-in ones: schema,
// rules, plan, TGM budget, work model and a reference (a Python function
// over NumPy arrays, a built-in family's reference, another manifest's
// kernel, or none).
package user

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// Error is bad input in a manifest: file:line:col, the field and what to do.
type Error struct {
	File      string
	Line, Col int
	Field     string
	Msg       string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// IsError reports whether err is a manifest error (bad input, exit 2).
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

type paramYAML struct {
	Values   []int  `yaml:"values"`
	Default  *int   `yaml:"default"`
	Min      *int   `yaml:"min"`
	Max      *int   `yaml:"max"`
	Multiple int    `yaml:"multiple"`
	Doc      string `yaml:"doc"`
	Shape    bool   `yaml:"shape"` // a knob that changes the math (kept in the reference cache key)
}

type flagYAML struct {
	Default bool   `yaml:"default"`
	Doc     string `yaml:"doc"`
}

// tolYAML is a buffer's tolerance: `{atol, rtol}` for every dtype, and/or
// per dtype `{f32: {atol, rtol}, bf16: {...}}` (unset values keep the
// dtype's default).
type tolYAML struct {
	ATol *float64 `yaml:"atol"`
	RTol *float64 `yaml:"rtol"`
	F32  *tolPair `yaml:"f32"`
	F16  *tolPair `yaml:"f16"`
	BF16 *tolPair `yaml:"bf16"`
}

type tolPair struct {
	ATol *float64 `yaml:"atol"`
	RTol *float64 `yaml:"rtol"`
}

type bufferYAML struct {
	Name  string   `yaml:"name"`
	DType string   `yaml:"dtype"`
	Shape []any    `yaml:"shape"`
	Init  string   `yaml:"init"`
	Out   bool     `yaml:"out"`
	Tol   *tolYAML `yaml:"tol"`
	Doc   string   `yaml:"doc"`
}

type tgmYAML struct {
	Name  string `yaml:"name"`
	Bytes any    `yaml:"bytes"`
	Note  string `yaml:"note"`
}

type dispatchYAML struct {
	Name       string    `yaml:"name"`
	Entry      string    `yaml:"entry"`
	Grid       []any     `yaml:"grid"`
	Threads    []any     `yaml:"threads"`
	Args       []string  `yaml:"args"`
	TGM        []tgmYAML `yaml:"tgm"`
	DynamicTGM any       `yaml:"dynamic_tgm"`
	Timed      *bool     `yaml:"timed"`
}

type checkYAML struct {
	Python  string            `yaml:"python"`
	Against string            `yaml:"against"`
	Map     map[string]string `yaml:"map"`
	Kernel  string            `yaml:"kernel"`
	MaxRows int               `yaml:"max_rows"`
}

type manifestYAML struct {
	Name        string               `yaml:"name"`
	Description string               `yaml:"description"`
	Sources     map[string]string    `yaml:"sources"`
	Includes    []string             `yaml:"includes"`
	DTypes      []string             `yaml:"dtypes"`
	Knobs       map[string]paramYAML `yaml:"knobs"`
	Dims        map[string]paramYAML `yaml:"dims"`
	Flags       map[string]any       `yaml:"flags"`
	Rules       []string             `yaml:"rules"`
	Buffers     []bufferYAML         `yaml:"buffers"`
	Dispatches  []dispatchYAML       `yaml:"dispatches"`
	Work        map[string]any       `yaml:"work"`
	Check       any                  `yaml:"check"`
	Notes       []string             `yaml:"notes"`
}

// doc positions: YAML paths → line:col, for messages.
type doc struct {
	file string
	ast  *ast.File
}

func (d *doc) pos(path string) (line, col int, quoted bool) {
	if d.ast == nil {
		return 0, 0, false
	}
	p, err := yaml.PathString(path)
	if err != nil {
		return 0, 0, false
	}
	n, err := p.FilterFile(d.ast)
	if err != nil || n == nil {
		return 0, 0, false
	}
	tk := n.GetToken()
	if tk == nil {
		return 0, 0, false
	}
	q := false
	if sn, ok := n.(*ast.StringNode); ok && sn.Token != nil {
		t := sn.Token.Type.String()
		q = strings.Contains(t, "Quote")
	}
	return tk.Position.Line, tk.Position.Column, q
}

func (d *doc) err(path, field, format string, a ...any) error {
	l, c, _ := d.pos(path)
	return &Error{File: d.file, Line: l, Col: c, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// where is the position of an expression at path for the expr package.
func (d *doc) where(path, field string) expr.Where {
	l, c, q := d.pos(path)
	if q {
		c++
	}
	return expr.Where{Field: field, File: d.file, Line: l, Col: c}
}

// keys lists a mapping's keys in file order.
func (d *doc) keys(path string) []string {
	if d.ast == nil {
		return nil
	}
	p, err := yaml.PathString(path)
	if err != nil {
		return nil
	}
	n, err := p.FilterFile(d.ast)
	if err != nil || n == nil {
		return nil
	}
	var out []string
	switch m := n.(type) {
	case *ast.MappingNode:
		for _, v := range m.Values {
			out = append(out, v.Key.String())
		}
	case *ast.MappingValueNode:
		out = append(out, m.Key.String())
	}
	return out
}

var posRE = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*(.*)$`)

func yamlErr(file string, err error) error {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	e := &Error{File: file, Msg: first}
	if m := posRE.FindStringSubmatch(first); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col, _ = strconv.Atoi(m[2])
		e.Msg = m[3]
	}
	if strings.Contains(e.Msg, "unknown field") {
		e.Msg += ": check the spelling; the manifest keys are name, description, sources, includes, dtypes, knobs, dims, flags, rules, buffers, dispatches, work, check, notes (docs/own-kernels.md)"
	}
	e.Msg = yamlmsg.Plain(e.Msg)
	return e
}

func strictUnmarshal(src []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the file is not valid YAML for a manifest (the parser failed: %v)", p)
		}
	}()
	return yaml.UnmarshalWithOptions(src, v, yaml.Strict())
}

// Load reads a manifest and the files it names and makes a Family of it.
func Load(path string) (*Family, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the manifest: %v", errors.Unwrap(err))}
	}
	return Parse(path, src, os.ReadFile)
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Parse is Load on bytes; read reads the files the manifest names (paths
// are relative to the manifest's folder).
func Parse(path string, src []byte, read func(string) ([]byte, error)) (*Family, error) {
	return parse(path, src, read, false)
}

// parse is Parse; nested is true for the manifest a `check: {kernel: …}`
// names, whose own check is not loaded (it is not used, and a pair of
// manifests that name each other would never end).
func parse(path string, src []byte, read func(string) ([]byte, error), nested bool) (*Family, error) {
	var m manifestYAML
	af, _ := parser.ParseBytes(src, 0)
	if err := strictUnmarshal(src, &m); err != nil {
		e := yamlErr(path, err)
		// A value of the wrong type names its field, like the later checks.
		if ue, ok := e.(*Error); ok && ue.Field == "" && ue.Line > 0 && !strings.Contains(ue.Msg, "unknown field") {
			ue.Field = yamlmsg.FieldAt(af, ue.Line, ue.Col)
		}
		return nil, e
	}
	d := &doc{file: path, ast: af}
	f := &Family{path: path, dir: filepath.Dir(path), doc: d, m: m, nested: nested}
	if err := f.build(read); err != nil {
		return nil, err
	}
	// The version hashes contents and the files' names relative to the
	// manifest, never how the manifest was reached: a session that loaded
	// ./examples/softmax and a worker that loaded its absolute path must
	// agree on it.
	h := sha256.New()
	h.Write(src)
	for _, p := range f.Files()[1:] {
		b, _ := read(p)
		name := p
		if rel, err := filepath.Rel(f.dir, p); err == nil {
			name = filepath.ToSlash(rel)
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	f.version = hex.EncodeToString(h.Sum(nil)[:8])
	return f, nil
}

func (f *Family) build(read func(string) ([]byte, error)) error {
	m, d := &f.m, f.doc
	if m.Name == "" {
		return d.err("$", "name", "the manifest has no name: add `name: my_kernel` (the family name in list, sweeps and CSV)")
	}
	if !nameRE.MatchString(m.Name) {
		return d.err("$.name", "name", "%q is not a usable kernel name: use letters, digits and _, starting with a letter", m.Name)
	}
	// sources and includes
	if len(m.Sources) == 0 {
		return d.err("$", "sources", "no sources: add `sources: {cuda: kernel.cu}` and/or `metal: kernel.metal`")
	}
	f.src = map[string]source{}
	for _, lang := range slices.Sorted(mapsKeys(m.Sources)) {
		if lang != "cuda" && lang != "metal" {
			return d.err("$.sources."+lang, "sources."+lang, "unknown source language %q: use cuda or metal", lang)
		}
		p := filepath.Join(f.dir, m.Sources[lang])
		b, err := read(p)
		if err != nil {
			return d.err("$.sources."+lang, "sources."+lang, "cannot read %s: %v: the path is relative to the manifest's folder", p, unwrapPath(err))
		}
		f.src[lang] = source{path: p, code: string(b)}
		names := map[string]bool{}
		for _, sig := range FindEntries(string(b)) {
			for _, prm := range sig.Params {
				if prm.Name != "" {
					names[prm.Name] = true
				}
			}
		}
		if f.paramNames == nil {
			f.paramNames = map[string]map[string]bool{}
		}
		f.paramNames[lang] = names
	}
	f.includes = map[string]string{}
	for i, inc := range m.Includes {
		p := filepath.Join(f.dir, inc)
		b, err := read(p)
		if err != nil {
			return d.err(fmt.Sprintf("$.includes[%d]", i), fmt.Sprintf("includes[%d]", i), "cannot read %s: %v: the path is relative to the manifest's folder", p, unwrapPath(err))
		}
		f.includes[filepath.ToSlash(inc)] = string(b)
		f.includePaths = append(f.includePaths, p)
	}
	if _, ok := f.src["cuda"]; ok {
		f.includes[cudaHeaderName] = cudaHeader
	}
	// dtypes
	if len(m.DTypes) == 0 {
		m.DTypes = []string{"f32"}
	}
	for i, s := range m.DTypes {
		dt, err := profiler.ParseDType(s)
		if err != nil {
			return d.err(fmt.Sprintf("$.dtypes[%d]", i), fmt.Sprintf("dtypes[%d]", i), "%v", err)
		}
		f.schema.DTypes = append(f.schema.DTypes, dt)
	}
	// knobs, dims, flags in file order
	vars := expr.Vars{"T": expr.DType}
	seen := map[string]string{"T": "the dtype", "DTYPE": "the dtype code"}
	addParam := func(kind, name string, p paramYAML, isDim bool) (profiler.Param, error) {
		path := fmt.Sprintf("$.%s.%s", kind, name)
		field := kind + "." + name
		if !nameRE.MatchString(name) {
			return profiler.Param{}, d.err(path, field, "%q is not a C identifier: it becomes a -D macro", name)
		}
		if prev, dup := seen[name]; dup {
			return profiler.Param{}, d.err(path, field, "%s is already %s: names must be unique across knobs, dims and flags", name, prev)
		}
		if Reserved[name] {
			return profiler.Param{}, d.err(path, field, "%s is the name of a CSV column (or of a macro mltop defines): rename it, e.g. %s_", name, name)
		}
		seen[name] = kind
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
		vars[name] = expr.Int
		return out, nil
	}
	for _, name := range orderedKeys(d.keys("$.knobs"), m.Knobs) {
		p, err := addParam("knobs", name, m.Knobs[name], false)
		if err != nil {
			return err
		}
		f.schema.Knobs = append(f.schema.Knobs, p)
	}
	for _, name := range orderedKeys(d.keys("$.dims"), m.Dims) {
		p, err := addParam("dims", name, m.Dims[name], true)
		if err != nil {
			return err
		}
		f.schema.Dims = append(f.schema.Dims, p)
	}
	for _, name := range orderedKeys(d.keys("$.flags"), m.Flags) {
		path, field := "$.flags."+name, "flags."+name
		if !nameRE.MatchString(name) {
			return d.err(path, field, "%q is not a C identifier: it becomes a -D macro", name)
		}
		if prev, dup := seen[name]; dup {
			return d.err(path, field, "%s is already %s: names must be unique across knobs, dims and flags", name, prev)
		}
		if Reserved[name] {
			return d.err(path, field, "%s is the name of a CSV column (or of a macro mltop defines): rename it, e.g. %s_", name, name)
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
	f.vars = vars
	// rules
	for i, r := range m.Rules {
		p, err := expr.Compile(r, vars, d.where(fmt.Sprintf("$.rules[%d]", i), fmt.Sprintf("rules[%d]", i)))
		if err != nil {
			return err
		}
		f.rules = append(f.rules, p)
	}
	compile := func(v any, path, field string) (*expr.Program, error) {
		s, err := exprText(v)
		if err != nil {
			return nil, d.err(path, field, "%v", err)
		}
		p, err := expr.Compile(s, vars, d.where(path, field))
		var ee *expr.Error
		if err != nil && errors.As(err, &ee) && strings.Count(s, "(") != strings.Count(s, ")") {
			ee.Msg += `: YAML splits [a, b] lists at commas, so quote an expression that has one: ["cdiv(cols, 4)", 1]`
		}
		return p, err
	}
	// buffers
	if len(m.Buffers) == 0 {
		return d.err("$", "buffers", "no buffers: list the kernel's arrays, e.g. `- {name: X, dtype: T, shape: [rows, cols]}`")
	}
	names := map[string]bool{}
	for i, b := range m.Buffers {
		path, field := fmt.Sprintf("$.buffers[%d]", i), fmt.Sprintf("buffers[%d]", i)
		if !nameRE.MatchString(b.Name) {
			return d.err(path, field+".name", "buffer name %q: use letters, digits and _", b.Name)
		}
		if names[b.Name] || vars[b.Name] != 0 || seen[b.Name] != "" {
			return d.err(path+".name", field+".name", "%s is already used (a buffer, knob, dim or flag): buffer names must be unique", b.Name)
		}
		names[b.Name] = true
		ub := ubuf{name: b.Name, out: b.Out}
		switch b.DType {
		case "", "T":
			ub.dtype = ""
		case "i32", "int32":
			ub.dtype = profiler.I32
		default:
			dt, err := profiler.ParseDType(b.DType)
			if err != nil {
				return d.err(path+".dtype", field+".dtype", "%v (or T for the spec's dtype, or i32)", err)
			}
			ub.dtype = dt
		}
		if len(b.Shape) == 0 {
			return d.err(path, field+".shape", "no shape: add e.g. `shape: [rows, cols]`")
		}
		for k, s := range b.Shape {
			p, err := compile(s, fmt.Sprintf("%s.shape[%d]", path, k), fmt.Sprintf("buffers[%s].shape[%d]", b.Name, k))
			if err != nil {
				return err
			}
			ub.shape = append(ub.shape, p)
		}
		init, err := parseInit(b.Init, b.Out, ub.dtype)
		if err != nil {
			return d.err(path+".init", fmt.Sprintf("buffers[%s].init", b.Name), "%v", err)
		}
		ub.init = init
		if b.Tol != nil {
			if !b.Out {
				return d.err(path+".tol", fmt.Sprintf("buffers[%s].tol", b.Name), "only outputs (out: true) are checked: drop tol or mark the buffer out")
			}
			ub.tol = b.Tol
		}
		f.bufs = append(f.bufs, ub)
	}
	if !slices.ContainsFunc(f.bufs, func(b ubuf) bool { return b.out }) {
		return d.err("$.buffers", "buffers", "no output: mark the buffers the kernel writes with `out: true` (they are checked against the reference)")
	}
	// dispatches
	if len(m.Dispatches) == 0 {
		return d.err("$", "dispatches", "no dispatches: add `dispatches: [{entry: my_kernel, grid: [...], threads: [...], args: [...]}]`")
	}
	for i, ds := range m.Dispatches {
		path, field := fmt.Sprintf("$.dispatches[%d]", i), fmt.Sprintf("dispatches[%d]", i)
		if ds.Entry == "" {
			return d.err(path, field+".entry", "no entry: name the kernel function (__global__ / kernel)")
		}
		ud := udisp{name: ds.Name, entry: ds.Entry, timed: ds.Timed == nil || *ds.Timed}
		if ud.name == "" {
			ud.name = ds.Entry
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
				p, err := compile(v, fmt.Sprintf("%s.%s[%d]", path, g.key, k), fmt.Sprintf("%s[%d]", g.key, k))
				if err != nil {
					return err
				}
				g.out[k] = p
			}
		}
		scalarSeen := false
		for k, a := range ds.Args {
			apath := fmt.Sprintf("%s.args[%d]", path, k)
			if names[a] {
				if scalarSeen {
					return d.err(apath, fmt.Sprintf("%s.args[%d]", field, k), "buffer %s comes after a scalar: mltop passes the buffers first, then the scalars (CUDA: as arguments in that order; Metal: one struct at the buffer index after the last buffer); reorder the kernel's parameters", a)
				}
				ud.bufArgs = append(ud.bufArgs, a)
				continue
			}
			p, err := compile(a, apath, fmt.Sprintf("%s.args[%d]", field, k))
			if err != nil {
				var ee *expr.Error
				if errors.As(err, &ee) && strings.HasPrefix(ee.Msg, "unknown name") {
					return d.err(apath, fmt.Sprintf("%s.args[%d]", field, k), "%q is neither a buffer (%s) nor an expression over %s", a, strings.Join(bufNames(f.bufs), ", "), strings.Join(vars.Names(), ", "))
				}
				return err
			}
			scalarSeen = true
			ud.scalars = append(ud.scalars, uscalar{name: a, p: p})
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
		// args against the entry's parameters, in each source
		for _, lang := range slices.Sorted(mapsKeys(f.src)) {
			s := f.src[lang]
			sig, found, ok := FindEntry(s.code, ds.Entry)
			if !ok {
				hint := "no kernel functions found"
				if len(found) > 0 {
					hint = "kernels found: " + strings.Join(found, ", ")
				}
				return d.err(path+".entry", field+".entry", "%s has no kernel %q (%s)", s.path, ds.Entry, hint)
			}
			want := len(ud.bufArgs) + len(ud.scalars)
			got := sig.Bindable()
			if lang == "metal" && len(ud.scalars) > 0 {
				want = len(ud.bufArgs) + 1 // the scalars arrive as one struct
			}
			if len(got) != want {
				what := fmt.Sprintf("%d args", len(ds.Args))
				if lang == "metal" && len(ud.scalars) > 0 {
					what = fmt.Sprintf("%d buffers + 1 struct of %d scalars", len(ud.bufArgs), len(ud.scalars))
				}
				return d.err(path+".args", field+".args", "%s but %s:%d %s takes %d parameters: list the buffers and scalars in the parameter order", what, s.path, sig.Line, sig, len(got))
			}
		}
		f.disps = append(f.disps, ud)
	}
	if !slices.ContainsFunc(f.disps, func(u udisp) bool { return u.timed }) {
		return d.err("$.dispatches", "dispatches", "every dispatch is `timed: false`: at least one must be timed")
	}
	// work
	for k, v := range m.Work {
		if k != "flops" && k != "bytes" {
			return d.err("$.work."+k, "work."+k, "unknown key %q: work has flops and bytes", k)
		}
		p, err := compile(v, "$.work."+k, "work."+k)
		if err != nil {
			return err
		}
		if k == "flops" {
			f.flops = p
		} else {
			f.bytes = p
		}
	}
	return f.parseCheck(read)
}

type source struct{ path, code string }

type ubuf struct {
	name  string
	dtype profiler.DType // "" = the spec's dtype
	shape []*expr.Program
	init  initSpec
	out   bool
	tol   *tolYAML
}

type uscalar struct {
	name string
	p    *expr.Program
}

type utgm struct {
	name, note string
	bytes      *expr.Program
}

type udisp struct {
	name, entry   string
	grid, threads [3]*expr.Program
	bufArgs       []string
	scalars       []uscalar
	tgm           []utgm
	dynTGM        *expr.Program
	timed         bool
}

type initSpec struct {
	kind   profiler.InitKind
	a, b   float64
	source string
}

var initRE = regexp.MustCompile(`^\s*([a-z_]+)\s*(?:\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\))?\s*$`)

func parseInit(s string, out bool, dt profiler.DType) (initSpec, error) {
	if s == "" {
		if out {
			return initSpec{kind: profiler.InitPoison, source: "poison"}, nil
		}
		if dt == profiler.I32 {
			return initSpec{}, errors.New("an i32 input needs an init: e.g. randint(0, 1000) for ids, or arange")
		}
		return initSpec{kind: profiler.InitNormal, b: 1, source: "normal(0, 1)"}, nil
	}
	m := initRE.FindStringSubmatch(s)
	usage := "use normal(mean, std), uniform(lo, hi), randint(lo, hi), zeros, ones, arange or poison"
	if m == nil {
		return initSpec{}, fmt.Errorf("%q: %s", s, usage)
	}
	num := func(x string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q in %q is not a number", x, s)
		}
		return v, nil
	}
	args := 0
	if m[2] != "" {
		args++
	}
	if m[3] != "" {
		args++
	}
	want := map[string]int{"normal": 2, "uniform": 2, "randint": 2, "zeros": 0, "ones": 0, "arange": 0, "poison": 0}
	n, ok := want[m[1]]
	if !ok {
		return initSpec{}, fmt.Errorf("unknown init %q: %s", m[1], usage)
	}
	if args != n {
		return initSpec{}, fmt.Errorf("%s takes %d arguments, got %d in %q: %s", m[1], n, args, s, usage)
	}
	var a, b float64
	var err error
	if n == 2 {
		if a, err = num(m[2]); err != nil {
			return initSpec{}, err
		}
		if b, err = num(m[3]); err != nil {
			return initSpec{}, err
		}
	}
	sp := initSpec{a: a, b: b, source: strings.TrimSpace(s)}
	switch m[1] {
	case "normal":
		if b < 0 {
			return sp, fmt.Errorf("normal(%g, %g): the standard deviation must be ≥ 0", a, b)
		}
		sp.kind = profiler.InitNormal
	case "uniform":
		if b <= a {
			return sp, fmt.Errorf("uniform(%g, %g): want lo < hi", a, b)
		}
		sp.kind = profiler.InitUniform
	case "randint":
		if b <= a || a != float64(int64(a)) || b != float64(int64(b)) {
			return sp, fmt.Errorf("randint(%g, %g): want integers lo < hi (hi excluded)", a, b)
		}
		if dt != profiler.I32 {
			return sp, fmt.Errorf("randint fills integer buffers: give the buffer `dtype: i32`")
		}
		sp.kind = profiler.InitInts
	case "zeros":
		sp.kind = profiler.InitZero
	case "ones":
		sp.kind = profiler.InitOnes
	case "arange":
		sp.kind = profiler.InitArange
	case "poison":
		sp.kind = profiler.InitPoison
	}
	return sp, nil
}

func exprText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	case nil:
		return "", errors.New("empty value: write a number or an expression")
	}
	return "", fmt.Errorf("want a number or an expression string, got %v", v)
}

func orderedKeys[V any](order []string, m map[string]V) []string {
	var out []string
	for _, k := range order {
		if _, ok := m[k]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(mapsKeys(m)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func bufNames(bs []ubuf) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.name
	}
	return out
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Reserved are names a knob, dim or flag may not take: the CSV's fixed
// columns (profiler's csvHead/csvTail) and the macros mltop defines.
var Reserved = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`time backend device timer kernel dtype n min_us p10_us median_us p90_us cv tflops gbps
		pct_peak_flops pct_peak_bw pct_measured_flops pct_measured_bw tgm_bytes tgm_limit compiler_tgm occupancy
		occupancy_limiter memory_bytes max_abs_err max_rel_err rms_err tol rows_checked status error
		T DTYPE DTYPE_F32 DTYPE_F16 DTYPE_BF16`) {
		Reserved[n] = true
	}
}
