package cli

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/compare"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/units"
)

// Verdicts of one spec in mltop compare.
const (
	verdictFaster = string(compare.Faster)
	verdictSlower = string(compare.Slower)
	verdictSame   = string(compare.Same)
	// verdictNoCI: one side has no confidence interval (fewer than 6
	// samples), so the change cannot be told from noise; it never fails
	// the gate.
	verdictNoCI = "no CI"
)

// compareRow is one spec measured in both files. Delta, Lo and Hi are
// relative changes of the median time, new/old − 1 (+0.05 is 5 % slower).
type compareRow struct {
	Spec     profiler.Spec
	Cache    profiler.CacheMode
	Old, New float64 // medians, ns
	Delta    float64
	Lo, Hi   float64 // the interval of Delta (equal to Delta without CIs)
	HasCI    bool
	Verdict  string
	// Outpaced: --race stopped the old or the new row early (stop_reason
	// outpaced): its median is good only to its interval, and it stays
	// out of the geometric means unless asked (--outpaced-in-mean).
	Outpaced bool
}

// kernelMean is the geometric mean of new/old − 1 over one kernel's rows.
type kernelMean struct {
	Kernel string
	Specs  int
	Delta  float64
	Slower int // rows whose verdict is slower
	Faster int
	// LeftOut: outpaced rows not in the mean (Specs counts those in it)
	LeftOut int
}

// comparison is mltop compare's result.
type comparison struct {
	Rows       []compareRow
	Kernels    []kernelMean
	OnlyOld    []string // specs (with cache mode) only the old file has
	OnlyNew    []string
	Unmeasured []string // in both files, but without a median in one of them
	Threshold  float64  // relative, 0.02 is 2 %
	// OutpacedInMean: the means count the outpaced rows too.
	OutpacedInMean bool
}

// compareKey matches rows across files: the spec and the cache mode.
func compareKey(r profiler.Result) string { return r.Spec.Key() + "|cache=" + string(r.Cache) }

func compareLabel(r profiler.Result) string {
	if r.Cache == "" {
		return r.Spec.String()
	}
	return r.Spec.String() + " [" + string(r.Cache) + "]"
}

// hasMedian says whether a row carries a usable median.
func hasMedian(r profiler.Result) bool { return r.Stats.N > 0 && r.Stats.Median > 0 }

// compareResults matches old and new by spec and cache mode and compares
// the medians of the specs both measured. Rows of one spec repeated in a
// file (a merged or resumed CSV) count once: the last row.
func compareResults(old, new []profiler.Result, threshold float64) comparison {
	c := comparison{Threshold: threshold}
	newAt := map[string]profiler.Result{}
	for _, r := range new {
		newAt[compareKey(r)] = r
	}
	oldAt := map[string]profiler.Result{}
	var order []string
	for _, r := range old {
		k := compareKey(r)
		if _, seen := oldAt[k]; !seen {
			order = append(order, k)
		}
		oldAt[k] = r
	}
	for _, k := range order {
		o := oldAt[k]
		n, ok := newAt[k]
		switch {
		case !ok:
			c.OnlyOld = append(c.OnlyOld, compareLabel(o))
		case !hasMedian(o) || !hasMedian(n):
			c.Unmeasured = append(c.Unmeasured, fmt.Sprintf("%s (old %s, new %s)", compareLabel(o), o.Status, n.Status))
		default:
			c.Rows = append(c.Rows, compareOne(o, n, threshold))
		}
	}
	seen := map[string]bool{}
	for _, r := range new {
		k := compareKey(r)
		if _, ok := oldAt[k]; !ok && !seen[k] {
			seen[k] = true
			c.OnlyNew = append(c.OnlyNew, compareLabel(r))
		}
	}
	c.Kernels = kernelMeans(c.Rows, false)
	return c
}

// compareOne compares two rows of one spec with the comparison the
// session and watch use (profiler/compare). A CSV keeps no samples, so
// the interval comes from the two medians' 95 % confidence intervals:
// new's low end over old's high end up to new's high end over old's low
// end. That is every ratio the two intervals allow, wider than the
// interval of a difference (conservative): a change it calls is one
// neither run's noise explains.
func compareOne(o, n profiler.Result, threshold float64) compareRow {
	opt := compare.DefaultOptions()
	opt.Threshold = threshold
	c := compare.Results(o, n, opt)
	row := compareRow{Spec: o.Spec, Cache: o.Cache, Old: o.Stats.Median, New: n.Stats.Median, Delta: c.Ratio - 1,
		Outpaced: o.StopReason == profiler.StopOutpaced || n.StopReason == profiler.StopOutpaced}
	row.Lo, row.Hi = row.Delta, row.Delta
	row.HasCI = c.Method != compare.MethodNone
	if row.HasCI {
		row.Lo, row.Hi = c.Lo-1, c.Hi-1
	}
	switch {
	case !row.HasCI && math.Abs(row.Delta) < threshold:
		row.Verdict = verdictSame
	case !row.HasCI:
		row.Verdict = verdictNoCI
	default:
		row.Verdict = string(c.Verdict)
	}
	return row
}

