package csrc

import (
	"strings"
	"testing"
)

// SplitAtCommas: the one splitter at top-level commas for declarators
// (angles on), launch-bounds arguments and call arguments (angles off,
// where < compares).
func TestSplitAtCommas(t *testing.T) {
	cases := []struct {
		src    string
		angles bool
		want   []string
	}{
		{"a, b, c", false, []string{"a", "b", "c"}},
		{"f(a, b), g[1, 2], {x, y}", false, []string{"f ( a , b )", "g [ 1 , 2 ]", "{ x , y }"}},
		{"i < n, j", false, []string{"i < n", "j"}},
		{"Traits<4, T>::kThreads, 1", true, []string{"Traits < 4 , T > :: kThreads", "1"}},
		{"Traits<4, T>::kThreads, 1", false, []string{"Traits < 4", "T > :: kThreads", "1"}},
		{"int a[2], *b, c", true, []string{"int a [ 2 ]", "* b", "c"}},
		{"", false, []string{""}},
	}
	for _, c := range cases {
		var got []string
		for _, part := range SplitAtCommas(Tokenize(c.src), c.angles) {
			var words []string
			for _, tok := range part {
				words = append(words, tok.Text)
			}
			got = append(got, strings.Join(words, " "))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("SplitAtCommas(%q, angles %v) = %q, want %q", c.src, c.angles, got, c.want)
		}
	}
}
