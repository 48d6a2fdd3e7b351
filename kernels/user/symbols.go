package user

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// A buffer with `symbol:` fills a module global of the CUDA source (a
// `__constant__` table that a whole program fills with cudaMemcpyToSymbol
// from host code mltop blanks): it is an input, made and sent to the
// reference like any other, that no dispatch binds; the runner copies it
// into the global before the spec's launches (profiler.SymbolWriter).

// usymbol is a buffer's global as the source declares it.
type usymbol struct {
	name string // the C++ name, qualified by its namespaces: c_Kernel, ns::c_Kernel
	decl string // the declaration as written, for messages
	at   string // file:line of the declaration (the file's base name)
	file string // the declaring file's path
	line int
	// elemBytes is the size of the declared element type, 0 for the dtype
	// name (the spec's dtype), -1 when mltop does not know the type.
	elemBytes int
	// extents are the declared array extents as expressions over the
	// spec; nil when the declared size is not known before the compile
	// (a macro mltop cannot evaluate, an unknown type): the backend checks
	// the size when it fills the global.
	extents []*expr.Program
	static  bool // elemBytes and extents give the declared size
}

var cxxNameRE = regexp.MustCompile(`^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$`)

// bufferSymbol reads a buffer's `symbol:`: true (the global has the
// buffer's name) or the global's C++ name (ns::c_Kernel). "" when the
// buffer is a kernel argument.
func (bl *builder) bufferSymbol(b bufferYAML, path string) (string, error) {
	d, field := bl.d, "buffers["+b.Name+"].symbol"
	var name string
	switch v := b.Symbol.(type) {
	case nil:
		return "", nil
	case bool:
		if !v {
			return "", nil
		}
		name = b.Name
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "yes", "on", "y", "true":
			// YAML 1.2 reads `symbol: yes` as a string: a global named yes.
			return "", d.err(path+".symbol", field, "%q reads as the name of a global: write `symbol: true` when the global is named %s, or its name as the source declares it (c_Kernel, ns::c_Kernel)", v, b.Name)
		}
		name = strings.TrimPrefix(strings.TrimSpace(v), "::")
		if !cxxNameRE.MatchString(name) {
			return "", d.err(path+".symbol", field, "%q is not a C++ name: write `symbol: true` when the global is named %s, or its name as the source declares it (c_Kernel, ns::c_Kernel)", v, b.Name)
		}
	default:
		return "", d.err(path+".symbol", field, "%v: write `symbol: true` when the global is named %s, or its C++ name (ns::c_Kernel)", v, b.Name)
	}
	if b.Out || b.InOut {
		what := map[bool]string{true: "inout", false: "out"}[b.InOut]
		return "", d.err(path+".symbol", field, "%s fills the module global %s before the launches, so it is an input and is never read back: drop `%s: true`, and let the kernel write its results to an output buffer", b.Name, name, what)
	}
	if b.Scratch {
		// The runner fills a global once per spec and resets scratch
		// buffers before every launch: a scratch global would keep what
		// the previous launch left in it.
		return "", d.err(path+".symbol", field, "%s is scratch (reset before every launch) and fills the module global %s, which is written once per spec and never reset: drop `scratch: true` if the kernel resets %s itself, or drop `symbol:` and pass %s as a kernel argument", b.Name, name, name, b.Name)
	}
	return name, nil
}

// symbols checks the buffers that fill module globals against the
// dispatches (no arg binds one) and the sources (a CUDA source declares
// each as a __constant__, __device__ or __managed__ variable; Metal has
// no such globals).
func (bl *builder) symbols() error {
	f, d := bl.f, bl.d
	for k, ud := range f.disps {
		for j, a := range ud.args {
			i := slices.IndexFunc(f.bufs, func(b ubuf) bool { return b.name == a.buf && b.symbol != nil })
			if a.buf == "" || i < 0 {
				continue
			}
			apath, afield := d.item(fmt.Sprintf("$.dispatches[%d].args", k), fmt.Sprintf("dispatches[%d].args", k), j)
			return d.err(apath, afield, "%s fills the module global %s (symbol:), so no parameter takes it: drop it from args, or drop `symbol:` to pass it as a pointer", a.buf, f.bufs[i].symbol.name)
		}
	}
	for i := range f.bufs {
		b := &f.bufs[i]
		if b.symbol == nil {
			continue
		}
		path, field := fmt.Sprintf("$.buffers[%d].symbol", i), "buffers["+b.name+"].symbol"
		p, ok := f.prep["cuda"]
		if !ok {
			return d.err(path, field, "Metal has no module globals that the host fills: drop `symbol:` and pass %s as a `constant` buffer argument (constant float* %s [[buffer(n)]])", b.name, b.name)
		}
		sym, err := bl.findSymbol(p, b.symbol.name)
		if err != nil {
			return d.err(path, field, "%v", err)
		}
		*b.symbol = sym
	}
	return nil
}

