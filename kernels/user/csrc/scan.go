package csrc

import (
	"maps"
	"slices"
	"strings"
)

// DeclKind is what a top-level declaration declares.
type DeclKind int

const (
	Other         DeclKind = iota // static_assert, a macro invocation, a class template's explicit instantiation, …
	Function                      // a function (template) declaration or definition
	Variable                      // a variable (template)
	Type                          // struct, class, union, enum (template)
	Alias                         // typedef, using, namespace alias
	Namespace                     // a namespace block (its members are Decls of their own)
	Linkage                       // an extern "C" { … } block (its members are Decls of their own)
	Instantiation                 // an explicit instantiation of a function template: template R f<A>(…); extern template …
)

var declKindNames = [...]string{"other", "function", "variable", "type", "alias", "namespace", "linkage", "instantiation"}

func (k DeclKind) String() string { return declKindNames[k] }

// Decl is one declaration at file or namespace scope.
type Decl struct {
	Kind     DeclKind
	Names    []string // the names it declares in its scope (an unscoped enum's enumerators too)
	Scope    string   // the enclosing namespaces, "a::b" ("" at file scope)
	Template string   // an Instantiation: the name of the function template it instantiates (it declares no name)
	// Device: __global__/__device__/__constant__/__shared__/__managed__,
	// const or constexpr; an Instantiation without such words is Device
	// when the file declares a device function template of that name.
	Device     bool
	Definition bool // a function with a body
	Line       int  // first line (1-based)
	EndLine    int  // last line
	Start, End int  // byte offsets: src[Start:End] is the declaration
	// hostMacro: an Other that is a macro invocation defining host
	// functions (a binding macro of the file, PYBIND11_MODULE(…) { … }).
	hostMacro bool
	// hostOnly: a type or alias only host code needs, naming what only
	// host headers declare, or a constant only host code reads
	// (MarkHostOnly).
	hostOnly bool
	// hostMembers: the byte spans of a class's member functions marked
	// __host__ alone (members.go), blanked with host code
	hostMembers [][2]int
}

// Host says whether the declaration is host code: a function, variable or
// function template instantiation that is not Device, a macro invocation
// that defines host functions, or a declaration MarkHostOnly marked.
// mltop blanks those before NVRTC compiles a source (an explicit
// instantiation of a blanked host template would otherwise be "not a
// template").
func (d Decl) Host() bool {
	return (d.Kind == Function || d.Kind == Variable || d.Kind == Instantiation) && !d.Device || d.hostMacro || d.hostOnly
}

// File is what Scan found in a source.
type File struct {
	Decls      []Decl
	Directives []Directive
	firstUse   map[string]int // identifier → first line it appears on in live code or a #define body
	code       []ltok         // the live code tokens (no preprocessor lines)
	dirty      map[int]bool
}

// Scan reads the top-level declarations, the preprocessor lines and the
// names used in src. It is not a C++ parser: it follows braces, parentheses
// and keywords, and never fails (odd input gives odd but bounded results).
func Scan(src string) *File { return ScanWith(src) }

// Macros says which macros a scan takes as defined (true) or not (false)
// when it decides #if conditions; a name it lacks is unknown, and every
// branch on it stays live.
type Macros map[string]bool

// NVRTCMacros are the macros as NVRTC sees them (nvrtcMacros), a fresh
// map the caller may change: Scan's.
func NVRTCMacros() Macros { return maps.Clone(Macros(nvrtcMacros)) }

// HostMacros are the macros as a reader of a whole program takes them
// (mltop new): NVRTC's, less those that tell nvcc's host pass from its
// device pass (__CUDA_ARCH__, __CUDACC_RTC__, __NVCC__), which are
// unknown. Host code under `#ifndef __CUDA_ARCH__` (a launcher, a
// cudaMemcpyToSymbol, an #include of the launcher's header) is then read
// with the device code.
func HostMacros() Macros {
	m := NVRTCMacros()
	for _, n := range []string{"__CUDA_ARCH__", "__CUDACC_RTC__", "__NVCC__"} {
		delete(m, n)
	}
	return m
}

