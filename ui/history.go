package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/compare"
	"github.com/mltop/mltop/profiler/units"
)

// entry is one row of the history.
type entry struct {
	id  int
	res profiler.Result
	via string // what started the run: r, sweep, yaml, reload, event
}

// history is every run of the session: sortable, with a cursor the panels
// follow while it has focus, and an optional baseline that the Δthr base
// column compares every run of the same kernel and shape with.
type history struct {
	th       theme
	entries  []entry // in run order; ids are 1, 2, …
	cur      int     // cursor in the sorted rows
	sortCol  int
	sortDesc bool
	base     int // id of the pinned baseline, 0 for none
	cmps     *comparisons
}

func newHistory(th theme) history {
	return history{th: th, sortDesc: true, cmps: &comparisons{done: map[[2]int]compare.Result{}}}
}

func (h history) len() int { return len(h.entries) }

// add appends a result started by via and returns its entry; resetCursor
// puts the cursor back on the first row (when the user is not browsing).
func (h *history) add(r profiler.Result, resetCursor bool, via string) entry {
	was, browsing := h.current()
	e := entry{id: len(h.entries) + 1, res: r, via: via}
	h.entries = append(h.entries, e)
	if resetCursor {
		h.cur = 0
		return e
	}
	if browsing { // the cursor stays on the run it was on
		h.cur = slices.IndexFunc(h.sorted(), func(x entry) bool { return x.id == was.id })
	}
	return e
}

// Pin makes run id the baseline; 0 unpins.
func (h *history) Pin(id int) { h.base = id }

// baseline is the pinned run.
func (h history) baseline() (entry, bool) {
	if h.base < 1 || h.base > len(h.entries) {
		return entry{}, false
	}
	return h.entries[h.base-1], true
}

// delta is r's throughput against base's as "+12.3%", or "" when they are
// not comparable (another kernel, shape or unit, or no throughput).
func delta(r, base profiler.Result) string {
	if r.Spec.Kernel != base.Spec.Kernel || r.Spec.ShapeKey() != base.Spec.ShapeKey() {
		return ""
	}
	a, okA := throughput(r)
	b, okB := throughput(base)
	// GFLOP/s and TFLOP/s are one kind in two scales: compare in FLOP/s.
	if !okA || !okB || (a.name == "GB/s") != (b.name == "GB/s") {
		return ""
	}
	va, vb := throughputKey(r), throughputKey(base)
	if vb <= 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", (va/vb-1)*100)
}

// sameShape says whether two runs can be compared: one kernel at one
// shape (knobs may differ: that is what they compare), both measured.
func sameShape(r, base profiler.Result) bool {
	return r.Spec.Kernel == base.Spec.Kernel && r.Spec.ShapeKey() == base.Spec.ShapeKey() &&
		r.Stats.N > 0 && base.Stats.N > 0 && r.Stats.Median > 0 && base.Stats.Median > 0
}

// comparisons remembers compare.Results by (base id, run id): the
// bootstrap is deterministic and runs never change, so each pair is
// computed once however often the screen is drawn. Shared by the copies
// of the model bubbletea makes.
type comparisons struct {
	mu   sync.Mutex
	done map[[2]int]compare.Result
}

// compare is run now against base: the change of the median time with
// its confidence interval and verdict; false when they are not comparable.
func (h history) compare(base, now entry) (compare.Result, bool) {
	if !sameShape(now.res, base.res) {
		return compare.Result{}, false
	}
	if h.cmps == nil {
		return compare.Results(base.res, now.res, compare.DefaultOptions()), true
	}
	h.cmps.mu.Lock()
	defer h.cmps.mu.Unlock()
	k := [2]int{base.id, now.id}
	if r, ok := h.cmps.done[k]; ok {
		return r, true
	}
	r := compare.Results(base.res, now.res, compare.DefaultOptions())
	h.cmps.done[k] = r
	return r, true
}

// noiseMark follows a Δ that is not a sure change: "≈" within noise (or
// below the threshold), "?" when the runs kept nothing to judge by.
func noiseMark(c compare.Result) string {
	switch c.Verdict {
	case compare.Same:
		return " ≈"
	case compare.Unknown:
		return " ?"
	}
	return ""
}

