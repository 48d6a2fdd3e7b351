package run

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// GuardBytes is the tail the runner allocates past each buffer's end and
// keeps at a known byte value: after the verification run it reads the
// tails back, and a changed one means the kernel wrote past that buffer's
// end (a bound test `i <= n`, a grid larger than the data). Without it
// such a write lands in the allocator's slack or in a neighbouring buffer
// and the spec passes. A read past the end finds the poison byte 0xff (NaN
// in f32, f16 and bf16), which the check sees where the value matters.
const GuardBytes = 4096

// allocBytes is what a buffer of spec b takes on the device: its bytes
// and the guard past them. A symbol table (written into a global of its
// exact size, never by the kernel) has none.
func allocBytes(b profiler.BufferSpec) int64 {
	if b.Symbol != "" {
		return b.Bytes()
	}
	return b.Bytes() + GuardBytes
}

// setGuard records that buf's guard holds v (filled whole with v, or
// copied from a buffer whose guard held v).
func (r *Runner) setGuard(buf profiler.Buffer, v byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.guards == nil {
		r.guards = map[profiler.Buffer]byte{}
	}
	r.guards[buf] = v
}

// guardOf is what buf's guard holds; false: not known (never filled).
func (r *Runner) guardOf(buf profiler.Buffer) (byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.guards[buf]
	return v, ok
}

// forgetGuard drops buf's guard (freed, or found changed).
func (r *Runner) forgetGuard(buf profiler.Buffer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.guards, buf)
}

// freeBuffer frees buf and forgets its guard.
func (r *Runner) freeBuffer(buf profiler.Buffer) {
	r.forgetGuard(buf)
	r.backend.Free(buf)
}

// fillWhole sets every byte of buf, its guard included, to v: on the
// device where the backend can (profiler.Filler), else by uploading a slab
// of v (slabBuf keeps it between calls).
func (r *Runner) fillWhole(buf profiler.Buffer, v byte, slabBuf *[]byte) error {
	var err error
	if f, ok := r.backend.(profiler.Filler); ok {
		err = f.Fill(buf, v)
	} else {
		r.mu.Lock()
		err = r.backend.Upload(buf, slab(slabBuf, buf.Size(), v))
		r.mu.Unlock()
	}
	if err != nil {
		return err
	}
	r.setGuard(buf, v)
	return nil
}

// checkGuards reads back the guard of each of the plan's buffers whose
// guard is known and says which one the kernel wrote past, if any. A
// changed guard is forgotten, so the buffer is filled again before it is
// used again.
func (r *Runner) checkGuards(plan *profiler.Plan, bufs map[string]profiler.Buffer) error {
	rd, ranged := r.backend.(profiler.RangeDownloader)
	tail := make([]byte, GuardBytes)
	// A zero-fill dispatch clears its buffer whole, the guard too: from
	// then on that guard holds 0.
	zeroed := map[string]bool{}
	for _, ds := range [][]profiler.Dispatch{plan.Setup, plan.Dispatches} {
		for _, d := range ds {
			if d.Zero != "" {
				zeroed[d.Zero] = true
			}
		}
	}
	var whole []byte
	for _, b := range plan.Buffers {
		buf := bufs[b.Name]
		if buf == nil || buf.Size() < b.Bytes()+GuardBytes {
			continue
		}
		v, known := r.guardOf(buf)
		if zeroed[b.Name] {
			v, known = 0, true
			r.setGuard(buf, 0)
		}
		if !known {
			continue
		}
		got := tail
		if ranged {
			if err := rd.DownloadRanges(buf, []int64{b.Bytes()}, [][]byte{tail}); err != nil {
				return fmt.Errorf("reading the guard past %s: %w", b.Name, err)
			}
		} else {
			if int64(cap(whole)) < buf.Size() {
				whole = make([]byte, buf.Size())
			}
			whole = whole[:buf.Size()]
			if err := r.backend.Download(buf, whole); err != nil {
				return fmt.Errorf("reading the guard past %s: %w", b.Name, err)
			}
			got = whole[b.Bytes() : b.Bytes()+GuardBytes]
		}
		first, last, changed := -1, -1, 0
		for i, c := range got {
			if c != v {
				if first < 0 {
					first = i
				}
				last, changed = i, changed+1
			}
		}
		if changed == 0 {
			continue
		}
		r.forgetGuard(buf)
		size := int64(b.Type.Size())
		return fmt.Errorf("the kernel wrote past the end of %s (%d %s elements, %s): %d of the %d bytes after it changed, from element %d to %d (indices counted from its start) — an out-of-bounds write: check the bound tests (`i <= n` for `i < n`) and that the grid does not cover more than the data; results of a kernel that writes out of bounds cannot be trusted",
			b.Name, b.Elems, b.Type, units.Bytes(b.Bytes()), changed, GuardBytes, b.Elems+int64(first)/size, b.Elems+int64(last)/size)
	}
	return nil
}