// ScanIn is ScanWith whose #if conditions are decided by macros (nil:
// every condition on a name is unknown) instead of NVRTC's own: a
// manifest's defines: over them (NVRTCMacros), or HostMacros.
func ScanIn(src string, macros Macros, headers ...*File) *File {
	return scanWith(src, macros, headers)
}

// ScanWith is Scan where the live #defines of headers (the scans of the
// local headers the source includes) count as the source's own: a macro
// invocation of one of them is read through its replacement, never taken
// for a host header's binding macro (see hostMacro).
func ScanWith(src string, headers ...*File) *File {
	return scanWith(src, nvrtcMacros, headers)
}

func scanWith(src string, macros map[string]bool, headers []*File) *File {
	l := lex(src)
	live := markDead(l.toks, l.dirs, macros)
	f := &File{Directives: l.dirs, firstUse: map[string]int{}, dirty: l.dirty}
	s := &scanner{macros: map[string][]string{}, replacements: map[string]string{}, braces: map[string]int{}}
	for _, h := range headers {
		s.addDefines(h.Directives)
	}
	s.addDefines(l.dirs)
	for _, d := range l.dirs {
		if !d.Dead && (d.Kind == "define" || d.Kind == "pragma") {
			for _, w := range d.Body {
				f.use(w, d.Line)
			}
		}
	}
	for _, t := range live {
		if t.dir < 0 {
			f.code = append(f.code, t)
			if t.kind == Ident {
				f.use(t.text, t.line)
			}
		}
	}
	s.toks = prune(live, l.dirs)
	for i := 0; i < len(s.toks); {
		i = s.scope(i, "", &f.Decls) // a stray "}" ends a scope early: go on after it
	}
	resolveInstantiations(f.Decls)
	return f
}

// resolveInstantiations marks Device the explicit instantiations, written
// without execution space, of a device function template the file declares
// (`template void k<float>(float*);` of a __global__ k). One of a template
// the file does not declare stays host: NVRTC instantiates kernels from
// their name expressions, but keeping a host template's instantiation is a
// compile error.
func resolveInstantiations(decls []Decl) {
	device := map[string]bool{}
	for _, d := range decls {
		if d.Kind == Function && d.Device {
			for _, n := range d.Names {
				device[n] = true
			}
		}
	}
	for i, d := range decls {
		if d.Kind == Instantiation && !d.Device && device[d.Template] {
			decls[i].Device = true
		}
	}
}

func (f *File) use(name string, line int) {
	if _, ok := f.firstUse[name]; !ok {
		f.firstUse[name] = line
	}
}

// FirstUse is the first line on which name appears in live code or in a
// #define's body; 0 when it does not.
func (f *File) FirstUse(name string) int { return f.firstUse[name] }

// FirstDirective is the first live preprocessor line that tests name
// (#if, #ifdef, #ifndef, #elif, defined(name), #undef) or #defines it; nil
// when none does.
func (f *File) FirstDirective(name string) *Directive {
	for i, d := range f.Directives {
		if d.Dead {
			continue
		}
		if d.Defines == name {
			return &f.Directives[i]
		}
		for _, t := range d.Tests {
			if t == name {
				return &f.Directives[i]
			}
		}
	}
	return nil
}

// DirectiveNames lists, in order of first appearance, the names live
// preprocessor lines test or #define.
func (f *File) DirectiveNames() []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, d := range f.Directives {
		if d.Dead {
			continue
		}
		for _, t := range d.Tests {
			add(t)
		}
		add(d.Defines)
	}
	return out
}

// DeclaredNames lists the names declared at file or namespace scope, in
// order.
func (f *File) DeclaredNames() []string {
	var out []string
	for _, d := range f.Decls {
		out = append(out, d.Names...)
	}
	return out
}

// Declared finds the declaration of name at file or namespace scope.
func (f *File) Declared(name string) (Decl, bool) {
	for _, d := range f.Decls {
		for _, n := range d.Names {
			if n == name {
				return d, true
			}
		}
	}
	return Decl{}, false
}

// CleanLine says whether line starts outside any comment, literal or
// continued line: a line inserted before it is read as its own line.
func (f *File) CleanLine(line int) bool { return !f.dirty[line] }

