package run

import (
	"fmt"
	"sort"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// checkedValues are the device's values of the elements a reference
// checks: vals[ci][k] is the value of element ref.Checks[ci].Index[k], and
// elems[ci] the length of that check's buffer (an index outside it is
// reported by verify).
type checkedValues struct {
	vals  [][]float32
	elems []int64
}

func (g checkedValues) verify(ref *profiler.Reference, tol profiler.Tolerance) profiler.Verdict {
	return verifyWith(ref, tol, func(ci int) checkView {
		return checkView{vals: g.vals[ci], aligned: true, elems: g.elems[ci]}
	})
}

// verifyScratch keeps the byte slices of the last full downloads, by
// buffer name, so that checking a 16 MiB output densely twice per spec
// does not allocate (and zero) it each time. Buffers over maxScratchBytes
// are allocated per check.
type verifyScratch struct {
	mu  sync.Mutex
	raw map[string][]byte
}

const maxScratchBytes = 64 << 20

func (v *verifyScratch) bytes(name string, n int64) []byte {
	if n > maxScratchBytes {
		return make([]byte, n)
	}
	if v.raw == nil {
		v.raw = map[string][]byte{}
	}
	if int64(cap(v.raw[name])) < n {
		v.raw[name] = make([]byte, n)
	}
	return v.raw[name][:n]
}

// readChecks downloads what ref checks of each buffer and decodes the
// checked elements only, in the checks' order. Where the backend reads
// parts of a buffer and the checked ranges are under half of it, only
// those ranges cross and are held: a 256-row check of a 268 MB output
// moves and holds 2 MB, not the output (whose host copy, allocated and
// zeroed twice per spec, cost 50–60 ms on a memory-bound sweep).
func (r *Runner) readChecks(ref *profiler.Reference, plan *profiler.Plan, bufs map[string]profiler.Buffer) (checkedValues, error) {
	got := checkedValues{vals: make([][]float32, len(ref.Checks)), elems: make([]int64, len(ref.Checks))}
	done := map[string]bool{}
	r.scratch.mu.Lock()
	defer r.scratch.mu.Unlock()
	for _, c := range ref.Checks {
		if done[c.Buffer] {
			continue
		}
		done[c.Buffer] = true
		spec, ok := plan.Buffer(c.Buffer)
		if !ok {
			return got, fmt.Errorf("reference checks unknown buffer %s", c.Buffer)
		}
		if err := r.readBuffer(ref, spec, bufs[c.Buffer], got); err != nil {
			return got, fmt.Errorf("downloading %s: %w", c.Buffer, err)
		}
	}
	return got, nil
}

// readBuffer fills got's checks of buffer spec.Name. Caller holds r.scratch.mu.
func (r *Runner) readBuffer(ref *profiler.Reference, spec profiler.BufferSpec, buf profiler.Buffer, got checkedValues) error {
	var idx []int
	for _, c := range ref.Checks {
		if c.Buffer == spec.Name {
			idx = append(idx, c.Index...)
		}
	}
	size := int64(spec.Type.Size())
	offs, lens := checkedRanges(idx, size, spec.Elems, rangeGap)
	total := int64(0)
	for _, l := range lens {
		total += l
	}
	var raw []byte
	if rd, ok := r.backend.(profiler.RangeDownloader); ok && 2*total <= spec.Bytes() {
		raw = make([]byte, total)
		dsts := make([][]byte, len(offs))
		at := int64(0)
		for i, l := range lens {
			dsts[i] = raw[at : at+l]
			at += l
		}
		if err := rd.DownloadRanges(buf, offs, dsts); err != nil {
			return err
		}
	} else {
		raw = r.scratch.bytes(spec.Name, spec.Bytes())
		if err := r.backend.Download(buf, raw); err != nil {
			return err
		}
		offs, lens = []int64{0}, []int64{spec.Bytes()}
	}
	at := newRangeIndex(offs, lens)
	for ci, c := range ref.Checks {
		if c.Buffer != spec.Name {
			continue
		}
		vals := make([]float32, len(c.Index))
		for k, i := range c.Index {
			if i < 0 || int64(i) >= spec.Elems {
				continue // verify reports the bad index
			}
			p := at.find(int64(i) * size)
			spec.Type.Decode(raw[p:p+size], vals[k:k+1])
		}
		got.vals[ci], got.elems[ci] = vals, spec.Elems
	}
	return nil
}

// rangeIndex maps a byte offset of a buffer to its place in the ranges
// downloaded back to back (sorted, disjoint, covering every checked
// element). Lookups in increasing order, as checks list their elements,
// walk forward; others search.
type rangeIndex struct {
	offs, lens, base []int64
	cur              int
}

func newRangeIndex(offs, lens []int64) *rangeIndex {
	ri := &rangeIndex{offs: offs, lens: lens, base: make([]int64, len(offs))}
	at := int64(0)
	for i, l := range lens {
		ri.base[i] = at
		at += l
	}
	return ri
}

func (ri *rangeIndex) find(b int64) int64 {
	j := ri.cur
	if j >= len(ri.offs) || b < ri.offs[j] {
		j = sort.Search(len(ri.offs), func(x int) bool { return ri.offs[x]+ri.lens[x] > b })
	}
	for j < len(ri.offs)-1 && b >= ri.offs[j]+ri.lens[j] {
		j++
	}
	ri.cur = j
	return ri.base[j] + b - ri.offs[j]
}