// findSymbol finds the declaration of the global name in the CUDA
// source and its local headers.
func (bl *builder) findSymbol(p *prepared, name string) (usymbol, error) {
	scope, base := "", name
	if k := strings.LastIndex(name, "::"); k >= 0 {
		scope, base = name[:k], name[k+2:]
	}
	var globals []string
	type found struct {
		u *unit
		d csrc.Decl
	}
	var hits []found
	for _, u := range p.units {
		for _, dc := range u.scan.Decls {
			if dc.Kind != csrc.Variable {
				continue
			}
			for _, n := range dc.Names {
				q := n
				if dc.Scope != "" {
					q = dc.Scope + "::" + n
				}
				if fillable(u.code[dc.Start:dc.End]) != "" {
					globals = append(globals, q)
				}
				if n == base && (dc.Scope == scope || scope == "" && !strings.Contains(name, "::")) {
					hits = append(hits, found{u, dc})
				}
			}
		}
	}
	if len(hits) == 0 {
		have := "it declares none"
		if len(globals) > 0 {
			have = "its globals: " + strings.Join(globals, ", ")
		}
		return usymbol{}, fmt.Errorf("the CUDA source declares no global %s (%s): declare %s, or give `symbol:` the name the source uses", name, have, suggestGlobal(scope, base))
	}
	if len(hits) > 1 && scope == "" {
		var where []string
		for _, h := range hits {
			where = append(where, qualify(h.d.Scope, base))
		}
		return usymbol{}, fmt.Errorf("%s is declared in several namespaces (%s): give `symbol:` the qualified name", name, strings.Join(where, ", "))
	}
	h := hits[0]
	text := h.u.code[h.d.Start:h.d.End]
	sym := usymbol{name: qualify(h.d.Scope, base), decl: strings.Join(strings.Fields(strings.TrimSuffix(strings.TrimSpace(text), ";")), " "),
		at: fmt.Sprintf("%s:%d", filepath.Base(h.u.path), h.d.Line), file: h.u.path, line: h.d.Line}
	switch fillable(text) {
	case "":
		return sym, fmt.Errorf("%s (%s) is a host variable, which mltop blanks: only a __constant__, __device__ or __managed__ global lives in the kernel's module", sym.name, sym.at)
	case "__shared__":
		return sym, fmt.Errorf("%s (%s) is __shared__: each block has its own, and no host code fills it; declare it __constant__ or __device__", sym.name, sym.at)
	}
	elem, extents, ptr := csrc.Declarator(text, base)
	if ptr {
		return sym, fmt.Errorf("%s (%s) is a pointer: mltop fills a global array or scalar with the buffer's values, not a pointer to them; pass the buffer as a kernel argument instead", sym.name, sym.at)
	}
	bl.staticSize(&sym, p, elem, extents)
	return sym, nil
}

// suggestGlobal is the declaration of a missing global, in words: one at
// file scope, or inside its namespace (a qualified name is not a
// declarator).
func suggestGlobal(scope, base string) string {
	if scope == "" {
		return fmt.Sprintf("`__constant__ float %s[N];` at file scope", base)
	}
	return fmt.Sprintf("`namespace %s { __constant__ float %s[N]; }` at file scope", scope, base)
}

func qualify(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "::" + name
}

// fillable is the memory-space word of a global's declaration:
// __constant__, __device__, __managed__ or __shared__; "" for a host
// variable.
func fillable(decl string) string {
	for _, t := range csrc.Tokenize(decl) {
		switch t.Text {
		case "__constant__", "__device__", "__managed__", "__shared__":
			return t.Text
		}
	}
	return ""
}

// ElemBytes is the size in bytes of a C, CUDA or Metal element type as
// a declaration writes it (csrc.TypeBytes); ok is false for a type mltop
// does not know (a template parameter, a struct). The sizes of
// `__constant__` tables and of `mltop check`'s shared-array suggestions
// come from it.
func ElemBytes(t string) (n int, ok bool) { return csrc.TypeBytes(t) }