// scanner reads declarations from pruned code tokens.
type scanner struct {
	toks         []ltok
	macros       map[string][]string // object-like and function-like macro bodies, for specifiers hidden in macros
	replacements map[string]string   // function-like macros' replacement texts
	// braces: macros whose replacement opens more braces than it closes
	// (> 0) or closes more than it opens (< 0), by how many: ggml's
	// GGML_TABLE_BEGIN(…) ends in "= {", GGML_TABLE_END() is "};"
	braces map[string]int
}

// scope reads declarations from i until the `}` closing the scope (or the
// end) and returns the index after it.
func (s *scanner) scope(i int, scope string, out *[]Decl) int {
	for i < len(s.toks) {
		switch s.toks[i].text {
		case "}":
			return i + 1
		case ";":
			i++
			continue
		}
		i = s.decl(i, scope, out)
	}
	return i
}

// specCalls are identifiers followed by a parenthesised argument that are
// part of a declaration's specifiers, not its parameter list.
var specCalls = map[string]bool{"__launch_bounds__": true, "__attribute__": true, "__align__": true, "alignas": true,
	"__declspec": true, "decltype": true, "__maxnreg__": true, "__cluster_dims__": true, "noexcept": true,
	"throw": true, "__nv_register_params__": true, "_Alignas": true, "__builtin_align__": true}

var deviceWords = map[string]bool{"__global__": true, "__device__": true, "__constant__": true, "__shared__": true,
	"__managed__": true, "constexpr": true, "consteval": true, "kernel": true, "constant": true, "device": true}

// head is what decl learns of a declaration before its body or its end.
type head struct {
	nameAt   int  // index of the declared name (-1 none)
	paren    int  // index of the parameter list's "(" (-1 none)
	eq       bool // an initializer "=" at depth 0
	classKey bool // struct/class/union/enum at depth 0
	enum     bool
	scoped   bool // enum class / enum struct
	typedef  bool
	// using: index of the declaration's own `using` (-1 none); a class
	// body's member `using index_t = …;` is not the declaration's
	using int
}

// decl reads one declaration starting at i and returns the index after it.
func (s *scanner) decl(i int, scope string, out *[]Decl) int {
	t := s.toks
	start := i
	d := Decl{Line: t[i].line, Start: t[i].start, Scope: scope}
	first := t[i].text
	switch {
	case first == "namespace" || first == "inline" && i+1 < len(t) && t[i+1].text == "namespace":
		return s.namespace(i, scope, out)
	case first == "extern" && i+2 < len(t) && t[i+1].kind == Literal && t[i+2].text == "{":
		d.Kind = Linkage
		end := s.scope(i+3, scope, out)
		return s.finish(d, start, end, out)
	case first == "template" && i+1 < len(t) && t[i+1].text != "<",
		first == "extern" && i+1 < len(t) && t[i+1].text == "template": // explicit instantiation
		return s.instantiation(d, start, out)
	case t[i].kind == Ident && i+2 < len(t) && t[i+1].text == "(" && !specCalls[first] && !deviceWords[first] &&
		t[i+2].text != "*" && t[i+2].text != "&":
		// a macro invocation (or static_assert): NAME(…) with its ";" or body
		d.Kind = Other
		j := s.skip(i+1, "(", ")")
		body := -1
		if open := s.braces[first]; open > 0 && j < len(t) && t[j].text != "{" {
			// the macro opens an initializer (or a body) another macro closes:
			// one declaration up to there, read as the opening macro expands
			j = s.macroBraces(j, open)
		} else if j < len(t) && t[j].text == "{" {
			body = j
			j = s.skip(j, "{", "}")
		}
		d.hostMacro = s.hostMacro(first, i+1, body, j, *out)
		if j < len(t) && t[j].text == ";" {
			j++
		}
		return s.finish(d, start, j, out)
	}
	if first == "template" {
		i = s.skipAngles(i + 1)
	}
	h := head{nameAt: -1, paren: -1, using: -1}
	var words []string // specifiers and types before the name, macros expanded
	for ; i < len(t); i++ {
		x := t[i].text
		switch {
		case x == ";":
			s.classify(&d, h, words, start, i)
			return s.finish(d, start, i+1, out)
		case x == "}": // the enclosing scope ends: a declaration without ";"
			s.classify(&d, h, words, start, i)
			return s.finish(d, start, i, out)
		case x == "{":
			if h.paren >= 0 && !h.eq && !h.classKey {
				d.Definition = true
				s.classify(&d, h, words, start, i)
				return s.finish(d, start, s.skip(i, "{", "}"), out)
			}
			if h.classKey && !h.eq && h.paren < 0 {
				if h.enum && !h.scoped {
					d.Names = append(d.Names, s.enumerators(i)...)
				} else if !h.enum {
					d.hostMembers = append(d.hostMembers, s.hostMembers(i)...)
				}
				i = s.skip(i, "{", "}") - 1
				h.nameAt = -1 // declarators may follow: struct {…} a, b;
				continue
			}
			i = s.skip(i, "{", "}") - 1 // an initializer
		case x == "(" || x == "[":
			if x == "(" && h.paren < 0 && !h.eq && i > start && !specCalls[t[i-1].text] {
				h.paren = i
				h.nameAt = s.nameBefore(i, start)
			}
			i = s.skip(i, x, map[string]string{"(": ")", "[": "]"}[x]) - 1
		case x == "[[":
			i = s.skip(i, "[[", "]]") - 1
		case x == "=":
			h.eq = true
		case x == ",":
			if h.paren < 0 && h.nameAt >= 0 {
				d.Names = append(d.Names, t[h.nameAt].text)
				h.nameAt = -1
			}
			h.eq = false
		case x == "<" && h.nameAt >= 0 && h.nameAt == i-1 && h.paren < 0 && !h.eq:
			i = s.skipAngles(i) - 1 // template arguments of the declared name: foo<T>(…)
		case t[i].kind == Ident && !h.eq:
			s.word(&h, &words, i, x)
		}
	}
	s.classify(&d, h, words, start, len(t))
	return s.finish(d, start, len(t), out)
}

