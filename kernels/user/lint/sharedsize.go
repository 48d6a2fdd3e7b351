package lint

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// A shared array's suggested tgm: item must load as it is, and a
// manifest's expressions know only the manifest's names and the source's
// file-scope constants. sizeResolver rewrites an array's extents in those
// terms: the source's integer macros and the declaring function's own
// integer constants (`constexpr int MAX_N = 8;`, also one an mlx: body
// fills from a {{MAX_N}} placeholder) become their values or names the
// manifest knows; the entry's template parameters become the entry's
// template arguments. What it cannot say is reported, for a TODO.
type sizeResolver struct {
	f       *user.Family
	macros  map[string]string
	locals  map[string]string // the function's integer constants: name → initializer ("" when declared twice differently)
	tparams map[string]string // the entry's template parameters → the dispatch's template arguments
	others  map[string]string // the integer constants of the whole source (namespace scope, which the manifest does not see)
	unknown []string          // names it could not say in the manifest's terms
}

// resolve is text (an extent or an initializer) as a manifest expression:
// a number when it is constant.
func (s *sizeResolver) resolve(text string, depth int) string {
	text = user.PlaceholdersAsNames(text) // names the manifest declares (the loader checks)
	if v, ok := csrc.IntConst(text, s.macros); ok {
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
			parts = append(parts, s.sizeofText(toks[i+2].Text))
			i += 3
		default:
			parts = append(parts, s.name(t.Text, depth))
		}
	}
	out := strings.Join(parts, " ")
	if v, ok := csrc.IntConst(out, nil); ok {
		return strconv.FormatInt(v, 10)
	}
	return out
}

// name is one name of an extent in the manifest's terms. The function's
// own constants come first: they shadow everything else.
func (s *sizeResolver) name(n string, depth int) string {
	if init, ok := s.locals[n]; ok && init != "" && depth < 8 {
		return parenthesize(s.resolve(init, depth+1))
	}
	if arg, ok := s.tparams[n]; ok && depth < 8 {
		return parenthesize(s.resolve(arg, depth+1))
	}
	if v, ok := csrc.IntConst(n, s.macros); ok {
		return strconv.FormatInt(v, 10)
	}
	if s.f.KnowsName(n) {
		return n
	}
	if init, ok := s.others[n]; ok && init != "" && depth < 8 {
		return parenthesize(s.resolve(init, depth+1))
	}
	if !slices.Contains(s.unknown, n) {
		s.unknown = append(s.unknown, n)
	}
	return n
}

// sizeofText is sizeof(type) as the manifest says it: the dtype's name
// stays, a C type is its bytes.
func (s *sizeResolver) sizeofText(typ string) string {
	if typ == s.f.DTypeName() {
		return "sizeof(" + typ + ")"
	}
	if n, ok := user.ElemBytes(typ); ok {
		return strconv.Itoa(n)
	}
	s.unknown = append(s.unknown, "sizeof("+typ+")")
	return "sizeof(" + typ + ")"
}

// parenthesize wraps an expression of several tokens, which replaces a
// name inside another.
func parenthesize(e string) string {
	if len(csrc.Tokenize(e)) <= 1 {
		return e
	}
	return "(" + e + ")"
}

// localIntConsts are the integer constants function bodies declare, name
// → initializer as written: `constexpr int MAX_N = 8;`, `const uint n{4};`,
// `static constexpr auto K = 2 * WG;`. A name declared with two different
// initializers maps to "" (which one an array sees depends on its scope).
func localIntConsts(bodies []string) map[string]string {
	out := map[string]string{}
	for _, body := range bodies {
		toks := csrc.Tokenize(user.PlaceholdersAsNames(body))
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
	if t := strings.Join(typ, " "); !csrc.IsIntScalar(t) && t != "auto" && t != "ushort" && t != "short" && t != "unsigned short" {
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
			return name, strings.Join(parts, " "), k, len(parts) > 0
		}
		parts = append(parts, t)
	}
	return "", "", 0, false
}
