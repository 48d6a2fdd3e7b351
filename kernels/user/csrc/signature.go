// Package csrc reads C, C++, CUDA and Metal Shading Language source just
// enough for mltop: a tokenizer and the kernel entry points with their
// parameters. It is not a C++ parser.
package csrc

import (
	"fmt"
	"strings"
)

// Param is one parameter of a kernel entry point as written in the source.
type Param struct {
	Name    string // "X" (may be empty for an unnamed parameter)
	Type    string // the type as written, qualifiers dropped: "float*", "int", "constant Params&"
	Pointer bool   // a pointer or a device/constant reference: a buffer
	Const   bool   // const-qualified anywhere (an input)
	// ReadOnly: what a pointer or reference points to cannot be written
	// through it: const before the * (`const float*`, `device const T*`) or
	// Metal's constant address space. `float* const p` is writable.
	ReadOnly bool
	// Pointee is what a pointer or reference points to, qualifiers and
	// address space dropped: "float", "T", "float4", "unsigned int".
	Pointee string
	Scalar  string // for by-value scalars: "int", "unsigned", "float", … ; "" otherwise
	Attr    string // Metal attribute text ("buffer(0)", "thread_position_in_grid"), "" if none
	// Declared is the type as written, const and address space kept,
	// restrict dropped: "const float*", "device const T*", "float* const".
	Declared string
	// Extent is the length an array declarator gives a parameter, which C
	// and Metal make a pointer (`constant const int64_t strides[2]` is
	// `constant const int64_t* strides`): "2"; "" for `x[]` and others.
	// For `int m[2][3]` it is the first, "2".
	Extent string
	// Extents are every extent of an array declarator as written, outermost
	// first (`int m[2][3]`: "2", "3"; `x[]`: ""); nil for a non-array.
	Extents []string
}

// Signature is a kernel entry point found in a source file.
type Signature struct {
	Entry     string   // the function's own name: "kern"
	Namespace string   // the enclosing namespaces, "a::b"; "" at file scope
	Template  []string // the names of its template parameters, if it is a template
	// TemplateTypes are the kinds of those parameters as written, one per
	// name: "typename" (or "class"), "int", "ReductionType", "ns::Mode";
	// "" where none was read (a template template parameter).
	TemplateTypes []string
	Params        []Param
	Line          int // line of the entry's name (1-based)
	// Specialization: an explicit specialization or instantiation of a
	// template kernel (`template <> __global__ void k<half>(…)`,
	// `template __global__ void k<float>(…);`). It is the same template,
	// not an overload: FindEntries drops it when the primary template is
	// in the same text, and NVRTC picks it from the name expression.
	Specialization bool
	defined        bool // a definition (with a body), not a declaration
}

