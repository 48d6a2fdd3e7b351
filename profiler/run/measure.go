package run

import (
	"slices"
	"time"

	"github.com/mltop/mltop/profiler"
)

// timeIn times launches in mode on b and returns the mode actually used.
func timeIn(b profiler.Backend, ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, profiler.CacheMode, error) {
	if ct, ok := b.(profiler.CacheTimer); ok {
		t, err := ct.TimeCache(ls, reps, mode)
		return t, mode, err
	}
	t, err := b.Time(ls, reps, mode != profiler.CacheHot)
	if mode == profiler.CacheDirty {
		mode = "flush" // whatever this backend's flush leaves: not known to be dirty
	}
	return t, mode, err
}

// phaseClock charges the time since its last mark to a phase.
type phaseClock struct {
	p    *profiler.Phases
	last time.Time
}

func newPhaseClock(p *profiler.Phases) *phaseClock { return &phaseClock{p: p, last: time.Now()} }

// mark adds the time since the previous mark to *dst and restarts.
func (c *phaseClock) mark(dst *float64) {
	now := time.Now()
	*dst += now.Sub(c.last).Seconds()
	c.last = now
}

// withRoundTrip charges what the worker pool's call took beyond the
// worker's own wall time (request and result through the pipes, JSON) to
// the Worker phase.
func withRoundTrip(r profiler.Result, start time.Time) profiler.Result {
	if r.Phases == nil {
		r.Phases = &profiler.Phases{}
	}
	r.Phases.Worker += max(0, time.Since(start).Seconds()-r.WallSeconds)
	return r
}

// slab returns n bytes of b (grown as needed) all set to v. Backends copy
// uploads before returning, so one slab serves every zero (or poison)
// buffer of every spec instead of a fresh allocation per buffer.
func slab(b *[]byte, n int64, v byte) []byte {
	if int64(len(*b)) < n {
		*b = make([]byte, n)
		if v != 0 {
			for i := range *b {
				(*b)[i] = v
			}
		}
	}
	return (*b)[:n]
}

// decodeChecked decodes only the elements of raw (a buffer of spec's type)
// that ref checks in that buffer; the others stay 0. Outputs can be far
// larger than the rows checked (an attention output of 16 MiB against 256
// checked rows), and the slice's untouched pages cost nothing.
func decodeChecked(ref *profiler.Reference, name string, spec profiler.BufferSpec, raw []byte) []float32 {
	return decodeCheckedInto(make([]float32, spec.Elems), ref, name, spec, raw)
}

// decodeCheckedInto is decodeChecked into vals (spec.Elems long), whose
// unchecked elements are left as they are: Verify reads only checked ones.
func decodeCheckedInto(vals []float32, ref *profiler.Reference, name string, spec profiler.BufferSpec, raw []byte) []float32 {
	size := spec.Type.Size()
	for _, c := range ref.Checks {
		if c.Buffer != name {
			continue
		}
		for _, i := range c.Index {
			if i < 0 || int64(i) >= spec.Elems {
				continue // Verify reports the bad index
			}
			spec.Type.Decode(raw[i*size:(i+1)*size], vals[i:i+1])
		}
	}
	return vals
}

// rangeGap: checked elements closer than this many bytes are read in one
// range, so that a few hundred checked rows take tens of copies, not
// hundreds, and a dense check reads the buffer in one piece.
const rangeGap = 64 << 10

// checkedRanges turns the checked element indices of a buffer of n
// elements of size bytes into sorted byte ranges [off, off+len), merging
// ranges less than gap bytes apart. Indices outside the buffer are left
// out (Verify reports them).
func checkedRanges(idx []int, size, n, gap int64) (offs, lens []int64) {
	if len(idx) == 0 {
		return nil, nil
	}
	s := make([]int, 0, len(idx))
	for _, i := range idx {
		if i >= 0 && int64(i) < n {
			s = append(s, i)
		}
	}
	slices.Sort(s)
	for _, i := range s {
		start, end := int64(i)*size, int64(i+1)*size
		if k := len(offs) - 1; k >= 0 && start <= offs[k]+lens[k]+gap {
			lens[k] = max(lens[k], end-offs[k])
			continue
		}
		offs = append(offs, start)
		lens = append(lens, end-start)
	}
	return offs, lens
}
