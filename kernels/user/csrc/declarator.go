package csrc

import (
	"slices"
	"strings"
)

// Declarator reads the declarator of name in decl (a global's
// declaration, `__constant__ float c_K[KERNEL_LENGTH];`): the element
// type's words (qualifiers dropped), the array extents as written, and
// whether it is a pointer.
func Declarator(decl, name string) (elem []string, extents []string, ptr bool) {
	toks := Tokenize(decl)
	at := slices.IndexFunc(toks, func(t Token) bool { return t.Kind == Ident && t.Text == name })
	if at < 0 {
		return nil, nil, false
	}
	// The type is what precedes the first declarator: up to name, or,
	// when another declarator comes first (`float *a, b[4];`), up to that
	// one's name, the last identifier before its `,`, `[` or `=`.
	typeEnd := at
	if first := slices.IndexFunc(toks[:at], func(t Token) bool { return t.Text == "," || t.Text == "[" || t.Text == "=" }); first >= 0 {
		for typeEnd = max(first-1, 0); typeEnd > 0 && toks[typeEnd].Kind != Ident; typeEnd-- {
		}
	}
	for _, t := range toks[:typeEnd] {
		switch t.Text {
		case "__constant__", "__device__", "__managed__", "static", "extern", "const", "volatile", "inline", "constexpr", "__restrict__":
		default:
			if t.Kind == Ident || t.Text == "::" {
				elem = append(elem, t.Text)
			}
		}
	}
	// A pointer is a * or & of name's own declarator: after the last comma.
	own := toks[:at]
	for i := len(own) - 1; i >= 0; i-- {
		if own[i].Text == "," {
			own = own[i+1:]
			break
		}
	}
	ptr = slices.ContainsFunc(own, func(t Token) bool { return t.Text == "*" || t.Text == "&" })
	for i := at + 1; i < len(toks) && toks[i].Text == "["; {
		end := Matching(toks, i)
		var parts []string
		for _, t := range toks[i+1 : end] {
			parts = append(parts, t.Text)
		}
		extents = append(extents, strings.Join(parts, " "))
		i = end + 1
	}
	return elem, extents, ptr
}
