package scaffold

import "testing"

// A typedef's tokens become the type as people write it.
func TestTypeText(t *testing.T) {
	for in, want := range map[string]string{
		"AdamFunctor < float , float >":  "AdamFunctor<float, float>",
		"ns :: F < Lists < 4 > , 2 >":    "ns::F<Lists<4>, 2>",
		"unsigned long long":             "unsigned long long",
		"const Pair < float * , int > *": "const Pair<float*, int>*",
	} {
		if got := typeText(in); got != want {
			t.Errorf("typeText(%q) = %q, want %q", in, got, want)
		}
	}
}
