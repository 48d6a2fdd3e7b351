package user

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// ExtentResolver writes a shared array's extents in a manifest's terms,
// so that a suggested tgm: item loads as it is: `mltop new` writes its
// items with it and `mltop check` suggests them with it, alike. A
// manifest's expressions know only the manifest's names, so the source's
// integer macros and the declaring function's own integer constants
// (`constexpr int MAX_N = 8;`) become their values, the entry's template
// parameters become the dispatch's template arguments, and a name it
// cannot say that way is kept and reported by Unknown.
//
// A name is looked up in this order: Locals (the function's constants
// shadow the rest), TemplateArgs, Macros, Known, Others; an extent that
// is constant with the macros expanded is its value first, as the
// preprocessor expands a macro before anything else sees the name.
type ExtentResolver struct {
	Macros       map[string]string      // the source's object-like macros, name → replacement (csrc.ObjectMacros)
	Locals       map[string]string      // the declaring function's integer constants (LocalIntConsts)
	TemplateArgs map[string]string      // the entry's template parameters → the entry's template arguments
	Others       map[string]string      // integer constants the manifest does not see (namespace scope), after Known
	Known        func(name string) bool // names a manifest expression may use as they are (knobs, dims); nil knows none
	DType        string                 // the dtype's name: sizeof(DType) stays as written
	unknown      []string
}

// maxExtentDepth bounds how deep constants of constants are followed (a
// constant defined by itself stops there).
const maxExtentDepth = 8

// Resolve is text (an extent, or a constant's initializer) as a manifest
// expression: a number when it is constant. `{{NAME}}` placeholders of an
// mlx: body read as NAME.
func (r *ExtentResolver) Resolve(text string) string { return r.resolve(text, 0) }

// Unknown are the names Resolve met and could not say in the manifest's
// terms (a `sizeof(type)` of an unknown type among them), in the order met.
func (r *ExtentResolver) Unknown() []string { return r.unknown }

func (r *ExtentResolver) resolve(text string, depth int) string {
	text = PlaceholdersAsNames(text)
	if v, ok := csrc.IntConst(text, r.Macros); ok {
		return strconv.FormatInt(v, 10)
	}
	toks := csrc.Tokenize(text)
	var parts []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Kind == csrc.Number:
			if v, ok := csrc.IntConst(t.Text, nil); ok { // 32u → 32
				parts = append(parts, strconv.FormatInt(v, 10))
				continue
			}
			parts = append(parts, t.Text)
		case t.Kind != csrc.Ident:
			parts = append(parts, t.Text)
		case t.Text == "sizeof" && i+3 < len(toks) && toks[i+1].Text == "(" && toks[i+3].Text == ")":
			parts = append(parts, r.sizeofText(toks[i+2].Text))
			i += 3
		default:
			parts = append(parts, r.name(t.Text, depth))
		}
	}
	out := joinExprTokens(parts)
	if v, ok := csrc.IntConst(out, nil); ok {
		return strconv.FormatInt(v, 10)
	}
	return out
}

// name is one name of an extent in the manifest's terms.
func (r *ExtentResolver) name(n string, depth int) string {
	follow := depth < maxExtentDepth
	if init, ok := r.Locals[n]; ok && init != "" && follow {
		return Parenthesize(r.resolve(init, depth+1))
	}
	if arg, ok := r.TemplateArgs[n]; ok && follow {
		return Parenthesize(r.resolve(arg, depth+1))
	}
	if v, ok := csrc.IntConst(n, r.Macros); ok {
		return strconv.FormatInt(v, 10)
	}
	if r.Known != nil && r.Known(n) {
		return n
	}
	if init, ok := r.Others[n]; ok && init != "" && follow {
		return Parenthesize(r.resolve(init, depth+1))
	}
	r.addUnknown(n)
	return n
}

// sizeofText is sizeof(typ) as the manifest says it: the dtype's name
// stays, a C type is its bytes.
func (r *ExtentResolver) sizeofText(typ string) string {
	if typ == r.DType {
		return "sizeof(" + typ + ")"
	}
	if n, ok := ElemBytes(typ); ok {
		return strconv.Itoa(n)
	}
	r.addUnknown("sizeof(" + typ + ")")
	return "sizeof(" + typ + ")"
}

func (r *ExtentResolver) addUnknown(n string) {
	if !slices.Contains(r.unknown, n) {
		r.unknown = append(r.unknown, n)
	}
}

