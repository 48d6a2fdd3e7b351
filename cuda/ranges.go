package cuda

import "unsafe"

// backToBack says whether the non-empty dsts lie one after another in
// memory, each starting where the one before it ends: one copy from the
// device can then fill them all, with no host staging slice between.
func backToBack(dsts [][]byte) bool {
	var end uintptr
	seen := false
	for _, d := range dsts {
		if len(d) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
		if seen && p != end {
			return false
		}
		seen, end = true, p+uintptr(len(d))
	}
	return seen
}

// gatherDescriptors lays the non-empty ranges (offsets[i], len(dsts[i]))
// back to back: three words per range, its offset in the source, its
// offset in the gathered bytes and its length (mltop_gather's layout).
func gatherDescriptors(offsets []int64, dsts [][]byte) []uint64 {
	out := make([]uint64, 0, 3*len(offsets))
	at := uint64(0)
	for i, off := range offsets {
		n := uint64(len(dsts[i]))
		if n == 0 {
			continue
		}
		out = append(out, uint64(off), at, n)
		at += n
	}
	return out
}
