package ui

import (
	"cmp"
	"slices"

	"github.com/mltop/mltop/profiler"
)

// sortCol is a sortable column of the history; desc is its natural order
// (newest first, fastest first).
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

// sortedHistory is the history in the chosen order; ties keep run order.
func (m *Model) sortedHistory() []entry {
	out := slices.Clone(m.history)
	c := sortCols[m.sortCol]
	slices.SortStableFunc(out, func(a, b entry) int {
		r := c.cmp(a, b)
		if m.sortDesc {
			r = -r
		}
		if r == 0 {
			return cmp.Compare(a.id, b.id)
		}
		return r
	})
	return out
}

// selected is the result the bottom panels describe: the highlighted history
// row while the history has focus, else the latest run.
func (m *Model) selected() (entry, bool) {
	if len(m.history) == 0 {
		return entry{}, false
	}
	if m.focus == paneHistory {
		rows := m.sortedHistory()
		return rows[clamp(m.histCur, 0, len(rows)-1)], true
	}
	return m.history[len(m.history)-1], true
}
