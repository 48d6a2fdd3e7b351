package profiler

import "testing"

func TestFirstLineAndOneLine(t *testing.T) {
	for _, c := range []struct{ in, first, one string }{
		{"plain", "plain", "plain"},
		{"  \nfirst\nsecond\n", "first", "   | first | second | "},
		{"a\r\nb", "a\r", "a  | b"},
		{"", "", ""},
	} {
		if got := FirstLine(c.in); got != c.first {
			t.Errorf("FirstLine(%q) = %q, want %q", c.in, got, c.first)
		}
		if got := OneLine(c.in); got != c.one {
			t.Errorf("OneLine(%q) = %q, want %q", c.in, got, c.one)
		}
	}
}
