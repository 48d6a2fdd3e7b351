package cuda

import "testing"

// Parts of one slice that follow each other are back to back (empty ones
// anywhere); a gap, a reversed order, separate slices or nothing at all
// are not.
func TestBackToBack(t *testing.T) {
	a := make([]byte, 100)
	b := make([]byte, 100)
	for _, tc := range []struct {
		name string
		dsts [][]byte
		want bool
	}{
		{"one slice", [][]byte{a}, true},
		{"parts in order", [][]byte{a[0:10], a[10:40], a[40:41]}, true},
		{"empty parts between", [][]byte{nil, a[0:10], a[10:10], nil, a[10:20]}, true},
		{"a gap", [][]byte{a[0:10], a[11:20]}, false},
		{"an overlap", [][]byte{a[0:10], a[9:20]}, false},
		{"reversed", [][]byte{a[10:20], a[0:10]}, false},
		{"two slices", [][]byte{a, b}, false},
		{"nothing", [][]byte{nil, {}}, false},
	} {
		if got := backToBack(tc.dsts); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The gather's descriptors give each non-empty range its source offset,
// its place in the gathered bytes (the lengths before it) and its length.
func TestGatherDescriptors(t *testing.T) {
	got := gatherDescriptors([]int64{100, 7, 4000, 9}, [][]byte{make([]byte, 3), nil, make([]byte, 10), make([]byte, 1)})
	want := []uint64{100, 0, 3, 4000, 3, 10, 9, 13, 1}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	if d := gatherDescriptors(nil, nil); len(d) != 0 {
		t.Errorf("no ranges: %v", d)
	}
}
