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
	if maxKeptStage >= 1<<20 {
		src = make([]byte, 2*maxKeptStage)
	}
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
	// Ranges in slices of their own, then parts of one slice back to back
	// (copied straight into it), growing (the kept staging buffer grows)
	// and past the kept size (a temporary one).
	for _, tc := range []struct {
		n, size  int
		oneSlice bool
	}{{3, 97, false}, {gatherMin + 1, 97, false}, {300, 97, false}, {300, 97, true}, {40, 3000, true}, {16, maxKeptStage / 8, true}} {
		n := tc.n
		var offs []int64
		var dsts [][]byte
		all := make([]byte, n*tc.size)
		at := 0
		for i := range n {
			off := int64(i * (len(src) / n))
			offs = append(offs, off)
			size := 1 + i%tc.size
			if tc.oneSlice {
				size = tc.size
			}
			if i == n/2 {
				size = 0 // an empty range is allowed
			}
			if tc.oneSlice {
				dsts = append(dsts, all[at:at+size])
				at += size
			} else {
				dsts = append(dsts, make([]byte, size))
			}
		}
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
