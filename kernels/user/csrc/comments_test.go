package csrc

import "testing"

func TestBlankComments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a // b\nc", "a     \nc"},
		{"a /* b\nc */ d", "a     \n     d"},
		{`s = "// no"; // yes`, `s = "// no";       `},
		{"c = '/'; /* x */", "c = '/';        "},
	} {
		if got := BlankComments(tc.in); got != tc.want {
			t.Errorf("BlankComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
