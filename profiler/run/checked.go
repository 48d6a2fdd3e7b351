package run

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/mltop/mltop/profiler"
)

// checkLayout is where the elements a reference checks lie in what a
// check downloads of each buffer. It is worked out once per reference
// (every spec of a shape shares the reference, and checks it twice), so
// that a check downloads its ranges and decodes runs of consecutive
// elements, with no sorting, merging or searching per element: a 256-row
// check of a 4096-wide output spent 10–20 ms of one core on those.
type checkLayout struct {
	ref  *profiler.Reference
	bufs []bufferLayout
}

// bufferLayout is one buffer's part of a checkLayout.
type bufferLayout struct {
	spec       profiler.BufferSpec
	offs, lens []int64 // the byte ranges downloaded, back to back
	bytes      int64   // their total
	// ranged: the ranges are downloaded (profiler.RangeDownloader); else
	// the whole buffer, in one piece.
	ranged bool
	checks []checkRuns
}

// checkRuns places the elements of ref.Checks[ci] in the download: runs
// of consecutive elements, in the check's order. An element whose index
// lies outside the buffer is in no run (verify reports it).
type checkRuns struct {
	ci   int
	runs []elemRun
}

// elemRun is elements [k, k+n) of a check: consecutive in the buffer, from
// byte at of the download.
type elemRun struct {
	k, n int
	at   int64
}

// newCheckLayout lays out ref's checks over plan's buffers, downloading
// ranges where ranged (the backend reads parts of buffers) and the checked
// ranges are at most half of their buffer: a 256-row check of a 268 MB
// output moves and holds 2 MB, not the output.
func newCheckLayout(ref *profiler.Reference, plan *profiler.Plan, ranged bool) (*checkLayout, error) {
	l := &checkLayout{ref: ref}
	at := map[string]int{} // buffer name → index in l.bufs
	var idx [][]int        // the checked indices of each buffer
	for ci := range ref.Checks {
		c := &ref.Checks[ci]
		if err := checkLengths(c); err != nil {
			return nil, err
		}
		b, ok := at[c.Buffer]
		if !ok {
			spec, found := plan.Buffer(c.Buffer)
			if !found {
				return nil, fmt.Errorf("reference checks unknown buffer %s", c.Buffer)
			}
			b = len(l.bufs)
			at[c.Buffer] = b
			l.bufs = append(l.bufs, bufferLayout{spec: spec})
			idx = append(idx, nil)
		}
		l.bufs[b].checks = append(l.bufs[b].checks, checkRuns{ci: ci})
	}
	for b := range l.bufs {
		// A buffer's one check (the usual case) lends its indices as they are.
		for _, cr := range l.bufs[b].checks {
			if len(l.bufs[b].checks) == 1 {
				idx[b] = ref.Checks[cr.ci].Index
			} else {
				idx[b] = append(idx[b], ref.Checks[cr.ci].Index...)
			}
		}
	}
	for b := range l.bufs {
		bl := &l.bufs[b]
		size := int64(bl.spec.Type.Size())
		bl.offs, bl.lens = checkedRanges(idx[b], size, bl.spec.Elems, rangeGap)
		bl.bytes = 0
		for _, n := range bl.lens {
			bl.bytes += n
		}
		bl.ranged = ranged && 2*bl.bytes <= bl.spec.Bytes()
		if !bl.ranged {
			bl.offs, bl.lens, bl.bytes = []int64{0}, []int64{bl.spec.Bytes()}, bl.spec.Bytes()
		}
		ri := newRangeIndex(bl.offs, bl.lens)
		for j := range bl.checks {
			bl.checks[j].runs = elemRuns(ref.Checks[bl.checks[j].ci].Index, bl.spec, ri)
		}
	}
	return l, nil
}

// checkLengths refuses a check whose wanted values or growth magnitudes
// do not pair up with its indices (comparing it would index past them).
func checkLengths(c *profiler.Check) error {
	if len(c.Want) != len(c.Index) {
		return fmt.Errorf("reference check of %s: %d indices but %d wanted values; a reference must give one value per index", c.Buffer, len(c.Index), len(c.Want))
	}
	if g := c.Growth; g != nil && g.Mag != nil && len(g.Mag) != len(c.Index) {
		return fmt.Errorf("reference check of %s: %d indices but %d growth magnitudes; a reference must give one magnitude per index", c.Buffer, len(c.Index), len(g.Mag))
	}
	return nil
}