// verdictMark is a run's correctness in one symbol: ✓ pass, ✗ fail, ·
// not verified.
func verdictMark(r profiler.Result) string {
	switch {
	case r.Verdict == nil:
		return "·"
	case r.Verdict.Pass && r.Verdict.NaNInf == 0:
		return "✓"
	}
	return "✗"
}

// previous is the newest run of e's kernel and shape before e that has a
// throughput: what a rerun compares with.
func (h history) previous(e entry) (entry, bool) {
	for i := min(e.id-1, len(h.entries)) - 1; i >= 0; i-- {
		p := h.entries[i]
		if _, ok := throughput(p.res); ok && p.res.Spec.Kernel == e.res.Spec.Kernel &&
			p.res.Spec.ShapeKey() == e.res.Spec.ShapeKey() { // a Δ needs both
			return p, true
		}
	}
	return entry{}, false
}

// latest is the newest run.
func (h history) latest() (entry, bool) {
	if len(h.entries) == 0 {
		return entry{}, false
	}
	return h.entries[len(h.entries)-1], true
}

// current is the run under the cursor.
func (h history) current() (entry, bool) {
	rows := h.sorted()
	if len(rows) == 0 {
		return entry{}, false
	}
	return rows[clamp(h.cur, 0, len(rows)-1)], true
}

// Update moves the cursor and changes the order.
func (h history) Update(k tea.KeyPressMsg, keys keyMap) history {
	switch {
	case key.Matches(k, keys.Up):
		h.cur = clamp(h.cur-1, 0, max(0, len(h.entries)-1))
	case key.Matches(k, keys.Down):
		h.cur = clamp(h.cur+1, 0, max(0, len(h.entries)-1))
	case key.Matches(k, keys.Sort):
		h.sortCol = (h.sortCol + 1) % len(sortCols)
		h.sortDesc = sortCols[h.sortCol].desc
		h.cur = 0
	case key.Matches(k, keys.Reverse):
		h.sortDesc = !h.sortDesc
		h.cur = 0
	}
	return h
}

// sortColumn is a sortable column of the history; desc is its natural
// order (newest first, fastest first).
type sortColumn struct {
	name string
	desc bool
	cmp  func(a, b entry) int
}

var sortCols = []sortColumn{
	{"#", true, func(a, b entry) int { return cmp.Compare(a.id, b.id) }},
	{"median", false, func(a, b entry) int { return cmpMissingLast(a.res.Stats.Median, b.res.Stats.Median) }},
	{"throughput", true, func(a, b entry) int {
		ua, ub := throughputKey(a.res), throughputKey(b.res)
		return cmp.Compare(ua, ub)
	}},
	{"status", false, func(a, b entry) int { return cmp.Compare(a.res.Status, b.res.Status) }},
	{"max err", false, func(a, b entry) int { return cmpMissingLast(maxAbs(a.res), maxAbs(b.res)) }},
	{"kernel", false, func(a, b entry) int { return cmp.Compare(a.res.Spec.Kernel, b.res.Spec.Kernel) }},
}

// throughputKey compares throughput in a common unit (bytes/s or FLOP/s
// both in SI), so rows of one family sort correctly.
func throughputKey(r profiler.Result) float64 {
	m, ok := throughput(r)
	if !ok {
		return -1
	}
	switch m.name {
	case "TFLOP/s":
		return m.value * 1e12
	case "GFLOP/s":
		return m.value * 1e9
	}
	return m.value * 1e9
}

func maxAbs(r profiler.Result) float64 {
	if r.Verdict == nil {
		return 0
	}
	return r.Verdict.MaxAbsErr
}

// cmpMissingLast orders zeros (not measured) after every real value.
func cmpMissingLast(a, b float64) int {
	switch {
	case a == 0 && b == 0:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	}
	return cmp.Compare(a, b)
}

// sorted is the history in the chosen order; ties keep run order.
func (h history) sorted() []entry {
	out := slices.Clone(h.entries)
	c := sortCols[h.sortCol]
	slices.SortStableFunc(out, func(a, b entry) int {
		r := c.cmp(a, b)
		if h.sortDesc {
			r = -r
		}
		if r == 0 {
			return cmp.Compare(a.id, b.id)
		}
		return r
	})
	return out
}

