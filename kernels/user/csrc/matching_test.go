package csrc

import "testing"

func TestMatching(t *testing.T) {
	for _, c := range []struct {
		src  string
		open int // index of the opening token
		want string
	}{
		{"f(a, (b), c) + d", 1, ")"},
		{"x[i[j]] = 1;", 1, "]]"}, // the tokenizer reads ]] as one token: it closes both
		{"{ { } } tail", 0, "}"},
		{"g(a, b", 1, "b"}, // never closes: the last token
	} {
		toks := Tokenize(c.src)
		k := Matching(toks, c.open)
		if toks[k].Text != c.want || (c.want == ")" && k != len(toks)-3) {
			t.Errorf("%q: closes at %d %q, want %q", c.src, k, toks[k].Text, c.want)
		}
	}
}
