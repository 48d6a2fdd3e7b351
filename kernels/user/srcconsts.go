package user

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler/expr"
)

// This file lets manifest expressions use the source's own integer
// constants by name: its object-like macros (#define BLOCK_DIM 1024) and
// file-scope const/constexpr integers (constexpr int kThreads = 128;). A
// name is looked up only when an expression uses one that the manifest
// does not declare; the manifest's names always win.

// SourceDef is one definition of a source constant.
type SourceDef struct {
	File string // the file's path
	Line int
	Text string // the #define or the declaration, as written
}

func (d SourceDef) String() string {
	return fmt.Sprintf("%s:%d (%s)", filepath.Base(d.File), d.Line, d.Text)
}

// SourceConst is a source constant a manifest expression used.
type SourceConst struct {
	Name  string
	Value int64
	Defs  []SourceDef
}

// srcConst is a name the sources define, with its value or why an
// expression may not use it.
type srcConst struct {
	name  string
	defs  []SourceDef
	init  []string // each definition's value text (a macro's replacement, a declaration's initializer)
	value int64
	why   string    // "" when value holds; else why the name is refused
	table *srcTable // until resolved: what evaluating it reads
}

// sourceConsts scans the sources and the local headers they include for
// the integer constants expressions may use. Names the manifest declares
// (knobs, dims, flags, values, defines, the dtype name) are left out: they
// win. A source the scan cannot read is skipped here (prepare reports it).
func (bl *builder) sourceConsts() error {
	f, m := bl.f, bl.m
	f.includeDirs = bl.includeDirs()
	manifest := map[string]bool{f.dtypeName(): true, "DTYPE": true}
	for _, names := range [][]string{slices.Collect(maps.Keys(m.Knobs)), slices.Collect(maps.Keys(m.Dims)),
		slices.Collect(maps.Keys(m.Flags)), slices.Collect(maps.Keys(m.Values)), slices.Collect(maps.Keys(m.Defines))} {
		for _, n := range names {
			manifest[n] = true
		}
	}
	var files [][]*unit
	for _, lang := range slices.Sorted(maps.Keys(f.src)) {
		s := f.src[lang]
		p, err := loadSource(lang, s.path, s.code, f.includeDirs, bl.read, bl.sourceMacros())
		if err != nil {
			continue
		}
		bl.loaded[lang] = p                                                  // prepare plans it: the files are read and scanned once
		files = append(files, append(slices.Clone(p.units[1:]), p.units[0])) // headers first, like ObjectMacros
	}
	f.srcConsts = collectSourceConsts(files, manifest)
	return nil
}

// collectSourceConsts reads the constants of each source's files (headers
// first, the main file last); each is evaluated when first asked for
// (srcConst.resolve). A name defined with different values (under #if
// branches, or in two sources) is refused.
func collectSourceConsts(sources [][]*unit, manifest map[string]bool) map[string]*srcConst {
	out := map[string]*srcConst{}
	add := func(name string, d SourceDef, init string) {
		if manifest[name] {
			return
		}
		c := out[name]
		if c == nil {
			c = &srcConst{name: name}
			out[name] = c
		}
		c.defs = append(c.defs, d)
		c.init = append(c.init, init)
	}
	for _, files := range sources {
		for _, u := range files {
			for _, d := range u.scan.Directives {
				switch {
				case d.Dead:
				case d.Kind == "define" && d.Defines != "":
					text := strings.TrimSpace(u.code[d.Start:d.End])
					if d.Replacement != "" || isFunctionLike(text, d.Defines) {
						add(d.Defines, SourceDef{u.path, d.Line, text}, "\x00function-like")
						continue
					}
					add(d.Defines, SourceDef{u.path, d.Line, text}, d.Value)
				case d.Kind == "undef" && len(d.Tests) == 1:
					delete(out, d.Tests[0])
				}
			}
			for _, d := range u.scan.Decls {
				// a namespace's constant too: the kernels in it use the
				// name unqualified (torchvision's threadsPerBlock, in
				// vision::ops); one name in two namespaces with different
				// values is refused as a name defined twice
				if d.Kind != csrc.Variable || len(d.Names) != 1 {
					continue
				}
				text := strings.TrimSpace(u.code[d.Start:d.End])
				if init, ok := constInit(text, d.Names[0]); ok {
					add(d.Names[0], SourceDef{u.path, d.Line, text}, init)
				}
			}
		}
	}
	macros := map[string]string{} // each name's one value text, for the others' evaluation
	for n, c := range out {
		if distinct := slices.Compact(slices.Sorted(slices.Values(c.init))); len(distinct) == 1 && !strings.HasPrefix(distinct[0], "\x00") {
			macros[n] = distinct[0]
		} else {
			macros[n] = csrc.Ambiguous
		}
	}
	t := &srcTable{all: out, macros: macros, manifest: manifest}
	for _, c := range out {
		c.table = t
	}
	return out
}

