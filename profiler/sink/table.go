package sink

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// Table prints a readable row per Result as it finishes. By default (a
// pipe, a file) nothing is cut: the spec column holds the whole spec. On a
// terminal (Fit) rows fit its width, and the spec column shows first what
// differs between the sweep's specs; what all of them share is printed
// once above the header.
type Table struct {
	w      io.Writer
	header bool
	width  int                        // terminal width; 0: never truncate
	vary   map[string]map[string]bool // per kernel, the spec parts that differ (Fit)
	shared map[string]bool            // parts every spec has (Fit): printed once
	specW  int                        // spec column width
	common string                     // parts every spec shares (Fit), printed once
	cols   []tableCol
	// reason is the last failure reason printed, repeats how many rows
	// since had the same one: it is printed once, then counted.
	reason  string
	repeats int
	// outpaced: a row stopped early under --race (StatusCell's "ok*"):
	// Close prints OutpacedFootnote.
	outpaced bool
}

type tableCol struct {
	head  string
	width int
	drop  int // order in which columns go when the terminal is narrow (0: never)
	val   func(r profiler.Result) string
}

// NewTable writes to w.
func NewTable(w io.Writer) *Table { return &Table{w: w, specW: 64, cols: tableCols()} }

func tableCols() []tableCol {
	stat := func(f func(profiler.Result) string) func(profiler.Result) string {
		return func(r profiler.Result) string {
			if r.Stats.N == 0 {
				return "-"
			}
			return f(r)
		}
	}
	return []tableCol{
		// Times and rates carry their unit per cell, so a 40 ms CPU run and
		// a 4 µs GPU run both read at a glance and a slow rate is not 0.0.
		{"median", 9, 0, stat(func(r profiler.Result) string { return units.Nanos(r.Stats.Median) })},
		{"p10–p90", 17, 1, stat(func(r profiler.Result) string {
			return units.Nanos(r.Stats.P10) + "–" + units.Nanos(r.Stats.P90)
		})},
		{"cv%", 6, 0, stat(func(r profiler.Result) string { return fmt.Sprintf("%.2f", 100*r.Stats.CV) })},
		{"FLOP/s", 12, 5, stat(func(r profiler.Result) string { return units.Rate(r.TFLOPS*1e12, "FLOP/s") })},
		{"bytes/s", 10, 4, stat(func(r profiler.Result) string { return units.Rate(r.GBps*1e9, "B/s") })},
		{"TGM B", 8, 3, func(r profiler.Result) string { tgm, _ := r.MaxTGM(); return fmt.Sprint(tgm) }},
		{"occ", 5, 2, func(r profiler.Result) string {
			if o, ok := r.MinOccupancy(); ok {
				return fmt.Sprint(o.GroupsPerUnit)
			}
			return "n/a"
		}},
		{"max rel", 9, 6, func(r profiler.Result) string {
			if r.Verdict == nil {
				return "-"
			}
			return fmt.Sprintf("%.2e", r.Verdict.MaxRelErr)
		}},
		// What the verdict rests on: a max rel of 3e-02 can pass (the bound
		// grows with the reduction length and the terms' size); err/bound
		// below 1 passes.
		{"err/bound", 9, 7, func(r profiler.Result) string { return ErrBound(r.Verdict) }},
		{"status", -13, 0, StatusCell},
	}
}

// OutpacedMark follows the status of a row that --race stopped early
// (stop_reason outpaced), whose median is good only to its interval.
const OutpacedMark = "*"

// OutpacedFootnote is the line under a table with an OutpacedMark.
const OutpacedFootnote = "* outpaced (--race): stopped early as clearly slower than the best of its shape; its median is good only to its interval"

// StatusCell is a row's status, "ok*" (OutpacedMark) for a row --race
// stopped early.
func StatusCell(r profiler.Result) string {
	if outpaced(r) {
		return string(r.Status) + OutpacedMark
	}
	return string(r.Status)
}

func outpaced(r profiler.Result) bool {
	return r.Status == profiler.StatusOK && r.StopReason == profiler.StopOutpaced
}

// ErrBound is a verdict's worst |got−want| over its bound, the figure the
// pass or fail rests on (at most 1 passes): "0.31", "3.2e-04", "inf" for
// a NaN or Inf output, "-" when nothing was checked.
func ErrBound(v *profiler.Verdict) string {
	switch {
	case v == nil || v.Unchecked || v.Checked == 0 && v.WorstRatio == 0:
		return "-"
	case math.IsInf(v.WorstRatio, 1) || math.IsNaN(v.WorstRatio):
		return "inf"
	case v.WorstRatio == 0:
		return "0"
	case v.WorstRatio >= 0.01 && v.WorstRatio < 100:
		return fmt.Sprintf("%.2f", v.WorstRatio)
	}
	return fmt.Sprintf("%.1e", v.WorstRatio)
}

