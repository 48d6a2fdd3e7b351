package profiler

import "testing"

func TestDispatchTGMParts(t *testing.T) {
	for _, c := range []struct {
		items []TGMItem
		want  string
	}{
		{nil, "no items"},
		{[]TGMItem{{Name: "partial", Bytes: 1024}}, "partial 1024 B"},
		{[]TGMItem{{Name: "partial", Bytes: 1024}, {Name: "dynamic", Bytes: 256000}}, "partial 1024 B + dynamic 256000 B"},
	} {
		if got := (Dispatch{TGM: c.items}).TGMParts(); got != c.want {
			t.Errorf("%v: %q, want %q", c.items, got, c.want)
		}
	}
}