// elemRuns groups the in-range elements of index into runs of
// consecutive elements, placed by ri.
func elemRuns(index []int, spec profiler.BufferSpec, ri *rangeIndex) []elemRun {
	size := int64(spec.Type.Size())
	var runs []elemRun
	for k, i := range index {
		if i < 0 || int64(i) >= spec.Elems {
			continue
		}
		// An element after its neighbour in the buffer continues its run:
		// the bytes of neighbours are always in one range (checkedRanges
		// merges ranges that touch).
		if n := len(runs) - 1; n >= 0 && runs[n].k+runs[n].n == k && index[k-1] == i-1 {
			runs[n].n++
			continue
		}
		runs = append(runs, elemRun{k: k, n: 1, at: ri.find(int64(i) * size)})
	}
	return runs
}

// matches says whether l was laid out for ref over buffers like plan's.
func (l *checkLayout) matches(ref *profiler.Reference, plan *profiler.Plan) bool {
	if l == nil || l.ref != ref {
		return false
	}
	for _, bl := range l.bufs {
		spec, ok := plan.Buffer(bl.spec.Name)
		if !ok || spec.Type != bl.spec.Type || spec.Elems != bl.spec.Elems {
			return false
		}
	}
	return true
}

// download reads what bl checks of buf into raw (bl.bytes long).
func (bl *bufferLayout) download(b profiler.Backend, buf profiler.Buffer, raw []byte) error {
	if !bl.ranged {
		return b.Download(buf, raw)
	}
	dsts := make([][]byte, len(bl.offs))
	at := int64(0)
	for i, n := range bl.lens {
		dsts[i] = raw[at : at+n : at+n]
		at += n
	}
	return b.(profiler.RangeDownloader).DownloadRanges(buf, bl.offs, dsts)
}

// decode sets vals[k] for the elements k in [lo, hi) of the check that
// cr places, from raw; elements in no run are left as they are.
func (cr *checkRuns) decode(t profiler.DType, raw []byte, vals []float32, lo, hi int) {
	decodeRuns(cr, int64(t.Size()), raw, vals, lo, hi, t.Decode)
}

// decode64 is decode at float64 precision.
func (cr *checkRuns) decode64(t profiler.DType, raw []byte, vals []float64, lo, hi int) {
	decodeRuns(cr, int64(t.Size()), raw, vals, lo, hi, t.DecodeF64)
}

// decodeRuns is decode with the element decoder dec (float32 or float64
// values), for elements of size bytes.
func decodeRuns[E float32 | float64](cr *checkRuns, size int64, raw []byte, vals []E, lo, hi int, dec func([]byte, []E)) {
	j := sort.Search(len(cr.runs), func(x int) bool { return cr.runs[x].k+cr.runs[x].n > lo })
	for ; j < len(cr.runs) && cr.runs[j].k < hi; j++ {
		r := cr.runs[j]
		a, b := max(r.k, lo), min(r.k+r.n, hi)
		at := r.at + int64(a-r.k)*size
		dec(raw[at:at+int64(b-a)*size], vals[a:b])
	}
}

// outputCheck is one spec's check of its outputs: the download before
// timing and its verdict, and the check after timing, which downloads
// again and compares the bytes: the same bytes give the same verdict, so
// only outputs that changed are decoded and compared again.
type outputCheck struct {
	r     *Runner
	lay   *checkLayout
	tol   profiler.Tolerance
	bufs  map[string]profiler.Buffer
	first [][]byte    // the download before timing, by buffer of lay
	vals  [][]float32 // decoded values, by check
	// vals64 are the decoded values of the checks of Wide buffers (f64,
	// wide integers), by check; nil while there is none.
	vals64 [][]float64
	// verdict is the verdict on first, once compared (done closed).
	verdict profiler.Verdict
	done    chan struct{}
}

// startCheck downloads what ref checks of plan's outputs bufs, laid out
// once per reference (see checkLayout).
func (r *Runner) startCheck(ref *profiler.Reference, plan *profiler.Plan, bufs map[string]profiler.Buffer, tol profiler.Tolerance) (*outputCheck, error) {
	lay, err := r.layout(ref, plan)
	if err != nil {
		return nil, err
	}
	c := &outputCheck{r: r, lay: lay, tol: tol, bufs: bufs, vals: make([][]float32, len(ref.Checks))}
	c.first, err = c.download()
	if err != nil {
		c.release()
		return nil, err
	}
	return c, nil
}