// kernelMeans is the geometric mean of the ratios per kernel, kernels in
// the order they first appear; outpaced rows count only withOutpaced
// (a kernel whose every row is outpaced has Specs 0 and no mean).
func kernelMeans(rows []compareRow, withOutpaced bool) []kernelMean {
	var out []kernelMean
	sum := map[string]float64{}
	at := map[string]int{}
	for _, r := range rows {
		i, ok := at[r.Spec.Kernel]
		if !ok {
			i = len(out)
			at[r.Spec.Kernel] = i
			out = append(out, kernelMean{Kernel: r.Spec.Kernel})
		}
		switch r.Verdict {
		case verdictSlower:
			out[i].Slower++
		case verdictFaster:
			out[i].Faster++
		}
		if r.Outpaced && !withOutpaced {
			out[i].LeftOut++
			continue
		}
		out[i].Specs++
		sum[r.Spec.Kernel] += math.Log1p(r.Delta)
	}
	for i := range out {
		if out[i].Specs > 0 {
			out[i].Delta = math.Expm1(sum[out[i].Kernel] / float64(out[i].Specs))
		}
	}
	return out
}

// slower counts the rows whose verdict is slower: the gate fails on any.
func (c comparison) slower() int {
	n := 0
	for _, r := range c.Rows {
		if r.Verdict == verdictSlower {
			n++
		}
	}
	return n
}

// counts is "3 slower, 1 faster, 18 same" (verdicts present only).
func (c comparison) counts() string {
	n := map[string]int{}
	for _, r := range c.Rows {
		n[r.Verdict]++
	}
	var parts []string
	for _, v := range []string{verdictSlower, verdictFaster, verdictSame, verdictNoCI} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

// pctSigned is a relative change as "+5.0%" / "-3.2%".
func pctSigned(d float64) string { return fmt.Sprintf("%+.1f%%", 100*d) }

// intervalText is "[-3.0%, +8.1%]", or "-" without a CI.
func intervalText(r compareRow) string {
	if !r.HasCI {
		return "-"
	}
	return "[" + pctSigned(r.Lo) + ", " + pctSigned(r.Hi) + "]"
}

// compareTimes is how the table prints its old and new times: µs with
// one decimal, or, when any of them is 10 ms or more, all in ms with three
// (one unit down the columns: "9131.9 µs" above "10.82 ms" read as the
// larger).
func compareTimes(rows []compareRow) func(float64) string {
	for _, r := range rows {
		if r.Old >= 1e7 || r.New >= 1e7 {
			return func(ns float64) string { return fmt.Sprintf("%.3f ms", ns/1e6) }
		}
	}
	return units.Micros
}

// compareCells are one row's cells in the table and the Markdown, its
// times printed by t (compareTimes).
func compareCells(r compareRow, t func(float64) string) []string {
	label := r.Spec.String()
	if r.Cache != "" {
		label += " [" + string(r.Cache) + "]"
	}
	verdict := r.Verdict
	if r.Outpaced {
		verdict += outpacedMark
	}
	return []string{label, t(r.Old), t(r.New), pctSigned(r.Delta), intervalText(r), verdict}
}

// outpacedMark follows the verdict of an outpaced row (the table's mark).
const outpacedMark = sink.OutpacedMark

// outpacedNote is the footnote under a comparison with outpaced rows.
func (c comparison) outpacedNote() string {
	n := 0
	for _, r := range c.Rows {
		if r.Outpaced {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	if c.OutpacedInMean {
		return fmt.Sprintf("%s outpaced (--race) in one file: median good only to its interval; counted in the geometric means (--outpaced-in-mean)", outpacedMark)
	}
	return fmt.Sprintf("%s outpaced (--race) in one file: median good only to its interval; left out of the geometric means (%s; --outpaced-in-mean counts them)", outpacedMark, profiler.Plural(n, "spec", "specs"))
}

// meanText is a kernel's geometric mean over its specs, with the
// outpaced ones left out: "+2.0% over 3 specs, 1 outpaced left out".
func meanText(k kernelMean) string {
	text := "no spec measured to its precision (every one outpaced)"
	if k.Specs > 0 {
		text = pctSigned(k.Delta) + " over " + profiler.Plural(k.Specs, "spec", "specs")
	}
	if k.LeftOut > 0 {
		text += fmt.Sprintf(", %d outpaced left out", k.LeftOut)
	}
	return text
}

var compareHeader = []string{"spec", "old median", "new median", "Δ", "95% interval", "verdict"}

// sortRows puts the slowest changes first, so a gate's failures lead.
func sortRows(rows []compareRow) []compareRow {
	rank := map[string]int{verdictSlower: 0, verdictFaster: 1, verdictNoCI: 2, verdictSame: 3}
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b compareRow) int {
		if d := rank[a.Verdict] - rank[b.Verdict]; d != 0 {
			return d
		}
		switch {
		case a.Delta > b.Delta:
			return -1
		case a.Delta < b.Delta:
			return 1
		}
		return 0
	})
	return out
}