// instantiation reads an explicit instantiation (declaration) starting at
// toks[start]: `template R f<A>(…);`, `extern template R f<A>(…);` are
// Instantiations of f (Device when they say __global__/__device__, directly
// or through a macro); `template struct S<A>;` is Other.
func (s *scanner) instantiation(d Decl, start int, out *[]Decl) int {
	t := s.toks
	end := s.toEnd(start)
	d.Kind = Other
	device := false
	for k := start; k < end; k++ {
		x := t[k].text
		switch {
		case x == "struct" || x == "class" || x == "union":
			return s.finish(d, start, end, out)
		case x == "<":
			k = s.skipAngles(k) - 1
		case x == "[[":
			k = s.skip(k, "[[", "]]") - 1
		case x == "(" && k > start && specCalls[t[k-1].text]:
			k = s.skip(k, "(", ")") - 1
		case x == "(":
			if name := s.nameBefore(k, start); name >= 0 {
				d.Kind, d.Template, d.Device = Instantiation, t[name].text, device
			}
			return s.finish(d, start, end, out)
		case t[k].kind == Ident:
			for _, w := range s.expand(x) {
				device = device || deviceWords[w]
			}
		}
	}
	return s.finish(d, start, end, out)
}

// word notes one identifier of a declaration's head.
func (s *scanner) word(h *head, words *[]string, i int, x string) {
	switch x {
	case "struct", "class", "union":
		if h.paren < 0 {
			h.classKey = true
			if h.enum {
				h.scoped = true
			}
		}
	case "enum":
		h.classKey, h.enum = true, true
	case "typedef":
		h.typedef = true
	case "using":
		if h.using < 0 && h.paren < 0 {
			h.using = i
		}
	}
	if h.paren < 0 { // the last identifier so far is the name; the ones before it are specifiers and types
		if h.nameAt >= 0 {
			*words = append(*words, s.expand(s.toks[h.nameAt].text)...)
		}
		h.nameAt = i
	}
}

