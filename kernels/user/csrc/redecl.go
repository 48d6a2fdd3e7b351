package csrc

import "strings"

// This file tells which of the declarations FindEntries finds are one
// kernel: an explicit specialization or instantiation of a template (the
// primary template is the entry), a forward declaration and its
// definition, a definition written out of its namespace (ns::k).

// dropSpecializations removes the explicit specializations and
// instantiations of the templates whose primary declaration is in sigs: the
// primary template's parameters bind the arguments. One whose primary is
// elsewhere (another file) stays, marked.
func dropSpecializations(sigs []Signature) []Signature {
	primary := map[string]bool{}
	for _, s := range sigs {
		if !s.Specialization {
			primary[s.Qualified()] = true
		}
	}
	out := sigs[:0]
	for _, s := range sigs {
		if !s.Specialization || !primary[s.Qualified()] {
			out = append(out, s)
		}
	}
	return out
}

// writtenQualifier is the qualifier written before the name at toks[at]:
// "ns" for an out-of-line `__global__ void ns::k(…)`; "" for none.
func writtenQualifier(toks []Token, at int) string {
	var parts []string
	for k := at; k >= 2 && toks[k-1].Text == "::" && toks[k-2].Kind == Ident; k -= 2 {
		parts = append([]string{toks[k-2].Text}, parts...)
	}
	return strings.Join(parts, "::")
}

func joinScope(outer, inner string) string {
	if outer == "" || inner == "" {
		return outer + inner
	}
	return outer + "::" + inner
}

// dropRedeclarations keeps one of the declarations of the same kernel (a
// forward declaration and its definition): same name, same parameter
// types as written. They are one function, not overloads.
func dropRedeclarations(sigs []Signature) []Signature {
	seen := map[string]int{} // index in out
	out := sigs[:0]
	for _, s := range sigs {
		key := s.Qualified() + "(" + paramTypes(s) + ")"
		k, dup := seen[key]
		switch {
		case !dup:
			seen[key] = len(out)
			out = append(out, s)
		case s.defined && !out[k].defined: // the definition's line, for messages
			out[k] = s
		}
	}
	return out
}

func paramTypes(s Signature) string {
	var types []string
	for _, p := range s.Params {
		types = append(types, p.Declared+"["+strings.Join(p.Extents, "][")+"]")
	}
	return strings.Join(types, ", ")
}

// hasBody says whether the declaration whose parameter list closes at
// toks[close] has a body: a '{' comes before any ';'.
func hasBody(toks []Token, close int) bool {
	for k := close + 1; k < len(toks); k++ {
		switch toks[k].Text {
		case "{":
			return true
		case ";":
			return false
		}
	}
	return false
}

// templateArgsStart is the index of the '<' that the '>' at toks[closing]
// closes (-1 when none does).
func templateArgsStart(toks []Token, closing int) int {
	depth := 0
	for k := closing; k >= 0; k-- {
		switch toks[k].Text {
		case ">":
			depth++
		case "<":
			if depth--; depth == 0 {
				return k
			}
		case ";", "{", "}":
			return -1
		}
	}
	return -1
}
