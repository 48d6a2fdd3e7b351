package csrc

import "strings"

// EnumDef is an enum that tokens define: its name ("" for an anonymous
// one), the underlying type it names (`enum Mode : uint8_t`; "" when it
// names none), the name a `typedef enum … { … } alias;` gives it, and its
// body, toks[Open] "{" to toks[End] "}". A declaration without a body
// (`enum Mode : int;`) or an elaborated use (`enum Mode m`) is none.
type EnumDef struct {
	Name, Base, Alias string
	Open, End         int
}

// EnumDefs lists the enums toks define, in order (`enum`, `enum class`,
// `enum struct`).
func EnumDefs(toks []Token) []EnumDef {
	var out []EnumDef
	for i := 0; i < len(toks); i++ {
		if toks[i].Text != "enum" {
			continue
		}
		var d EnumDef
		j := i + 1
		if j < len(toks) && (toks[j].Text == "class" || toks[j].Text == "struct") {
			j++
		}
		if j < len(toks) && toks[j].Kind == Ident {
			d.Name = toks[j].Text
			j++
		}
		if j < len(toks) && toks[j].Text == ":" {
			var words []string
			for j++; j < len(toks) && toks[j].Text != "{" && toks[j].Text != ";"; j++ {
				words = append(words, toks[j].Text)
			}
			d.Base = strings.Join(words, " ")
		}
		if j >= len(toks) || toks[j].Text != "{" {
			continue
		}
		d.Open, d.End = j, Matching(toks, j)
		if i > 0 && toks[i-1].Text == "typedef" && d.End+2 < len(toks) && toks[d.End+1].Kind == Ident && toks[d.End+2].Text == ";" {
			d.Alias = toks[d.End+1].Text
		}
		out = append(out, d)
		i = d.End
	}
	return out
}