// expand lists a word and the identifiers of the macros it expands to,
// each macro expanded once (a bounded walk: macros may refer to each other).
func (s *scanner) expand(w string) []string {
	out := []string{w}
	seen := map[string]bool{w: true}
	for k := 0; k < len(out) && len(out) < 256; k++ {
		for _, b := range s.macros[out[k]] {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return out
}

// nameBefore finds the declared name before the "(" at i: the identifier
// right before it, skipping template arguments (f<T>(…)), or the one
// inside a parenthesised declarator ((*fp)(…)); -1 when none.
func (s *scanner) nameBefore(i, start int) int {
	t := s.toks
	if i+2 < len(t) && (t[i+1].text == "*" || t[i+1].text == "&") && t[i+2].kind == Ident {
		return i + 2
	}
	k := i - 1
	if k >= start && t[k].text == ">" {
		depth := 0
		for ; k >= start; k-- {
			if t[k].text == ">" {
				depth++
			} else if t[k].text == "<" {
				if depth--; depth == 0 {
					k--
					break
				}
			}
		}
	}
	if k >= start && t[k].kind == Ident {
		return k
	}
	return -1
}

// classify fills in the kind, names and device-ness of the declaration
// whose head is toks[start:end].
func (s *scanner) classify(d *Decl, h head, words []string, start, end int) {
	t := s.toks
	has := func(w string) bool {
		for _, x := range words {
			if x == w {
				return true
			}
		}
		return false
	}
	dev := false
	for _, w := range words {
		dev = dev || deviceWords[w]
	}
	qualified := h.nameAt > start && t[h.nameAt-1].text == "::"
	switch {
	case h.typedef || h.using >= 0:
		d.Kind = Alias
		if u := h.using; !h.typedef && u >= 0 {
			k := u + 1
			for k+2 < end && t[k+1].text == "::" {
				k += 2 // using std::max;
			}
			if k < end && t[k].kind == Ident && t[k].text != "typename" && t[k].text != "namespace" {
				d.Names = append(d.Names, t[k].text)
			}
			return
		}
	case h.classKey && h.paren < 0 && !h.enum && s.braceEnd(start, end) < 0 && s.elaboratedVariable(h, start, end):
		// `struct timeval timerStart;`: a variable of a class type named
		// with its key, no class body; host code unless a device word says
		d.Kind = Variable
		d.Device = dev || has("const")
		kw := s.classNameAt(start, end)
		d.Names = slices.DeleteFunc(d.Names, func(n string) bool { return n == t[kw].text })
		if h.nameAt != kw && !slices.Contains(d.Names, t[h.nameAt].text) {
			d.Names = append(d.Names, t[h.nameAt].text)
		}
		return
	case h.classKey && h.paren < 0:
		d.Kind = Type
		if kw := s.classNameAt(start, end); kw >= 0 {
			d.Names = append(d.Names, t[kw].text)
		}
		if h.nameAt >= 0 && (len(d.Names) == 0 || t[h.nameAt].text != d.Names[len(d.Names)-1]) && h.nameAt > s.braceEnd(start, end) {
			d.Names = append(d.Names, t[h.nameAt].text) // struct {…} name;
		}
		return
	case h.paren >= 0 && !s.declaratorInParens(h):
		d.Kind = Function
		d.Device = dev
	default:
		d.Kind = Variable
		d.Device = dev || has("const")
	}
	if h.nameAt >= 0 && !qualified {
		d.Names = append(d.Names, t[h.nameAt].text)
	}
}

// elaboratedVariable says whether a class-key head without a body
// declares a variable (`struct timeval t;`, `union Bits a, b;`), not only
// names the class (`struct Later;`): a declarator follows the class name.
func (s *scanner) elaboratedVariable(h head, start, end int) bool {
	kw := s.classNameAt(start, end)
	return kw >= 0 && h.nameAt > kw
}

// declaratorInParens: (*fp)(…) declares a variable, not a function.
func (s *scanner) declaratorInParens(h head) bool {
	return h.nameAt == h.paren+2 && (s.toks[h.paren+1].text == "*" || s.toks[h.paren+1].text == "&")
}

// classNameAt finds the name after struct/class/union/enum in a head
// (skipping attributes and __align__(n)); -1 for an anonymous one.
func (s *scanner) classNameAt(start, end int) int {
	t := s.toks
	for k := start; k < end; k++ {
		switch t[k].text {
		case "struct", "class", "union", "enum":
			for j := k + 1; j < end; j++ {
				switch {
				case t[j].text == "class" || t[j].text == "struct" || t[j].text == "[[":
					if t[j].text == "[[" {
						j = s.skip(j, "[[", "]]") - 1
					}
				case specCalls[t[j].text] && j+1 < end && t[j+1].text == "(":
					j = s.skip(j+1, "(", ")") - 1
				case t[j].kind == Ident:
					return j
				default:
					return -1
				}
			}
			return -1
		case "{", "(":
			return -1
		}
	}
	return -1
}

// braceEnd is the index of the last "}" in toks[start:end], -1 if none.
func (s *scanner) braceEnd(start, end int) int {
	for k := end - 1; k >= start; k-- {
		if s.toks[k].text == "}" {
			return k
		}
	}
	return -1
}

// enumerators lists the names declared in the enum body at toks[open].
func (s *scanner) enumerators(open int) []string {
	t := s.toks
	var out []string
	expect := true
	depth := 0
	for k := open + 1; k < len(t); k++ {
		switch t[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]":
			depth--
		case "}":
			if depth == 0 {
				return out
			}
			depth--
		case ",":
			if depth == 0 {
				expect = true
				continue
			}
		}
		if expect && depth == 0 && t[k].kind == Ident {
			out = append(out, t[k].text)
		}
		expect = false
	}
	return out
}

// namespace reads `namespace a::b { … }` or `namespace x = y;`.
func (s *scanner) namespace(i int, scope string, out *[]Decl) int {
	t := s.toks
	d := Decl{Kind: Namespace, Line: t[i].line, Start: t[i].start, Scope: scope, Device: true}
	j := i + 1
	if t[i].text == "inline" {
		j++
	}
	var parts []string
	for ; j < len(t) && t[j].text != "{" && t[j].text != ";" && t[j].text != "="; j++ {
		if t[j].kind == Ident && t[j].text != "inline" {
			parts = append(parts, t[j].text)
		}
	}
	if j < len(t) && t[j].text == "=" { // namespace cg = cooperative_groups;
		d.Kind = Alias
		d.Names = parts
		return s.finish(d, i, s.toEnd(j), out)
	}
	if len(parts) > 0 {
		d.Names = parts[:1]
	}
	if j >= len(t) || t[j].text != "{" {
		return s.finish(d, i, min(j+1, len(t)), out)
	}
	inner := scope
	for _, p := range parts {
		inner = strings.TrimPrefix(inner+"::"+p, "::")
	}
	*out = append(*out, Decl{}) // the namespace comes before its members
	at := len(*out) - 1
	end := s.scope(j+1, inner, out)
	d.End, d.EndLine = t[max(end-1, i)].end, t[max(end-1, i)].line
	(*out)[at] = d
	return end
}

// finish records d, which began at toks[first] and ends before
// toks[end], and returns where the next declaration starts (always after
// first, so that every input is read to its end).
func (s *scanner) finish(d Decl, first, end int, out *[]Decl) int {
	end = min(max(end, first+1), len(s.toks))
	last := s.toks[end-1]
	d.End, d.EndLine = max(last.end, d.Start), max(last.line, d.Line)
	*out = append(*out, d)
	return end
}

// toEnd returns the index after the ";" ending the declaration at i.
func (s *scanner) toEnd(i int) int {
	for ; i < len(s.toks); i++ {
		switch s.toks[i].text {
		case ";":
			return i + 1
		case "(", "{", "[":
			i = s.skip(i, s.toks[i].text, map[string]string{"(": ")", "{": "}", "[": "]"}[s.toks[i].text]) - 1
		case "}":
			return i
		}
	}
	return i
}

// skip returns the index after the bracket closing the one at toks[i].
func (s *scanner) skip(i int, open, close string) int {
	depth := 0
	for ; i < len(s.toks); i++ {
		switch s.toks[i].text {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// skipAngles returns the index after the ">" closing the "<" at toks[i]
// (a template parameter or argument list; parentheses may hold ">").
func (s *scanner) skipAngles(i int) int {
	if i >= len(s.toks) || s.toks[i].text != "<" {
		return i
	}
	depth := 0
	for ; i < len(s.toks); i++ {
		switch s.toks[i].text {
		case "<":
			depth++
		case ">":
			if depth--; depth == 0 {
				return i + 1
			}
		case "(":
			i = s.skip(i, "(", ")") - 1
		case "{", "}", ";":
			return i
		}
	}
	return i
}
