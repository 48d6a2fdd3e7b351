package csrc

import (
	"fmt"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      string // "kind:text@line" per token
	}{
		{"kinds", `f(x1, 1.5f);`, "I:f@1 P:(@1 I:x1@1 P:,@1 N:1.5f@1 P:)@1 P:;@1"},
		{"two-byte punctuation", "[[kernel]] a::b", "P:[[@1 I:kernel@1 P:]]@1 I:a@1 P:::@1 I:b@1"},
		{"literals keep no contents", `s = "a\"b"; c = 'x';`, `I:s@1 P:=@1 L:""@1 P:;@1 I:c@1 P:=@1 L:''@1 P:;@1`},
		{"comments and preprocessor lines dropped, lines counted", "#define A \\\n  1\n/* x\n y */ a // b\nb", "I:a@4 I:b@5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, tk := range Tokenize(c.src) {
				got = append(got, fmt.Sprintf("%c:%s@%d", "INLP"[tk.Kind], tk.Text, tk.Line))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("got  %s\nwant %s", strings.Join(got, " "), c.want)
			}
		})
	}
}