// srcTable is what evaluating a source constant reads: every name's
// definitions and value text, and the manifest's names.
type srcTable struct {
	all      map[string]*srcConst
	macros   map[string]string
	manifest map[string]bool
}

// resolve evaluates c the first time it is asked for (a program's headers
// may define many names no expression uses).
func (c *srcConst) resolve() *srcConst {
	if c.table != nil {
		c.evaluate(c.table.all, c.table.macros, c.table.manifest)
		c.table = nil
	}
	return c
}

// isFunctionLike says whether the #define text defines name with a
// parameter list (a '(' right after the name).
func isFunctionLike(text, name string) bool {
	_, after, ok := strings.Cut(text, "define")
	if !ok {
		return false
	}
	i := strings.Index(after, name)
	return i >= 0 && strings.HasPrefix(after[i+len(name):], "(")
}

// evaluate sets c's value, or why it has none.
func (c *srcConst) evaluate(all map[string]*srcConst, macros map[string]string, manifest map[string]bool) {
	distinct := slices.Compact(slices.Sorted(slices.Values(c.init)))
	if len(distinct) > 1 {
		c.why = fmt.Sprintf("the source defines %s more than once with different values (%s), so which one the compiler sees depends on how it is built", c.name, c.defsText())
		return
	}
	init := distinct[0]
	if init == "\x00function-like" {
		c.why = fmt.Sprintf("%s is a function-like macro (%s), not a constant", c.name, c.defsText())
		return
	}
	if strings.TrimSpace(init) == "" {
		c.why = fmt.Sprintf("%s is defined without a value (%s)", c.name, c.defsText())
		return
	}
	if strings.HasPrefix(init, "\x00") {
		c.why = fmt.Sprintf("%s is not an integer constant (%s): it is %s", c.name, c.defsText(), init[1:])
		return
	}
	v, ok := csrc.IntConst(init, macros)
	if ok {
		c.value = v
		return
	}
	c.why = fmt.Sprintf("its value %q is not an integer constant expression mltop can evaluate (%s)%s", init, c.defsText(), dependsOn(init, all, manifest))
}

// dependsOn names what in text keeps it from being a constant: a manifest
// name (the value changes per spec) or a source name that has no value.
func dependsOn(text string, all map[string]*srcConst, manifest map[string]bool) string {
	for _, t := range csrc.Tokenize(text) {
		if t.Kind != csrc.Ident {
			continue
		}
		if manifest[t.Text] {
			return fmt.Sprintf(": it uses %s, a name of the manifest, so write the expression with %s itself", t.Text, t.Text)
		}
		if o := all[t.Text]; o != nil && len(slices.Compact(slices.Sorted(slices.Values(o.init)))) > 1 {
			return fmt.Sprintf(": it uses %s, which the source defines more than once with different values", t.Text)
		}
	}
	return ""
}

func (c *srcConst) defsText() string {
	parts := make([]string, len(c.defs))
	for i, d := range c.defs {
		parts[i] = d.String()
	}
	return strings.Join(parts, ", ")
}

