package run

import (
	"slices"
	"sync"
	"unsafe"
)

// hostPool keeps the host slices of finished checks for the next ones:
// the two checks of every spec then neither allocate nor zero their
// downloads (nor fault in fresh pages). It keeps at most poolSlices
// slices and poolBytes bytes, none over maxScratchBytes. Safe for
// concurrent use; the zero value is ready.
type hostPool[T any] struct {
	mu   sync.Mutex
	free [][]T
}

const (
	poolSlices      = 8
	poolBytes       = 256 << 20
	maxScratchBytes = 64 << 20
)

// get returns a slice of n elements: a kept one (its old contents left
// in it) or a new one.
func (p *hostPool[T]) get(n int) []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, s := range p.free {
		if cap(s) >= n && (best < 0 || cap(s) < cap(p.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]T, n)
	}
	s := p.free[best]
	p.free = slices.Delete(p.free, best, best+1)
	return s[:n]
}

// put hands s back for a later get, unless it is too large to keep or
// the pool is full.
func (p *hostPool[T]) put(s []T) {
	size := int64(cap(s)) * int64(unsafe.Sizeof(*new(T)))
	if cap(s) == 0 || size > maxScratchBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	held := size
	for _, f := range p.free {
		held += int64(cap(f)) * int64(unsafe.Sizeof(*new(T)))
	}
	if len(p.free) >= poolSlices || held > poolBytes {
		return
	}
	p.free = append(p.free, s)
}
