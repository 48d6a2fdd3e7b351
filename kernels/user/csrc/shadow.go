package csrc

import "slices"

// This file finds the identifiers of a function definition that cannot
// name a file-scope declaration: those a parameter, a template parameter
// or a local declaration of the same name shadows (`const int N = 1e8;`
// that only main reads, beside `__global__ void k(float* y, int N)`), and
// member names after `.` or `->`. MarkHostOnly does not count them as
// uses of the file-scope name.
//
// Locals are found conservatively (it is not a C++ parser): `Type NAME`
// followed by `=`, `;`, `[`, `,` or `{` at the statement level of a block,
// in scope to that block's end. A local it misses only keeps a constant
// NVRTC then warns about; one it invents could blank a constant the
// kernel reads, so anything ambiguous counts as a use.

// notUses returns the byte offsets of f's identifier tokens, inside its
// function definitions, that name no file-scope declaration.
func (f *File) notUses() map[int]bool {
	out := map[int]bool{}
	for _, d := range f.functionDefinitions() {
		toks, params, body := f.functionParams(d)
		if body < 0 {
			continue
		}
		for k := 0; k < body; k++ {
			if toks[k].kind == Ident && params[toks[k].text] && !qualified(toks, k) {
				out[toks[k].start] = true // a parameter's own name, or its type naming a template parameter
			}
		}
		shadowedInBody(toks, body, params, out)
	}
	return out
}

// addTemplateParams adds the names of a `template <…>` header's parameters
// (an identifier followed by `,`, `>`, `=` or `...` at its top level).
func addTemplateParams(toks []ltok, params map[string]bool) {
	if len(toks) < 2 || toks[0].text != "template" || toks[1].text != "<" {
		return
	}
	depth := 0
	for k := 1; k < len(toks); k++ {
		switch toks[k].text {
		case "<", "(":
			depth++
		case ">", ")":
			depth--
			if depth == 0 {
				return
			}
		}
		if depth == 1 && toks[k].kind == Ident && k+1 < len(toks) && slices.Contains([]string{",", ">", "=", "..."}, toks[k+1].text) {
			params[toks[k].text] = true
		}
	}
}

// parameterList adds the parameter names of the parenthesised list after
// the function's name and returns the index of the body's `{` (-1 when
// there is none).
func parameterList(toks []ltok, name string, params map[string]bool) int {
	open := slices.IndexFunc(toks, func(t ltok) bool { return t.text == "(" })
	for k := 0; k+1 < len(toks); k++ {
		if toks[k].text == name && toks[k+1].text == "(" {
			open = k + 1
			break
		}
	}
	if open < 0 {
		return -1
	}
	depth, last := 0, open // last: the token before the current parameter
	for k := open; k < len(toks); k++ {
		switch t := toks[k].text; {
		case t == "(" || t == "[" || t == "<" && depth > 0:
			depth++
		case t == ")" || t == "]" || t == ">" && depth > 1:
			depth--
		}
		if depth == 1 && toks[k].text == "," || depth == 0 {
			if n := parameterName(toks[last+1 : k]); n != "" {
				params[n] = true
			}
			last = k
		}
		if depth == 0 {
			for j := k + 1; j < len(toks); j++ {
				if toks[j].text == "{" {
					return j
				}
			}
			return -1
		}
	}
	return -1
}

// parameterName is the name one parameter declares: its last identifier
// before a default value, an array extent or an attribute (Metal's
// `[[buffer(0)]]`), when a type comes before it.
func parameterName(p []ltok) string {
	end := slices.IndexFunc(p, func(t ltok) bool { return t.text == "=" || t.text == "[" || t.text == "[[" })
	if end < 0 {
		end = len(p)
	}
	if end < 2 || p[end-1].kind != Ident {
		return ""
	}
	return p[end-1].text
}

// shadowedInBody marks, from the body's `{` at toks[open], the uses of
// params and of the block-scoped locals it finds, and member names.
func shadowedInBody(toks []ltok, open int, params map[string]bool, out map[int]bool) {
	var blocks []map[string]bool
	parens := 0
	for k := open; k < len(toks); k++ {
		t := toks[k]
		switch t.text {
		case "{":
			blocks = append(blocks, map[string]bool{})
			continue
		case "}":
			if len(blocks) > 0 {
				blocks = blocks[:len(blocks)-1]
			}
			continue
		case "(", "[":
			parens++
		case ")", "]":
			parens--
		}
		if t.kind != Ident || len(blocks) == 0 {
			continue
		}
		if member(toks, k) {
			out[t.start] = true // a member
			continue
		}
		if qualified(toks, k) {
			continue // ::N, ns::N: not the parameter
		}
		if parens == 0 && declaresLocal(toks, k) {
			blocks[len(blocks)-1][t.text] = true
		}
		if params[t.text] || slices.ContainsFunc(blocks, func(b map[string]bool) bool { return b[t.text] }) {
			out[t.start] = true
		}
	}
}

