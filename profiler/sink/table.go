package sink

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Table prints a readable row per Result as it finishes.
type Table struct {
	w      io.Writer
	header bool
}

// NewTable writes to w.
func NewTable(w io.Writer) *Table { return &Table{w: w} }

const tableFmt = "%-64s %10s %17s %6s %9s %9s %8s %5s %9s %-13s\n"

// Write prints one row (and the header before the first).
func (t *Table) Write(r profiler.Result) error {
	if !t.header {
		fmt.Fprintf(t.w, tableFmt, "spec", "median µs", "p10–p90 µs", "cv%", "TFLOP/s", "GB/s", "TGM B", "occ", "max rel", "status")
		t.header = true
	}
	st := r.Stats
	med, spread, cv, tf, gb := "-", "-", "-", "-", "-"
	if st.N > 0 {
		med = fmt.Sprintf("%.2f", st.Median/1e3)
		spread = fmt.Sprintf("%.2f–%.2f", st.P10/1e3, st.P90/1e3)
		cv = fmt.Sprintf("%.2f", 100*st.CV)
		tf = fmt.Sprintf("%.3f", r.TFLOPS)
		gb = fmt.Sprintf("%.1f", r.GBps)
	}
	tgm, _ := r.MaxTGM()
	occ := "n/a"
	if o, ok := r.MinOccupancy(); ok {
		occ = fmt.Sprint(o.GroupsPerUnit)
	}
	rel := "-"
	if r.Verdict != nil {
		rel = fmt.Sprintf("%.2e", r.Verdict.MaxRelErr)
	}
	_, err := fmt.Fprintf(t.w, tableFmt, clip(r.Spec.String(), 64), med, spread, cv, tf, gb, fmt.Sprint(tgm), occ, rel, r.Status)
	if r.Status != profiler.StatusOK && r.Error != "" {
		fmt.Fprintf(t.w, "    └ %s\n", clip(oneLine(r.Error), 160))
	}
	return err
}

// Close does nothing.
func (t *Table) Close() error { return nil }

func clip(s string, n int) string {
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
		fmt.Fprintf(&b, ": %s", r.Error)
	}
	b.WriteString("\n")
	st := r.Stats
	if st.N > 0 {
		fmt.Fprintf(&b, "\ntiming (%s) cache %s, stopped on %s\n", r.Timer, r.Cache, r.StopReason)
		fmt.Fprintf(&b, "  median %.2f µs ± %.2f%% (95%% CI %.2f–%.2f)   p10–p90 %.2f–%.2f µs   min %.2f µs   cv %.2f%%   n %d\n",
			st.Median/1e3, 100*st.CIHalfRel(), st.CILo/1e3, st.CIHi/1e3, st.P10/1e3, st.P90/1e3, st.Min/1e3, 100*st.CV, st.N)
		for _, d := range r.PerDispatch {
			setup := ""
			if d.Setup {
				setup = " (setup)"
			}
			fmt.Fprintf(&b, "  %-22s median %.2f µs  cv %.2f%%%s\n", d.Name, d.Stats.Median/1e3, 100*d.Stats.CV, setup)
		}
		if r.Phases != nil {
			fmt.Fprintf(&b, "  wall %.1f ms: %s\n", 1e3*r.Phases.Total(), r.Phases)
		}
		fmt.Fprintf(&b, "\nthroughput\n  %.3f TFLOP/s (%s)   %.1f GB/s (%s)\n", r.TFLOPS, pct(r.PctPeakFLOP, r.PctMeasFLOP), r.GBps, pct(r.PctPeakBW, r.PctMeasBW))
		fmt.Fprintf(&b, "  work: %.4g FLOP, %s moved, %s allocated\n", r.FLOPs, profiler.FormatBytes(int64(r.Bytes)), profiler.FormatBytes(r.MemoryBytes))
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
		fmt.Fprintf(&b, "  max abs %.3e   max rel %.3e   rms %.3e   tol atol %g + rtol %g·|ref|\n", v.MaxAbsErr, v.MaxRelErr, v.RMSErr, v.ATol, v.RTol)
		fmt.Fprintf(&b, "  %s, %d NaN/Inf, %s in %s\n", profiler.Plural(v.Mismatches, "mismatch", "mismatches"), v.NaNInf, profiler.Plural(v.Checked, "element", "elements"), v.Rows)
		if !v.Pass && v.Worst != "" {
			fmt.Fprintf(&b, "  worst: %s\n", v.Worst)
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