// Parenthesize wraps an expression of several tokens, which replaces a
// name inside another, in parentheses: `2 * WG` is `(2 * WG)`; a name, a
// number or an expression already wrapped (`(a + 1)`, not `(a) * (b)`)
// stays as it is.
func Parenthesize(e string) string {
	if len(csrc.Tokenize(e)) <= 1 || wrapped(e) {
		return e
	}
	return "(" + e + ")"
}

// wrapped says whether e is one parenthesized expression.
func wrapped(e string) bool {
	if !strings.HasPrefix(e, "(") {
		return false
	}
	depth := 0
	for i, c := range e {
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i == len(e)-1
			}
		}
	}
	return false
}

// joinExprTokens writes tokens as an expression: a space between two,
// none inside brackets, before a comma, around a member's dot or between
// a function's name and its arguments (`min(a, b.x + 1) * 4`).
func joinExprTokens(parts []string) string {
	var b strings.Builder
	for i, t := range parts {
		if i > 0 && !tight(parts[i-1], t) {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// tight says whether no space goes between the tokens prev and next.
func tight(prev, next string) bool {
	switch {
	case prev == "(" || prev == "[" || next == ")" || next == "]" || next == ",":
		return true
	case prev == "." || next == "." || prev == "->" || next == "->" || prev == "::" || next == "::":
		return true // a member or a qualified name: blockDim.x, ns::K
	case next == "(":
		return isIdent(prev) // a call: f(x)
	}
	return false
}

func isIdent(s string) bool {
	toks := csrc.Tokenize(s)
	return len(toks) == 1 && toks[0].Kind == csrc.Ident
}

// LocalIntConsts are the integer constants function bodies declare, name
// → initializer as a manifest expression writes it: `constexpr int MAX_N
// = 8;`, `const uint n{4};`, `static constexpr auto K = 2 * WG;`, and an
// mlx: body's `constexpr int MAX_N = {{MAX_N}};` (MAX_N → MAX_N). A name
// declared with two different initializers maps to "" (which one an array
// sees depends on its scope).
func LocalIntConsts(bodies ...string) map[string]string {
	out := map[string]string{}
	for _, body := range bodies {
		toks := csrc.Tokenize(PlaceholdersAsNames(body))
		for i := 0; i < len(toks); i++ {
			if toks[i].Text != "const" && toks[i].Text != "constexpr" || !statementStart(toks, i) {
				continue
			}
			name, init, end, ok := intDeclarator(toks, i)
			if !ok {
				continue
			}
			if was, seen := out[name]; seen && was != init {
				init = ""
			}
			out[name] = init
			i = end
		}
	}
	return out
}

// statementStart says whether toks[i] begins a declaration: only
// storage qualifiers stand between it and the previous statement.
func statementStart(toks []csrc.Token, i int) bool {
	for k := i - 1; k >= 0; k-- {
		switch toks[k].Text {
		case ";", "{", "}":
			return true
		case "static", "constant", "thread", "const", "constexpr":
			continue
		}
		return false
	}
	return true
}

// intDeclarator reads `const[expr] [static] int NAME = init` (or `{init}`)
// from toks[i]: the name, the initializer's text and the index of its
// last token. ok is false for a non-integer type or no initializer.
func intDeclarator(toks []csrc.Token, i int) (name, init string, end int, ok bool) {
	var typ []string
	k := i
	for ; k < len(toks) && toks[k].Kind == csrc.Ident; k++ {
		switch toks[k].Text {
		case "const", "constexpr", "static", "constant", "thread":
		default:
			typ = append(typ, toks[k].Text)
		}
	}
	if len(typ) < 2 || k >= len(toks) || (toks[k].Text != "=" && toks[k].Text != "{") {
		return "", "", 0, false
	}
	name, typ = typ[len(typ)-1], typ[:len(typ)-1]
	if !isIntConstType(strings.Join(typ, " ")) {
		return "", "", 0, false
	}
	open := toks[k].Text
	var parts []string
	depth := 0
	for k++; k < len(toks); k++ {
		t := toks[k].Text
		switch {
		case t == "(" || t == "[" || t == "{":
			depth++
		case (t == ")" || t == "]" || t == "}") && depth > 0:
			depth--
		case open == "{" && t == "}", open == "=" && depth == 0 && (t == ";" || t == ","):
			return name, joinExprTokens(parts), k, len(parts) > 0
		}
		parts = append(parts, t)
	}
	return "", "", 0, false
}

// isIntConstType says whether a local constant of type t is an integer.
func isIntConstType(t string) bool {
	switch t {
	case "auto", "ushort", "short", "unsigned short":
		return true
	}
	return csrc.IsIntScalar(t)
}
