package cpu

import (
	"strings"
	"testing"
)

func TestDownloadRanges(t *testing.T) {
	be, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b := be.(*Backend)
	buf, err := b.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("0123456789abcdef")
	if err := b.Upload(buf, src); err != nil {
		t.Fatal(err)
	}
	a, c := make([]byte, 3), make([]byte, 2)
	if err := b.DownloadRanges(buf, []int64{1, 14}, [][]byte{a, c}); err != nil {
		t.Fatal(err)
	}
	if string(a) != "123" || string(c) != "ef" {
		t.Errorf("ranges read %q and %q, want \"123\" and \"ef\"", a, c)
	}
	for name, offs := range map[string][]int64{"past the end": {15}, "negative": {-1}} {
		err := b.DownloadRanges(buf, offs, [][]byte{make([]byte, 2)})
		if err == nil || !strings.Contains(err.Error(), "outside the 16-byte buffer") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := b.DownloadRanges(buf, []int64{0, 1}, [][]byte{a}); err == nil {
		t.Error("2 offsets for 1 destination accepted")
	}
}
