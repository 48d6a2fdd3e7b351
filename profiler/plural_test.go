package profiler

import "testing"

func TestPluralAndSummary(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 mismatches"}, {1, "1 mismatch"}, {2, "2 mismatches"}} {
		if got := Plural(tc.n, "mismatch", "mismatches"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	one := Summary{Total: 1, ByStatus: map[Status]int{StatusOK: 1}}
	if got := one.String(); got != "1 spec: 1 ok" {
		t.Errorf("summary of one spec: %q", got)
	}
	two := Summary{Total: 2, ByStatus: map[Status]int{StatusOK: 2}}
	if got := two.String(); got != "2 specs: 2 ok" {
		t.Errorf("summary of two specs: %q", got)
	}
}