// member: the identifier at toks[k] follows `.` or `->` (lexed as `-`
// and `>`, adjacent).
func member(toks []ltok, k int) bool {
	if k > 0 && toks[k-1].text == "." {
		return true
	}
	return k > 1 && toks[k-1].text == ">" && toks[k-2].text == "-" && toks[k-2].end == toks[k-1].start
}

// qualified: the identifier at toks[k] follows `::`.
func qualified(toks []ltok, k int) bool { return k > 0 && toks[k-1].text == "::" }

// declaresLocal says whether the identifier at toks[k] is the name a
// local declaration declares: `T NAME`, `T* NAME`, `const T& NAME`, …
// followed by `=`, `;`, `[`, `,` or `{`.
func declaresLocal(toks []ltok, k int) bool {
	if k+1 >= len(toks) || !slices.Contains([]string{"=", ";", "[", ",", "{"}, toks[k+1].text) || k < 2 {
		return false
	}
	prev := toks[k-1]
	if prev.kind == Ident {
		return !statementWords[prev.text]
	}
	if prev.text != "*" && prev.text != "&" || toks[k-2].kind != Ident || statementWords[toks[k-2].text] {
		return false
	}
	// `a * N;` after `=` or `return` is an expression: the type must
	// start the statement, or follow a qualifier
	if k < 3 {
		return false
	}
	before := toks[k-3]
	return before.text == ";" || before.text == "{" || before.text == "}" || before.kind == Ident && typeQualifiers[before.text]
}

// statementWords are keywords an expression may follow: `return N;`
// names N, it does not declare it.
var statementWords = map[string]bool{"return": true, "case": true, "goto": true, "else": true, "do": true,
	"throw": true, "new": true, "delete": true, "sizeof": true, "co_return": true, "co_yield": true, "co_await": true,
	"typedef": true, "using": true, "namespace": true, "operator": true, "template": true}

// typeQualifiers may come before a local's type.
var typeQualifiers = map[string]bool{"const": true, "volatile": true, "static": true, "unsigned": true,
	"signed": true, "long": true, "short": true, "register": true, "constexpr": true, "struct": true,
	"class": true, "typename": true, "auto": true}

// Hidden says whether f's live code mentions name only where a parameter,
// template parameter or local of the same name shadows it (or as a member
// after `.` or `->`): a file-scope declaration of name would reach none
// of its uses. fn is the first function that takes a parameter (or
// template parameter) of that name, "" when only locals hide it. A file
// that does not mention name, or names it in a #define, hides nothing.
func (f *File) Hidden(name string) (hidden bool, fn string) {
	hidden, fn, _ = f.HiddenBy(name)
	return hidden, fn
}

// HiddenBy is Hidden, also saying whether fn's parameter of that name is a
// template parameter (`template <typename T>`: the entry's template
// argument sets it) rather than a function parameter (the kernel's
// argument).
func (f *File) HiddenBy(name string) (hidden bool, fn string, templateParam bool) {
	if f.FirstUse(name) == 0 {
		return false, "", false
	}
	for _, d := range f.Directives {
		if !d.Dead && slices.Contains(d.Body, name) {
			return false, "", false
		}
	}
	shadowed := f.notUses()
	for _, t := range f.code {
		if t.kind == Ident && t.text == name && !shadowed[t.start] {
			return false, "", false
		}
	}
	for _, d := range f.functionDefinitions() {
		if toks, params, _ := f.functionParams(d); params[name] {
			tparams := map[string]bool{}
			addTemplateParams(toks, tparams)
			return true, d.Names[0], tparams[name]
		}
	}
	return true, "", false
}

// functionDefinitions are f's named function definitions.
func (f *File) functionDefinitions() []Decl {
	var out []Decl
	for _, d := range f.Decls {
		if d.Kind == Function && d.Definition && len(d.Names) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// functionParams reads definition d: its tokens, the names of its
// parameters and template parameters, and the index of its body's "{"
// (below 0 when there is none).
func (f *File) functionParams(d Decl) (toks []ltok, params map[string]bool, body int) {
	toks = f.declTokens(d)
	params = map[string]bool{}
	addTemplateParams(toks, params)
	return toks, params, parameterList(toks, d.Names[0], params)
}