// Bindable are the parameters the caller binds (buffers and scalars), in
// order. Metal's built-in attributes (thread ids etc.) are not parameters
// the caller binds.
func (s Signature) Bindable() []Param {
	var out []Param
	for _, p := range s.Params {
		if p.Attr != "" && !strings.HasPrefix(p.Attr, "buffer(") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Qualified is the entry's name with its namespaces: "a::b::kern".
func (s Signature) Qualified() string {
	if s.Namespace == "" {
		return s.Entry
	}
	return s.Namespace + "::" + s.Entry
}

// IsTemplateParam says whether name is one of the entry's template
// parameters.
func (s Signature) IsTemplateParam(name string) bool {
	for _, t := range s.Template {
		if t == name {
			return true
		}
	}
	return false
}

// attributeWords take a parenthesised argument list and are skipped
// between a kernel's specifiers and its name.
var attributeWords = map[string]bool{"__launch_bounds__": true, "__attribute__": true, "__declspec": true, "alignas": true, "__maxnreg__": true, "__cluster_dims__": true}

// FindEntries lists the kernel entry points in src: CUDA `__global__`
// functions (templates, in namespaces, with or without extern "C",
// __launch_bounds__ and attributes) and Metal `kernel` / `[[kernel]]`
// functions.
func FindEntries(src string) []Signature {
	toks := Tokenize(src)
	var byLine map[lineToken]string // the namespaces as the preprocessor's branches leave them (namespacesByLine)
	var out []Signature
	var scopes []string // one per open brace: the namespace's name, or "" for any other brace
	var template, templateTypes []string
	templateOpen := false // a template <…> was read and its declaration has not ended
	specialized := false  // a `template <>` or `template` without <…> was read and its declaration has not ended
	for i := 0; i < len(toks); i++ {
		t := toks[i].Text
		switch t {
		case "namespace":
			if i+2 < len(toks) && toks[i+2].Text == "{" && toks[i+1].Kind == Ident {
				scopes = append(scopes, toks[i+1].Text)
				i += 2
				continue
			}
		case "{":
			scopes = append(scopes, "")
			templateOpen, specialized = false, false
			continue
		case "}":
			if len(scopes) > 0 {
				scopes = scopes[:len(scopes)-1]
			}
			continue
		case ";":
			templateOpen, specialized = false, false
			continue
		case "template":
			if i+1 < len(toks) && toks[i+1].Text == "<" {
				var end int
				template, templateTypes, end = templateParams(toks, i+1)
				templateOpen = true
				specialized = len(template) == 0 // template <>: an explicit specialization
				i = end
				continue
			}
			specialized = true // template void k<float>(…);: an explicit instantiation
			continue
		}
		// Metal's kernel keyword is followed by the kernel's return type,
		// void: in CUDA `kernel` is a common variable name (exllamav2's
		// `fp_rms_norm_kernel kernel = pick_…(…); kernel<<<…>>>(…)`)
		isKernel := t == "__global__" || t == "kernel" && i+1 < len(toks) && toks[i+1].Text == "void"
		if t == "[[" {
			// [[kernel]], or kernel among other attributes, as MLX writes
			// [[kernel, max_total_threads_per_threadgroup(BM * BN * 32)]]:
			// the group is read whole, so that the attribute's '(' is not
			// taken for the parameter list.
			end := skipGroup(toks, i, "[[", "]]")
			if end < 0 {
				continue
			}
			isKernel = attributeListHas(toks[i+1:end], "kernel")
			i = end
		}
		if !isKernel {
			continue
		}
		j, at, ok := entryName(toks, i+1)
		if !ok {
			continue
		}
		name := toks[at]
		// `template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;`
		// instantiates k; it is not a kernel named decltype (metal.HostNames reads it).
		if name.Text == "decltype" {
			continue
		}
		params, end := parseParams(toks, j)
		if end < 0 {
			continue
		}
		implicitBufferIndices(params)
		ns := namespaceOf(scopes)
		if byLine == nil {
			byLine = namespacesByLine(src)
		}
		nth := 0 // name's occurrence among its line's tokens of that text
		for k := at - 1; k >= 0 && toks[k].Line == name.Line; k-- {
			if toks[k].Text == name.Text {
				nth++
			}
		}
		if pruned, ok := byLine[lineToken{name.Line, name.Text, nth}]; ok {
			ns = pruned
		}
		sig := Signature{Entry: name.Text, Namespace: joinScope(ns, writtenQualifier(toks, at)), Params: params, Line: name.Line}
		sig.Specialization = specialized || at != j-1
		sig.defined = hasBody(toks, end)
		if templateOpen && !sig.Specialization {
			sig.Template, sig.TemplateTypes = template, templateTypes
		}
		out = append(out, sig)
		i = end
	}
	return dropRedeclarations(dropSpecializations(out))
}

// attributeListHas says whether the attributes between [[ and ]] include
// name as one of its comma-separated attributes (`kernel`, not a word
// inside another attribute's arguments).
func attributeListHas(toks []Token, name string) bool {
	depth := 0
	for k, t := range toks {
		switch t.Text {
		case "(":
			depth++
		case ")":
			depth--
		case name:
			if depth == 0 && (k == 0 || toks[k-1].Text == ",") {
				return true
			}
		}
	}
	return false
}

// entryName finds the '(' that opens a kernel's parameter list, from the
// token after its `__global__`/`kernel`, and the index of the name: the
// token before the '(', or before the template arguments of an explicit
// specialization (`k<half>(`). Attributes (__launch_bounds__(…),
// __attribute__((…)), [[…]]) are skipped; a ';', '{' or '}' first means
// this was not a declaration.
func entryName(toks []Token, j int) (open, name int, ok bool) {
	depth := 0
	for ; j < len(toks); j++ {
		switch t := toks[j].Text; {
		case attributeWords[t] && j+1 < len(toks) && toks[j+1].Text == "(":
			j = skipGroup(toks, j+1, "(", ")")
		case t == "[[":
			j = skipGroup(toks, j, "[[", "]]")
		case t == "<":
			depth++
		case t == ">":
			depth--
		case t == ";" || t == "{" || t == "}":
			return 0, 0, false
		case t == "(" && depth <= 0:
			at := j - 1
			if at > 0 && toks[at].Text == ">" {
				at = templateArgsStart(toks, at) - 1
			}
			if at < 0 || toks[at].Kind != Ident {
				return 0, 0, false
			}
			return j, at, true
		case t == "(":
			j = skipGroup(toks, j, "(", ")")
		}
	}
	return 0, 0, false
}

// Matching is the index of the bracket that closes toks[open] — (, [, {,
// [[ or < — counting nested pairs; len(toks)-1 when it never closes.
func Matching(toks []Token, open int) int {
	pairs := map[string]string{"(": ")", "[": "]", "{": "}", "[[": "]]", "<": ">"}
	return skipGroup(toks, open, toks[open].Text, pairs[toks[open].Text])
}

// skipGroup returns the index of the token closing the group opened at
// toks[open] (len(toks)-1 when it never closes).
func skipGroup(toks []Token, open int, left, right string) int {
	d := 0
	for k := open; k < len(toks); k++ {
		switch t := toks[k].Text; {
		case t == left:
			d++
		case t == right:
			if d--; d == 0 {
				return k
			}
		case left == "[" && t == "]]": // x[i[j]]: the tokenizer reads ]] as one token
			if d -= 2; d <= 0 {
				return k
			}
		}
	}
	return len(toks) - 1
}

// templateParams reads `<typename T, int N = 4, class U>` at toks[open]
// and returns the parameters' names, their kinds as written ("typename",
// "int", "class"; "" for a template template parameter) and the index of
// the closing '>'.
func templateParams(toks []Token, open int) ([]string, []string, int) {
	var names, kinds []string
	depth := 0
	last := ""
	var words []string // the parameter's words at depth 1, up to its default
	inDefault, nested := false, false
	add := func() {
		if last != "" {
			names = append(names, last)
			kind := ""
			if !nested && len(words) > 1 && words[len(words)-1] == last {
				kind = joinWords(words[:len(words)-1])
			}
			kinds = append(kinds, kind)
		}
		last, words, inDefault, nested = "", nil, false, false
	}
	for k := open; k < len(toks); k++ {
		t := toks[k]
		switch t.Text {
		case "<", "(":
			depth++
			if depth > 1 && !inDefault {
				nested = true // template <typename> class C: no kind read
			}
			continue
		case ">", ")":
			depth--
			if depth == 0 {
				add()
				return names, kinds, k
			}
			continue
		case ",":
			if depth == 1 {
				add()
			}
			continue
		case "=":
			if depth == 1 {
				inDefault = true
			}
			continue
		case ";", "{", "}":
			return names, kinds, k - 1
		}
		if depth == 1 && !inDefault {
			if t.Text == "::" || t.Kind == Ident {
				words = append(words, t.Text)
			}
			if t.Kind == Ident && t.Text != "typename" && t.Text != "class" {
				last = t.Text
			}
		}
	}
	return names, kinds, len(toks) - 1
}

// joinWords writes a type's words as C++ does: `unsigned int`,
// `ns::Mode`.
func joinWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && w != "::" && words[i-1] != "::" {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// lineToken is the nth token of text on a line (0: its first).
type lineToken struct {
	line int
	text string
	nth  int
}

// namespacesByLine is the namespace around each token of code, counting
// the braces of each #if group as the scan does (prune): a header whose
// #if and #else branches each open `namespace kaldi {`, closed once after
// #endif (Kaldi's base/timer.h), leaves no namespace open for the code
// after it, where counting both branches' braces would. Tokens of a branch
// prune drops are absent.
func namespacesByLine(src string) map[lineToken]string {
	l := lex(src)
	out := map[lineToken]string{}
	seen := map[[2]any]int{}
	var scopes []string
	toks := prune(markDead(l.toks, l.dirs, nil), l.dirs)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		k := [2]any{t.line, t.text}
		out[lineToken{t.line, t.text, seen[k]}] = namespaceOf(scopes)
		seen[k]++
		switch {
		case t.text == "namespace" && i+2 < len(toks) && toks[i+2].text == "{" && toks[i+1].kind == Ident:
			scopes = append(scopes, toks[i+1].text)
			k1, k2 := [2]any{toks[i+1].line, toks[i+1].text}, [2]any{toks[i+2].line, "{"}
			out[lineToken{toks[i+1].line, toks[i+1].text, seen[k1]}] = namespaceOf(scopes[:len(scopes)-1])
			seen[k1]++
			seen[k2]++
			i += 2
		case t.text == "{":
			scopes = append(scopes, "")
		case t.text == "}" && len(scopes) > 0:
			scopes = scopes[:len(scopes)-1]
		}
	}
	return out
}

func namespaceOf(scopes []string) string {
	var ns []string
	for _, s := range scopes {
		if s != "" {
			ns = append(ns, s)
		}
	}
	return strings.Join(ns, "::")
}

// FindEntry finds the first kernel that name designates in src: its own
// name, or a qualified name ("ns::kern") whose qualifier ends its
// namespaces. When none does, it lists the kernels' names.
func FindEntry(src, name string) (Signature, []string, bool) {
	sigs, names := Overloads(src, name)
	if len(sigs) == 0 {
		return Signature{}, names, false
	}
	return sigs[0], nil, true
}

// Overloads are the kernels that name designates in src (see FindEntry),
// in source order; when there are none, the names of all the kernels.
func Overloads(src, name string) ([]Signature, []string) {
	var out []Signature
	var names []string
	for _, s := range FindEntries(src) {
		if designates(name, s) {
			out = append(out, s)
		}
		if !slicesContains(names, s.Qualified()) {
			names = append(names, s.Qualified())
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	return nil, names
}

func designates(name string, s Signature) bool {
	name = strings.TrimPrefix(strings.ReplaceAll(name, " ", ""), "::")
	qual, base := "", name
	if k := strings.LastIndex(name, "::"); k >= 0 {
		qual, base = name[:k], name[k+2:]
	}
	if base != s.Entry {
		return false
	}
	return qual == "" || s.Namespace == qual || strings.HasSuffix(s.Namespace, "::"+qual)
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Pick chooses among a name's overloads the one fits accepts (the caller
// says which parameter lists suit its arguments). One overload is returned
// as it is, so that the caller can explain why its arguments do not fit.
func Pick(name string, sigs []Signature, fits func(Signature) bool) (Signature, error) {
	if len(sigs) == 1 {
		return sigs[0], nil
	}
	var ok []Signature
	for _, s := range sigs {
		if fits(s) {
			ok = append(ok, s)
		}
	}
	if len(ok) == 1 {
		return ok[0], nil
	}
	var all []string
	for _, s := range sigs {
		all = append(all, fmt.Sprintf("line %d: %s", s.Line, s))
	}
	if len(ok) == 0 {
		return Signature{}, fmt.Errorf("%s has %d overloads and none takes these arguments (%s): list the arguments of one of them", name, len(sigs), strings.Join(all, "; "))
	}
	return Signature{}, &AmbiguousError{Name: name, Fitting: ok, all: all}
}

// AmbiguousError is Pick's answer when several overloads take the
// arguments: the caller may still choose among Fitting by their types.
type AmbiguousError struct {
	Name    string
	Fitting []Signature // the overloads that take as many arguments, in source order
	all     []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is ambiguous: %d overloads take as many arguments (%s): rename one, or qualify the name with its namespace", e.Name, len(e.Fitting), strings.Join(e.all, "; "))
}

// FunctionPointerType is the entry's type as a pointer to function,
// `void(*)(const float*, int)`, which casts its name to this overload in
// a name expression; ok is false for a template (whose parameter types
// name its template parameters) and for a parameter whose declared type
// the cast would not keep (a multi-dimensional array).
func (s Signature) FunctionPointerType() (string, bool) {
	if len(s.Template) > 0 {
		return "", false
	}
	types := make([]string, len(s.Params))
	for i, p := range s.Params {
		if len(p.Extents) > 1 || p.Attr != "" {
			return "", false
		}
		types[i] = p.Declared
		if types[i] == "" {
			types[i] = p.Type
		}
	}
	return "void(*)(" + strings.Join(types, ", ") + ")", true
}

var qualifiers = map[string]bool{"const": true, "volatile": true, "__restrict__": true, "__restrict": true, "restrict": true,
	"device": true, "constant": true, "threadgroup": true, "thread": true, "struct": true}

// typeWords are builtin type keywords: never a parameter's name.
var typeWords = map[string]bool{"int": true, "long": true, "short": true, "char": true, "unsigned": true, "signed": true,
	"float": true, "double": true, "bool": true, "void": true}

// parseParams reads the parameter list starting at toks[open] == "(".
func parseParams(toks []Token, open int) ([]Param, int) {
	depth := 0
	var cur []string
	var params []Param
	flush := func() {
		if len(cur) == 0 || len(cur) == 1 && cur[0] == "void" {
			cur = nil
			return
		}
		params = append(params, makeParam(cur))
		cur = nil
	}
	for k := open; k < len(toks); k++ {
		t := toks[k].Text
		switch t {
		case "(", "<", "[[", "[":
			depth++
			if depth == 1 && t == "(" {
				continue
			}
		case ")", ">", "]]", "]":
			depth--
			if depth == 0 && t == ")" {
				flush()
				return params, k
			}
		case ",":
			if depth == 1 {
				flush()
				continue
			}
		case "{", ";":
			return nil, -1
		}
		cur = append(cur, t)
	}
	return nil, -1
}

// implicitBufferIndices gives each Metal buffer parameter written without
// [[buffer(n)]] (Apple's add_arrays: `device const float* inA`) the index
// Apple's compiler assigns it: the first index no other parameter takes,
// in the order of the parameters.
func implicitBufferIndices(params []Param) {
	taken := map[int]bool{}
	for _, p := range params {
		var k int
		if _, err := fmt.Sscanf(p.Attr, "buffer(%d)", &k); err == nil {
			taken[k] = true
		}
	}
	next := 0
	for i := range params {
		p := &params[i]
		if p.Attr != "" || !p.Pointer || !metalBufferSpace(p.Type) {
			continue
		}
		for taken[next] {
			next++
		}
		p.Attr = fmt.Sprintf("buffer(%d)", next)
		taken[next] = true
	}
}

// metalBufferSpace says whether a parameter type is in Metal's device or
// constant address space (CUDA types never name these words).
func metalBufferSpace(typ string) bool {
	for _, w := range strings.FieldsFunc(typ, func(r rune) bool { return r == ' ' || r == '*' || r == '&' }) {
		if w == "device" || w == "constant" {
			return true
		}
	}
	return false
}

func makeParam(ts []string) Param {
	var p Param
	// Metal attribute [[...]]
	var words []string
	for k := 0; k < len(ts); k++ {
		if ts[k] == "[[" {
			var attr []string
			k++
			for ; k < len(ts) && ts[k] != "]]"; k++ {
				attr = append(attr, ts[k])
			}
			p.Attr = strings.Join(attr, "")
			continue
		}
		words = append(words, ts[k])
	}
	// default value: drop "= …"
	for k, w := range words {
		if w == "=" {
			words = words[:k]
			break
		}
	}
	// an array declarator (`int64_t strides[2]`, `float x[]`, `int m[2][3]`)
	// is a pointer
	array := false
	for k, w := range words {
		if w == "[" {
			p.Extents = arrayExtents(words[k:])
			p.Extent = p.Extents[0]
			words, array = words[:k], true
			break
		}
	}
	// the name is the last identifier if there is a type before it
	if n := len(words); n >= 2 && isIdentByte(words[n-1][0]) && !qualifiers[words[n-1]] && !typeWords[words[n-1]] {
		p.Name = words[n-1]
		words = words[:n-1]
	}
	if array {
		words = append(words, "*")
	}
	var declared []string
	for _, w := range words {
		if w != "__restrict__" && w != "__restrict" && w != "restrict" { // noise in a listing
			declared = append(declared, w)
		}
	}
	p.Declared = tidyType(strings.Join(declared, " "))
	var typ, pointee []string
	for _, w := range words {
		switch w {
		case "const":
			p.Const = true
			if !p.Pointer {
				p.ReadOnly = true // const before the first * or &
			}
			continue
		case "volatile", "__restrict__", "__restrict", "restrict", "struct":
			continue
		case "constant":
			p.ReadOnly = true
			typ = append(typ, w)
			continue
		case "device", "threadgroup", "thread":
			typ = append(typ, w)
			continue
		case "*", "&":
			p.Pointer = true
		default:
			if !p.Pointer {
				pointee = append(pointee, w)
			}
		}
		typ = append(typ, w)
	}
	p.Type = tidyType(strings.Join(typ, " "))
	if p.Pointer {
		p.Pointee = tidyType(strings.Join(pointee, " "))
	} else {
		p.Scalar = p.Type
		p.ReadOnly = false
	}
	return p
}

func tidyType(t string) string {
	t = strings.ReplaceAll(strings.ReplaceAll(t, " *", "*"), " &", "&")
	t = strings.ReplaceAll(t, " :: ", "::")
	return strings.ReplaceAll(strings.ReplaceAll(t, "< ", "<"), " >", ">")
}

// IsIntScalar says whether a by-value parameter type is an integer.
func IsIntScalar(t string) bool {
	switch strings.TrimSpace(t) {
	case "int", "unsigned", "unsigned int", "int32_t", "uint32_t", "uint", "long", "long long", "int64_t", "size_t", "short", "uint64_t":
		return true
	}
	return false
}

func (s Signature) String() string {
	parts := make([]string, len(s.Params))
	for i, p := range s.Params {
		t := p.Declared
		if t == "" {
			t = p.Type
		}
		parts[i] = strings.TrimSpace(t + " " + p.Name)
	}
	return fmt.Sprintf("%s(%s)", s.Entry, strings.Join(parts, ", "))
}

// Typedefs are the type aliases src declares (`typedef float floatX;`,
// `using idx_t = long long;`) by name, the aliased type's words joined by
// spaces. A name aliased to two different types (each branch of an #if)
// maps to "".
func Typedefs(src string) map[string]string {
	toks := Tokenize(src)
	out := map[string]string{}
	add := func(name string, words []string) {
		t := tidyType(strings.Join(words, " "))
		if prev, ok := out[name]; ok && prev != t {
			t = ""
		}
		out[name] = t
	}
	for i := 0; i < len(toks); i++ {
		switch toks[i].Text {
		case "typedef":
			var words []string
			j := i + 1
			for ; j < len(toks) && toks[j].Text != ";" && toks[j].Text != "{" && toks[j].Text != "("; j++ {
				words = append(words, toks[j].Text)
			}
			if j < len(toks) && toks[j].Text == ";" && len(words) >= 2 && toks[j-1].Kind == Ident {
				add(words[len(words)-1], words[:len(words)-1])
			}
			i = j
		case "using":
			if i+3 < len(toks) && toks[i+1].Kind == Ident && toks[i+2].Text == "=" {
				var words []string
				j := i + 3
				for ; j < len(toks) && toks[j].Text != ";" && toks[j].Text != "{"; j++ {
					words = append(words, toks[j].Text)
				}
				if j < len(toks) && toks[j].Text == ";" {
					add(toks[i+1].Text, words)
				}
				i = j
			}
		}
	}
	return out
}

// arrayExtents reads the bracket groups that open words (`[`, `2`, `]`,
// `[`, `N * 2`, `]`): each group's text, "" for `[]`.
func arrayExtents(words []string) []string {
	var out []string
	for k := 0; k < len(words) && words[k] == "["; {
		end := k + 1
		for end < len(words) && words[end] != "]" {
			end++
		}
		out = append(out, strings.Join(words[k+1:end], " "))
		k = end + 1
	}
	return out
}

// EntryFunction is the function a manifest's entry expression names,
// without namespace or template arguments: "kern" for `kern`,
// `ns::kern` and `ns::kern<T, BLOCK>`.
func EntryFunction(entry string) string {
	name, _, _ := strings.Cut(entry, "<")
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	return strings.TrimSpace(name)
}
