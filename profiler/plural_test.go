package profiler

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 mismatches"}, {1, "1 mismatch"}, {2, "2 mismatches"}} {
		if got := Plural(tc.n, "mismatch", "mismatches"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