func (h history) title() string {
	c := sortCols[h.sortCol]
	dir := "▲"
	if h.sortDesc {
		dir = "▼"
	}
	t := fmt.Sprintf("history · %s · sort %s %s", plural(len(h.entries), "run"), c.name, dir)
	if b, ok := h.baseline(); ok {
		t += fmt.Sprintf(" · baseline #%d", b.id)
	}
	return t
}

type histCol struct {
	name     string
	w        int
	right    bool
	optional bool // dropped on narrow terminals
}

var histCols = []histCol{{"#", 4, true, false}, {"via", 6, false, true}, {"kernel", 12, false, false}, {"dtype", 5, false, true}, {"status", 16, false, false}, {"median", 9, true, false}, {"throughput", 14, true, false}, {"max err", 9, true, true}}

// deltaCol is shown while a baseline is pinned.
var deltaCol = histCol{"Δthr base", 10, true, false}

// cell is a history column's value for one run.
func (h history) cell(name string, e entry) string {
	r := e.res
	switch name {
	case "#":
		if e.id == h.base {
			return "◆" + strconv.Itoa(e.id)
		}
		return strconv.Itoa(e.id)
	case "via":
		if e.via != "" {
			return e.via
		}
	case "kernel":
		return r.Spec.Kernel
	case "dtype":
		return string(r.Spec.DType)
	case "status":
		if r.Status != profiler.StatusOK {
			return "✗ " + string(r.Status)
		}
		return string(r.Status)
	case "median":
		if r.Stats.N > 0 {
			return units.Nanos(r.Stats.Median)
		}
	case "throughput":
		return fmtThroughput(r)
	case "max err":
		if r.Verdict != nil {
			return fmtErr(r.Verdict.MaxAbsErr)
		}
	case deltaCol.name:
		if b, ok := h.baseline(); ok && b.id != e.id {
			if d := delta(r, b.res); d != "" {
				c, _ := h.compare(b, e)
				return d + noiseMark(c)
			}
		} else if ok {
			return "base"
		}
	}
	return "—"
}

// View is the history boxed to w×height.
func (h history) View(w, height int, focused bool) []string {
	iw, ih := w-2, height-2
	if len(h.entries) == 0 {
		return box(h.th, h.title(), []string{h.th.dim.Render("runs appear here · o sorts · p pins a baseline · e exports CSV")}, w, height, focused)
	}
	var cols []histCol
	for _, c := range histCols {
		if iw >= 100 || !c.optional {
			cols = append(cols, c)
		}
	}
	if h.base > 0 {
		cols = append(cols, deltaCol)
	}
	row := func(cells []string) string {
		var b strings.Builder
		for i, c := range cols {
			if c.right {
				b.WriteString(padLeft(cells[i], c.w))
			} else {
				b.WriteString(fit(cells[i], c.w))
			}
			b.WriteString(" ")
		}
		b.WriteString(cells[len(cols)])
		return fit(b.String(), iw)
	}
	hdr := make([]string, len(cols)+1)
	for i, c := range cols {
		hdr[i] = c.name
		if c.name == sortCols[h.sortCol].name {
			if h.sortDesc {
				hdr[i] += "▼"
			} else {
				hdr[i] += "▲"
			}
		}
	}
	hdr[len(cols)] = "knobs · dims"
	out := []string{h.th.title.Render(row(hdr))}
	rows := h.sorted()
	cur := clamp(h.cur, 0, len(rows)-1)
	c := 0
	if focused {
		c = cur
	}
	start, end := window(len(rows), c, max(1, ih-1))
	var lines []string
	for i := start; i < end; i++ {
		e := rows[i]
		cells := make([]string, 0, len(cols)+1)
		for _, c := range cols {
			cells = append(cells, h.cell(c.name, e))
		}
		cells = append(cells, knobString(e.res.Spec)+" · "+dimString(e.res.Spec))
		line := row(cells)
		switch {
		case focused && i == cur:
			line = h.th.sel.Render("▸" + ansi.Cut(line, 1, iw))
		case e.res.Status != profiler.StatusOK:
			line = h.th.bad.Render(line)
		}
		lines = append(lines, line)
	}
	out = append(out, scrollMarks(h.th, lines, start, end, len(rows))...)
	return box(h.th, h.title(), out, w, height, focused)
}