// staticSize fills sym's declared size where the source gives it: an
// element type mltop knows and extents that are numbers, names mltop gives
// the source (knobs, dims, values) or the source's own object-like macros
// of such.
func (bl *builder) staticSize(sym *usymbol, p *prepared, elem, extents []string) {
	t := strings.Join(elem, " ")
	switch n, ok := csrc.TypeBytes(t); {
	case t == bl.dtypeName():
		sym.elemBytes = 0
	case ok:
		sym.elemBytes = n
	default:
		sym.elemBytes = -1
		return
	}
	macros := p.objectMacros()
	for _, x := range extents {
		text, ok := expandMacros(x, macros, bl.manifestVars())
		if !ok || text == "" {
			return
		}
		prog, err := expr.Compile(text, bl.vars, expr.Where{File: sym.at, Field: "the declared extent " + x})
		if err != nil || prog.ResultKind() != expr.Int {
			return
		}
		sym.extents = append(sym.extents, prog)
	}
	sym.static = true
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// expandMacros replaces the source's object-like macros in an extent. It
// gives up (ok false) on a name that is both a macro of the source and a
// name mltop gives it (which one the compiler sees depends on the
// source's #ifndef), and on a macro defined again with other text
// (csrc.Ambiguous).
func expandMacros(text string, macros map[string]string, vars expr.Vars) (string, bool) {
	ok := true
	for range 16 {
		changed := false
		text = identRE.ReplaceAllStringFunc(text, func(id string) string {
			body, isMacro := macros[id]
			if !isMacro {
				return id
			}
			if _, offered := vars[id]; offered || body == csrc.Ambiguous {
				ok = false
				return id
			}
			changed = true
			return "(" + body + ")"
		})
		if !ok || !changed {
			return text, ok
		}
	}
	return text, false // recursion
}

// checkSymbolSize holds a symbol buffer's bytes for spec e against the
// global's declared size, where the source gives it.
func (b ubuf) checkSymbolSize(bs profiler.BufferSpec, e map[string]any) error {
	sym := b.symbol
	if sym == nil || !sym.static {
		return nil
	}
	elem := int64(sym.elemBytes)
	if elem == 0 {
		elem = int64(bs.Type.Size())
	}
	n := int64(1)
	for _, x := range sym.extents {
		v, err := x.Int(e)
		if err != nil {
			return err
		}
		n *= v
	}
	if n*elem == bs.Bytes() {
		return nil
	}
	return fmt.Errorf("buffer %s fills %s, which %s declares as `%s`: %d × %d B = %d B, but the buffer is %d × %s = %d B%s: make the buffer's shape and dtype match the declaration", b.name, sym.name, sym.at, sym.decl, n, elem, n*elem, bs.Elems, bs.Type, bs.Bytes(), forValues(e, sym.extents...))
}

// symbolsOn refuses a plan in lang that has buffers filling module
// globals where lang has none (Metal).
func (f *Family) symbolsOn(lang string) error {
	if lang != "metal" {
		return nil
	}
	for _, b := range f.bufs {
		if b.symbol != nil {
			return fmt.Errorf("buffer %s fills the CUDA global %s (symbol:), and Metal has no module globals that the host fills: run it on CUDA, or give the Metal kernel a `constant` buffer parameter and a manifest without symbol:", b.name, b.symbol.name)
		}
	}
	return nil
}

// symbolsNotCounted is the note's tail naming the module globals the
// default byte count leaves out.
func symbolsNotCounted(p *profiler.Plan) string {
	var names []string
	for _, b := range p.SymbolBuffers() {
		names = append(names, b.Name)
	}
	if len(names) == 0 {
		return ""
	}
	return " (but " + strings.Join(names, ", ") + ", module globals read through the constant cache)"
}

// SymbolInfo is a buffer that fills a module global of the CUDA source,
// as `mltop check` reports it.
type SymbolInfo struct {
	Buffer, Symbol string
	Decl           string // the declaration as written
	File           string // where the source declares it
	Line           int
	// SizeKnown: the source gives the declared size, so each spec's plan
	// holds the buffer's bytes against it; otherwise the backend does when
	// it fills the global.
	SizeKnown bool
}

// Symbols are the buffers that fill module globals, in manifest order.
func (f *Family) Symbols() []SymbolInfo {
	var out []SymbolInfo
	for _, b := range f.bufs {
		if s := b.symbol; s != nil {
			out = append(out, SymbolInfo{Buffer: b.name, Symbol: s.name, Decl: s.decl, File: s.file, Line: s.line, SizeKnown: s.static})
		}
	}
	return out
}
