package user

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file lays out a class template's instance that a kernel takes by
// value, named in the entry's template arguments (`T tl` with the entry's
// T = TensorListMetadata<4>, over `template <int n> struct
// TensorListMetadata { void* addresses[n][depth_to_max_tensors[n - 1]];
// … }`): the instance's arguments replace the template's parameters in
// its fields' types and array extents, and an extent may index a
// file-scope constant array (`constexpr int depth_to_max_tensors[5] =
// {…};`).

// splitTemplateName splits `TensorListMetadata<4>` into its name and its
// top-level template arguments.
func splitTemplateName(t string) (name string, args []string) {
	open := strings.IndexByte(t, '<')
	if open < 0 || !strings.HasSuffix(t, ">") {
		return strings.TrimSpace(t), nil
	}
	depth, start := 0, open+1
	inner := t[:len(t)-1]
	for i := open + 1; i < len(inner); i++ {
		switch inner[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(inner[start:i]))
				start = i + 1
			}
		}
	}
	args = append(args, strings.TrimSpace(inner[start:]))
	return strings.TrimSpace(t[:open]), args
}

// structTemplateParams are the template parameters of the struct (or
// class) template name that code defines, in order; nil when it is no
// template.
func structTemplateParams(toks []csrc.Token, name string) []string {
	for i := 1; i+2 < len(toks); i++ {
		if (toks[i].Text != "struct" && toks[i].Text != "class") || toks[i+1].Text != name {
			continue
		}
		if next := toks[i+2].Text; next != "{" && next != ":" && next != "final" {
			continue // a declaration or a use
		}
		if toks[i-1].Text != ">" {
			return nil
		}
		open := openingAngle(toks, i-1)
		if open < 1 || toks[open-1].Text != "template" {
			return nil
		}
		return templateParamNames(toks[open+1 : i-1])
	}
	return nil
}

// openingAngle finds the '<' that the '>' at toks[close] closes.
func openingAngle(toks []csrc.Token, close int) int {
	depth := 0
	for k := close; k >= 0; k-- {
		switch toks[k].Text {
		case ">", ")":
			depth++
		case "<", "(":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// templateParamNames reads the names of `typename T, int n = 4, class U`.
func templateParamNames(toks []csrc.Token) []string {
	var names []string
	depth, last, inDefault := 0, "", false
	for _, t := range append(toks, csrc.Token{Text: ","}) {
		switch t.Text {
		case "<", "(":
			depth++
		case ">", ")":
			depth--
		case "=":
			inDefault = inDefault || depth == 0
		case ",":
			if depth == 0 {
				names = append(names, last)
				last, inDefault = "", false
			}
		default:
			if depth == 0 && !inDefault && t.Kind == csrc.Ident && t.Text != "typename" && t.Text != "class" {
				last = t.Text
			}
		}
	}
	return names
}

// constArrays reads the source's constant integer arrays
// (`constexpr int depth_to_max_tensors[5] = {110, 64, 48, 36, 30};`),
// each element an integer constant expression over the macros.
func constArrays(toks []csrc.Token, macros map[string]string) map[string][]int64 {
	out := map[string][]int64{}
	for i := 0; i < len(toks); i++ {
		if toks[i].Text != "constexpr" && toks[i].Text != "const" {
			continue
		}
		j := i + 1
		for j < len(toks) && toks[j].Kind == csrc.Ident && j+1 < len(toks) && toks[j+1].Text != "[" {
			j++ // the type's words
		}
		if j+1 >= len(toks) || toks[j].Kind != csrc.Ident || toks[j+1].Text != "[" {
			continue
		}
		name := toks[j].Text
		k := j + 1
		for k < len(toks) && toks[k].Text != "=" && toks[k].Text != ";" {
			k++
		}
		if k+1 >= len(toks) || toks[k].Text != "=" || toks[k+1].Text != "{" {
			continue
		}
		var vals []int64
		var elem []string
		ok := true
		for k += 2; k < len(toks) && toks[k].Text != "}"; k++ {
			if toks[k].Text != "," {
				elem = append(elem, toks[k].Text)
				continue
			}
			v, good := csrc.IntConst(strings.Join(elem, " "), macros)
			vals, elem, ok = append(vals, v), nil, ok && good
		}
		if len(elem) > 0 {
			v, good := csrc.IntConst(strings.Join(elem, " "), macros)
			vals, ok = append(vals, v), ok && good
		}
		if ok {
			out[name] = vals
		}
		i = k
	}
	return out
}

// extentValue evaluates an array extent as written: an integer constant
// expression over the macros and the template's arguments (subst), where
// `name[i]` reads a constant array.
func (st *structTypes) extentValue(x string, subst map[string]string) (int64, bool) {
	macros := st.macros
	if len(subst) > 0 {
		macros = maps.Clone(st.macros)
		maps.Copy(macros, subst)
	}
	var toks []string
	for _, t := range csrc.Tokenize(x) {
		if t.Text == "]]" { // the lexer reads an inner and an outer ']' as Metal's "]]"
			toks = append(toks, "]", "]")
			continue
		}
		toks = append(toks, t.Text)
	}
	for len(toks) > 0 && toks[len(toks)-1] == "]" && countOf(toks, "]") > countOf(toks, "[") {
		toks = toks[:len(toks)-1] // the extent's own closing bracket
	}
	var out []string
	for i := 0; i < len(toks); i++ {
		vals, isArray := st.arrays[toks[i]]
		if !isArray || i+1 >= len(toks) || toks[i+1] != "[" {
			out = append(out, toks[i])
			continue
		}
		end := i + 2
		for depth := 1; end < len(toks); end++ {
			if toks[end] == "[" {
				depth++
			} else if toks[end] == "]" {
				if depth--; depth == 0 {
					break
				}
			}
		}
		idx, ok := csrc.IntConst(strings.Join(toks[i+2:min(end, len(toks))], " "), macros)
		if !ok || idx < 0 || idx >= int64(len(vals)) {
			return 0, false
		}
		out = append(out, strconv.FormatInt(vals[idx], 10))
		i = end
	}
	return csrc.IntConst(strings.Join(out, " "), macros)
}

// templateSubst maps a class template's parameters to an instance's
// arguments; an error when they do not pair up.
func templateSubst(params, args []string, name string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("%s has template arguments, but mltop finds no `template <…> struct %s` in the source or its local headers", name, strings.SplitN(name, "<", 2)[0])
	}
	if len(args) > len(params) {
		return nil, fmt.Errorf("%s has %d template arguments; the template takes %d (%s)", name, len(args), len(params), strings.Join(params, ", "))
	}
	out := map[string]string{}
	for i, a := range args {
		out[params[i]] = a
	}
	return out, nil
}

func countOf(toks []string, s string) int {
	n := 0
	for _, t := range toks {
		if t == s {
			n++
		}
	}
	return n
}