// Fit makes rows fit a terminal of width columns. specs are the sweep's
// specs: the parts on which they differ are shown first in the spec column,
// the parts they share once above the header.
func (t *Table) Fit(width int, specs []profiler.Spec) {
	if width <= 0 {
		return
	}
	t.width = width
	t.vary = Varying(specs)
	t.shared = commonParts(specs)
	// The spec column needs at least the differing parts of every row and
	// takes at most the longest text; the least needed columns go first.
	need, longest := 12, 12
	for _, s := range specs {
		text := t.specText(s)
		first, _, _ := strings.Cut(text, " · ")
		need = max(need, len([]rune(first)))
		longest = max(longest, len([]rune(text)))
	}
	t.specW = need
	for t.rowWidth() > width {
		worst := -1
		for i, c := range t.cols {
			if c.drop > 0 && (worst < 0 || c.drop < t.cols[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		t.cols = append(t.cols[:worst], t.cols[worst+1:]...)
	}
	t.specW = max(min(longest, need+width-t.rowWidth()), 8)
	t.common = Common(specs)
}

// Widen sizes the spec column (when rows are not fitted to a terminal) to
// the longest of specs, so every row's columns line up under the header
// however long its spec (a flag such as causal makes some longer).
func (t *Table) Widen(specs []profiler.Spec) {
	if t.width > 0 {
		return
	}
	w := 12
	for _, s := range specs {
		w = max(w, len([]rune(s.String())))
	}
	t.specW = w
}

func (t *Table) rowWidth() int {
	n := t.specW
	for _, c := range t.cols {
		n += 1 + abs(c.width)
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// specText is the spec column's text: all of it, or on a terminal first
// the parts that differ between the rows of its kernel, then " · " and the
// rest, without the parts every row shares (printed once above the header).
// Cut to the column, the differing parts are what stays.
func (t *Table) specText(s profiler.Spec) string {
	if t.vary == nil {
		return s.String()
	}
	vary := t.vary[s.Kernel]
	var first, rest []string
	for _, p := range SpecParts(s) {
		switch {
		case vary[p.Key]:
			first = append(first, p.Text)
		case !t.shared[p.Text]:
			rest = append(rest, p.Text)
		}
	}
	if len(first) == 0 {
		return s.String()
	}
	text := strings.Join(first, " ")
	if len(rest) > 0 {
		text += " · " + strings.Join(rest, " ")
	}
	return text
}

// Write prints one row (and the header before the first).
func (t *Table) Write(r profiler.Result) error {
	if !t.header {
		if t.common != "" {
			fmt.Fprintf(t.w, "%s\n", Clip("every row: "+t.common, max(t.width, 20)))
		}
		t.line("spec", func(c tableCol) string { return c.head })
		t.header = true
	}
	spec := t.specText(r.Spec)
	if t.width > 0 {
		spec = Clip(spec, t.specW)
	} else {
		// A spec longer than Widen was told of widens the column for the
		// rows from here on rather than pushing only its own row out.
		t.specW = max(t.specW, len([]rune(spec)))
	}
	msg := ""
	if r.Status != profiler.StatusOK && r.Error != "" {
		msg = profiler.OneLine(r.Reason())
		if t.width > 0 {
			msg = Clip(msg, max(t.width-6, 20))
		}
	}
	if msg == "" || msg != t.reason {
		t.flushRepeats()
	}
	err := t.line(spec, func(c tableCol) string { return c.val(r) })
	t.outpaced = t.outpaced || outpaced(r)
	switch {
	case msg == "":
	case msg == t.reason:
		t.repeats++
	default:
		fmt.Fprintf(t.w, "    └ %s\n", msg)
		t.reason = msg
	}
	return err
}

// flushRepeats says how many rows since the last printed reason had the
// same one, instead of printing it under each.
func (t *Table) flushRepeats() {
	switch {
	case t.repeats == 1:
		fmt.Fprintln(t.w, "    └ the same for the row above")
	case t.repeats > 1:
		fmt.Fprintf(t.w, "    └ the same for the %d rows above\n", t.repeats)
	}
	t.reason, t.repeats = "", 0
}

func (t *Table) line(spec string, val func(tableCol) string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", t.specW, spec)
	for _, c := range t.cols {
		fmt.Fprintf(&b, " %*s", c.width, val(c))
	}
	b.WriteString("\n")
	_, err := io.WriteString(t.w, b.String())
	return err
}

// Close says how often the last reason repeated, and what the mark of an
// outpaced row means when one was printed.
func (t *Table) Close() error {
	t.flushRepeats()
	if t.outpaced {
		fmt.Fprintln(t.w, OutpacedFootnote)
	}
	return nil
}

// SpecPart is one piece of a spec's one-line form: the kernel, the dtype, a
// flag, a knob or a dim. Key names what it sets ("kernel", "dtype", "BQ").
type SpecPart struct{ Key, Text string }

// SpecParts splits a spec as Spec.String prints it (without the "|").
func SpecParts(s profiler.Spec) []SpecPart {
	words := strings.Fields(s.String())
	parts := make([]SpecPart, 0, len(words))
	for i, w := range words {
		switch {
		case w == "|":
			continue
		case i == 0:
			parts = append(parts, SpecPart{"kernel", w})
		case i == 1:
			parts = append(parts, SpecPart{"dtype", w})
		default:
			k, _, ok := strings.Cut(w, "=")
			if !ok {
				parts = append(parts, SpecPart{"flag:" + w, w}) // a flag that is on
				continue
			}
			parts = append(parts, SpecPart{k, w})
		}
	}
	return parts
}

// Varying names, per kernel, the spec parts that differ between that
// kernel's specs (a part set in some and not in others differs too);
// "kernel" differs when there are several kernels.
func Varying(specs []profiler.Spec) map[string]map[string]bool {
	byKernel := map[string][]profiler.Spec{}
	for _, s := range specs {
		byKernel[s.Kernel] = append(byKernel[s.Kernel], s)
	}
	out := map[string]map[string]bool{}
	for k, group := range byKernel {
		vals := map[string]map[string]bool{}
		count := map[string]int{}
		for _, s := range group {
			for _, p := range SpecParts(s) {
				if vals[p.Key] == nil {
					vals[p.Key] = map[string]bool{}
				}
				vals[p.Key][p.Text] = true
				count[p.Key]++
			}
		}
		vary := map[string]bool{"kernel": len(byKernel) > 1}
		for key, v := range vals {
			if key != "kernel" && (len(v) > 1 || count[key] < len(group)) {
				vary[key] = true
			}
		}
		out[k] = vary
	}
	return out
}

// Common is the text of the parts every spec shares, in spec order ("" with
// fewer than two specs).
func Common(specs []profiler.Spec) string {
	shared := commonParts(specs)
	if len(specs) < 2 {
		return ""
	}
	var out []string
	for _, p := range SpecParts(specs[0]) {
		if shared[p.Text] {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, " ")
}

// commonParts are the parts (by text) present in every spec.
func commonParts(specs []profiler.Spec) map[string]bool {
	n := map[string]int{}
	for _, s := range specs {
		for _, p := range SpecParts(s) {
			n[p.Text]++
		}
	}
	shared := map[string]bool{}
	for t, c := range n {
		if c == len(specs) && len(specs) > 1 {
			shared[t] = true
		}
	}
	return shared
}

// Clip shortens s to n runes (n ≥ 1), ending it with … when it was longer.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// FormatResult is the result block `mltop run` prints (the same panels the
// TUI shows): timing, throughput, TGM budget by item, occupancy, correctness.
func FormatResult(r profiler.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Spec.String())
	fmt.Fprintf(&b, "  device     %s (%s)\n", r.Device, r.Backend)
	fmt.Fprintf(&b, "  status     %s", r.Status)
	if r.Error != "" {
		fmt.Fprintf(&b, ": %s", r.Reason())
	}
	b.WriteString("\n")
	st := r.Stats
	if st.N > 0 {
		fmt.Fprintf(&b, "\ntiming (%s) cache %s, stopped on %s\n", r.Timer, r.Cache, r.StopReason)
		// Below 6 samples there is no 95% interval of the median
		// (profiler.MedianCI): say so rather than a ±0.00% that reads as
		// perfectly precise.
		ci := "(no 95% CI: fewer than 6 samples)"
		if st.CIHi > 0 {
			ci = fmt.Sprintf("± %.2f%% (95%% CI %s–%s)", 100*st.CIHalfRel(), units.Nanos(st.CILo), units.Nanos(st.CIHi))
		}
		fmt.Fprintf(&b, "  median %s %s   p10–p90 %s–%s   min %s   cv %.2f%%   n %d\n",
			units.Nanos(st.Median), ci,
			units.Nanos(st.P10), units.Nanos(st.P90), units.Nanos(st.Min), 100*st.CV, st.N)
		if r.StopReason == profiler.StopTimeLimit || r.StopReason == profiler.StopMaxSamples {
			// The --noise target was not reached: say what the median is
			// good for and what would tighten it.
			if st.CIHi > 0 {
				fmt.Fprintf(&b, "  the median's interval did not reach the --noise target before the %s: it is good to ±%.2f%%; a longer --time-limit (or a quieter machine) narrows it\n", r.StopReason, 100*st.CIHalfRel())
			} else {
				fmt.Fprintf(&b, "  the %s came after %d samples, fewer than the 6 a 95%% interval of the median needs: the median's precision is unknown; a longer --time-limit gives it more samples\n", r.StopReason, st.N)
			}
		}
		for _, d := range r.PerDispatch {
			setup := ""
			if d.Setup {
				setup = " (setup)"
			}
			fmt.Fprintf(&b, "  %-22s median %s  cv %.2f%%%s\n", d.Name, units.Nanos(d.Stats.Median), 100*d.Stats.CV, setup)
		}
		if r.Phases != nil {
			fmt.Fprintf(&b, "  wall %.1f ms: %s\n", 1e3*r.Phases.Total(), r.Phases)
		}
		fmt.Fprintf(&b, "\nthroughput\n  %s (%s)   %s (%s)\n", units.Rate(r.TFLOPS*1e12, "FLOP/s"), pct(r.PctPeakFLOP, r.PctMeasFLOP), units.Rate(r.GBps*1e9, "B/s"), pct(r.PctPeakBW, r.PctMeasBW))
		fmt.Fprintf(&b, "  work: %.4g FLOP, %s moved, %s allocated\n", r.FLOPs, units.Bytes(int64(r.Bytes)), units.Bytes(r.MemoryBytes))
	}
	for _, bud := range r.Budget {
		fmt.Fprintf(&b, "\nthreadgroup memory — %s (%d threads)\n", bud.Dispatch, bud.Threads)
		for _, it := range bud.Items {
			fmt.Fprintf(&b, "  %-12s %7d B  %s\n", it.Name, it.Bytes, it.Note)
		}
		fmt.Fprintf(&b, "  %-12s %7d B  of %d B limit %s\n", "total", bud.Total, bud.Limit, Bar(float64(bud.Total), float64(bud.Limit), 20))
		if bud.CompilerTGM > 0 {
			fmt.Fprintf(&b, "  compiler reports %d B static\n", bud.CompilerTGM)
		}
		for _, w := range bud.Warnings {
			fmt.Fprintf(&b, "  ! %s\n", w)
		}
	}
	for _, o := range r.Occupancy {
		fmt.Fprintf(&b, "\noccupancy — %s\n", o.Dispatch)
		if !o.Available {
			reason := o.Reason
			if !strings.HasPrefix(reason, "n/a") {
				reason = "n/a: " + reason
			}
			fmt.Fprintf(&b, "  %s\n", reason)
			continue
		}
		kind := "from " + o.Source
		if o.Estimate {
			kind = "estimate, " + o.Source
			if o.Confidence != "" {
				kind += ", " + o.Confidence + " confidence"
			}
		}
		fmt.Fprintf(&b, "  %d groups per unit, limited by %s (%.0f%% of max threads) [%s]\n", o.GroupsPerUnit, o.Limiter, o.ThreadsPct, kind)
		if o.Registers > 0 {
			fmt.Fprintf(&b, "  %d registers/thread, %d B spills\n", o.Registers, o.SpillBytes)
		}
	}
	if v := r.Verdict; v != nil {
		verdict := "PASS"
		if !v.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(&b, "\ncorrectness vs float64 reference: %s\n", verdict)
		tol := fmt.Sprintf("atol %g + rtol %g·|ref|", v.ATol, v.RTol)
		if v.ATol == 0 && v.RTol == 0 {
			tol = "exact (no difference allowed)"
		}
		fmt.Fprintf(&b, "  max abs %.3e   max rel %.3e   rms %.3e   tol %s\n", v.MaxAbsErr, v.MaxRelErr, v.RMSErr, tol)
		fmt.Fprintf(&b, "  worst err/bound %s (at most 1 passes; the bound grows with the reduction length and the terms' size)\n", ErrBound(v))
		fmt.Fprintf(&b, "  %s, %d NaN/Inf, %s in %s\n", profiler.Plural(v.Mismatches, "mismatch", "mismatches"), v.NaNInf, profiler.Plural(v.Checked, "element", "elements"), v.Rows)
		if !v.Pass && v.Worst != "" {
			fmt.Fprintf(&b, "  worst: %s\n", v.Worst)
		}
		if !v.Pass && v.Hint != "" {
			fmt.Fprintf(&b, "  hint: %s\n", v.Hint)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	return b.String()
}

func pct(spec, measured float64) string {
	var parts []string
	if spec > 0 {
		parts = append(parts, fmt.Sprintf("%.1f%% of spec peak", spec))
	}
	if measured > 0 {
		parts = append(parts, fmt.Sprintf("%.1f%% of measured peak", measured))
	}
	if len(parts) == 0 {
		return "peak n/a"
	}
	return strings.Join(parts, ", ")
}

// Bar draws [#####.....] for v of limit; over the limit it ends with '!'.
func Bar(v, limit float64, width int) string {
	if limit <= 0 {
		return ""
	}
	n := int(math.Round(float64(width) * math.Min(v/limit, 1)))
	bar := "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
	if v > limit {
		bar += "!"
	}
	return bar
}