// integerWords are the words an integer constant's type is made of.
var integerWords = map[string]bool{"int": true, "unsigned": true, "signed": true, "long": true, "short": true, "char": true,
	"size_t": true, "int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true, "uint": true, "ushort": true, "ulong": true}

// constQualifiers are the words that may stand before or among a constant's type words.
var constQualifiers = map[string]bool{"static": true, "inline": true, "const": true, "constexpr": true,
	"__device__": true, "__host__": true, "__constant__": true, "constant": true}

// constInit reads a file-scope constant declaration of name, `constexpr
// int kThreads = 128;` or `static const unsigned N{4};`: its initializer
// text and true. A const/constexpr declaration of another type gives
// "\x00" and what it is (a float, an array), so a use can be refused with
// that reason; anything else (no const, no initializer) gives false.
func constInit(text, name string) (string, bool) {
	toks := csrc.Tokenize(text)
	isConst, integer := false, true
	var typ []string
	i := 0
	for ; i < len(toks) && toks[i].Text != name; i++ {
		w := toks[i].Text
		switch {
		case i == 0 && w == "template", w == "extern":
			return "", false
		case w == "const" || w == "constexpr" || w == "constant":
			isConst = true
		case constQualifiers[w]:
		case toks[i].Kind == csrc.Ident:
			typ = append(typ, w)
			integer = integer && integerWords[w]
		default:
			integer = false
			typ = append(typ, w)
		}
	}
	if !isConst || i+1 >= len(toks) || len(typ) == 0 {
		return "", false
	}
	rest := toks[i+1:]
	open := rest[0].Text
	if open == "[" {
		return "\x00an array", true
	}
	if !integer {
		return "\x00of type " + strings.Join(typ, " "), true
	}
	return initializer(text, name, open)
}

// initializer is the text between open (=, { or ( right after name) and
// its end (;, }, ) or the end of text); false when there is none.
func initializer(text, name, open string) (string, bool) {
	at := wordRE(name).FindStringSubmatchIndex(text)
	if at == nil {
		return "", false
	}
	rest := strings.TrimSpace(text[at[4]:]) // from the end of the name
	closeBy := map[string]string{"=": ";", "{": "}", "(": ")"}[open]
	if closeBy == "" || !strings.HasPrefix(rest, open) {
		return "", false
	}
	rest = rest[len(open):]
	if end := strings.LastIndex(rest, closeBy); end >= 0 {
		rest = rest[:end]
	} else if open != "=" {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	return rest, rest != ""
}

// wordRE matches name as a whole identifier.
func wordRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
}

// compileExpr is expr.Compile where a name the manifest does not declare
// may be one of the source's integer constants: it is added to vars (and
// the builder's) and recorded as used. A source name without a value is
// an error naming it, its definitions and the fix.
func (bl *builder) compileExpr(src string, vars expr.Vars, w expr.Where) (*expr.Program, error) {
	for {
		p, err := expr.Compile(src, vars, w)
		var ee *expr.Error
		if err == nil || !errors.As(err, &ee) {
			return p, err
		}
		name, ok := unknownName(ee.Msg)
		c := bl.f.srcConsts[name]
		if !ok || c == nil {
			return p, err
		}
		c.resolve()
		if c.why != "" {
			return nil, &expr.Error{Where: w, Src: src, Off: ee.Off, Msg: fmt.Sprintf("%s in %s '%s' is the source's, but %s: write the number, or declare %s in the manifest (a knob, which the source takes where it reads it under #ifndef %s; or values: {%s: N} for the expressions alone)", name, w.Field, src, c.why, name, name, name)}
		}
		vars[name] = expr.Int
		bl.vars[name] = expr.Int
		if !slices.Contains(bl.f.usedConsts, name) {
			bl.f.usedConsts = append(bl.f.usedConsts, name)
		}
	}
}

// manifestVars are the expression names the manifest declares: the
// builder's, less the source constants the expressions used.
func (bl *builder) manifestVars() expr.Vars {
	out := maps.Clone(bl.vars)
	for _, n := range bl.f.usedConsts {
		delete(out, n)
	}
	return out
}

// unknownName is the name an expr "unknown name 'X' …" message is about.
func unknownName(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "unknown name '")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "'")
	return name, ok
}

// SourceConstants are the source constants the manifest's expressions
// use, in the order of first use, with their values and definitions.
func (f *Family) SourceConstants() []SourceConst {
	out := make([]SourceConst, 0, len(f.usedConsts))
	for _, n := range f.usedConsts {
		c := f.srcConsts[n]
		out = append(out, SourceConst{Name: n, Value: c.value, Defs: slices.Clone(c.defs)})
	}
	return out
}

// KnowsName says whether a manifest expression (a tgm: item's bytes, a
// grid) may use name as it is: a knob, dim, flag or value, the dtype's
// name, or one of the sources' integer constants that has a value.
func (f *Family) KnowsName(name string) bool {
	if _, ok := f.vars[name]; ok {
		return true
	}
	c := f.srcConsts[name]
	return c != nil && c.resolve().why == ""
}

// addSourceConsts puts the used source constants into an expression
// environment (before the values, which may use them).
func (f *Family) addSourceConsts(e map[string]any) {
	for _, n := range f.usedConsts {
		e[n] = int(f.srcConsts[n].value)
	}
}

// String is `BLOCK_DIM = 1024 (reduce.cu:4)`.
func (c SourceConst) String() string {
	at := make([]string, len(c.Defs))
	for i, d := range c.Defs {
		at[i] = fmt.Sprintf("%s:%d", filepath.Base(d.File), d.Line)
	}
	return c.Name + " = " + strconv.FormatInt(c.Value, 10) + " (" + strings.Join(at, ", ") + ")"
}