// layout is ref's checkLayout over plan's buffers, made once per
// reference.
func (r *Runner) layout(ref *profiler.Reference, plan *profiler.Plan) (*checkLayout, error) {
	r.mu.Lock()
	for _, l := range r.layouts {
		if l.matches(ref, plan) {
			r.mu.Unlock()
			return l, nil
		}
	}
	r.mu.Unlock()
	_, ranged := r.backend.(profiler.RangeDownloader)
	l, err := newCheckLayout(ref, plan, ranged)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// The last few references' layouts: a sweep checks one shape's specs
	// one after another, and alternates between a few shapes at most.
	if len(r.layouts) >= keptLayouts {
		r.layouts = r.layouts[1:]
	}
	r.layouts = append(r.layouts, l)
	return l, nil
}

// keptLayouts is how many references' layouts a runner keeps (each holds
// its reference).
const keptLayouts = 8

// download reads what the check needs of each buffer into host slices
// from the runner's pool.
func (c *outputCheck) download() ([][]byte, error) {
	raws := make([][]byte, len(c.lay.bufs))
	for b := range c.lay.bufs {
		bl := &c.lay.bufs[b]
		raws[b] = c.r.hostBytes.get(int(bl.bytes))
		if err := bl.download(c.r.backend, c.bufs[bl.spec.Name], raws[b]); err != nil {
			for _, raw := range raws {
				c.r.hostBytes.put(raw)
			}
			return nil, fmt.Errorf("downloading %s: %w", bl.spec.Name, err)
		}
	}
	return raws, nil
}

// compare decodes raws (a download) and compares them with the reference.
func (c *outputCheck) compare(raws [][]byte) profiler.Verdict {
	ref := c.lay.ref
	views := make([]checkView, len(ref.Checks))
	for b := range c.lay.bufs {
		bl := &c.lay.bufs[b]
		for j := range bl.checks {
			cr := &bl.checks[j]
			n := len(ref.Checks[cr.ci].Index)
			raw, t := raws[b], bl.spec.Type
			if t.Wide() { // f64 and wide integers: compared at float64 precision
				if c.vals64 == nil {
					c.vals64 = make([][]float64, len(ref.Checks))
				}
				if c.vals64[cr.ci] == nil {
					c.vals64[cr.ci] = make([]float64, n)
				}
				vals := c.vals64[cr.ci]
				views[cr.ci] = checkView{vals64: vals, aligned: true, elems: bl.spec.Elems,
					fill: func(lo, hi int) { cr.decode64(t, raw, vals, lo, hi) }}
				continue
			}
			if c.vals[cr.ci] == nil {
				c.vals[cr.ci] = c.r.hostVals.get(n)
			}
			vals := c.vals[cr.ci]
			views[cr.ci] = checkView{vals: vals, aligned: true, elems: bl.spec.Elems,
				fill: func(lo, hi int) { cr.decode(t, raw, vals, lo, hi) }}
		}
	}
	return verifyWith(ref, c.tol, func(ci int) checkView { return views[ci] })
}

// compareFirst compares the download before timing on a goroutine, and
// returns a function that waits for its verdict: the GPU can warm up
// meanwhile (warm-up launches do not depend on the verdict).
func (c *outputCheck) compareFirst() func() profiler.Verdict {
	c.done = make(chan struct{})
	go func() {
		defer close(c.done)
		c.verdict = c.compare(c.first)
	}()
	return func() profiler.Verdict {
		<-c.done
		return c.verdict
	}
}

// again checks the outputs after timing: downloaded again, and decoded and
// compared only where they differ from the download before timing (the
// same bytes give the same verdict). Call it after compareFirst's verdict.
func (c *outputCheck) again() (profiler.Verdict, error) {
	raws, err := c.download()
	if err != nil {
		return profiler.Verdict{}, err
	}
	defer func() {
		for _, raw := range raws {
			c.r.hostBytes.put(raw)
		}
	}()
	same := true
	for b := range raws {
		same = same && bytes.Equal(raws[b], c.first[b])
	}
	if same {
		return c.verdict, nil
	}
	return c.compare(raws), nil
}

// release returns the check's host slices to the runner's pool, once the
// comparison that reads them is over (a spec cut short by a panic may not
// have waited for it).
func (c *outputCheck) release() {
	if c.done != nil {
		<-c.done
	}
	for _, raw := range c.first {
		c.r.hostBytes.put(raw)
	}
	for _, v := range c.vals {
		c.r.hostVals.put(v)
	}
	c.first, c.vals, c.vals64 = nil, nil, nil
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
