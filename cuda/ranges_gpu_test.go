//go:build linux

package cuda

import (
	"bytes"
	"testing"
)

// Few ranges are copied one by one, many are gathered on the device
// first: both give each range its own bytes.
func TestDownloadRangesOnGPU(t *testing.T) {
	b := openOrSkip(t)
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = byte(i * 7 / 3)
	}
	buf, err := b.Alloc(int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(buf)
	if err := b.Upload(buf, src); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, gatherMin + 1, 300} {
		var offs []int64
		var dsts [][]byte
		for i := range n {
			off := int64(i * (len(src) / n))
			offs = append(offs, off)
			dsts = append(dsts, make([]byte, 1+i%97))
		}
		dsts[n/2] = nil // an empty range is allowed
		if err := b.DownloadRanges(buf, offs, dsts); err != nil {
			t.Fatalf("%d ranges: %v", n, err)
		}
		for i, d := range dsts {
			if !bytes.Equal(d, src[offs[i]:offs[i]+int64(len(d))]) {
				t.Fatalf("%d ranges: range %d at %d differs", n, i, offs[i])
			}
		}
	}
}
