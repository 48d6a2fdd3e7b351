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
