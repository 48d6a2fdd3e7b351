package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// chart plots throughput of one series: the runs of the editor's kernel at
// its shape and dtype (kernel, dims, dtype, flags: what ShapeKey keeps), in
// run order, so runs of other kernels or shapes never join its line. While
// the latest batch is a sweep of one knob it plots that sweep's runs, with
// one bar per swept value; while it is a search (`T`), the search's
// evaluations (tunechart.go). The area is always drawn; with nothing to plot
// it says how to get something.
type chart struct {
	th     theme
	runs   []entry       // the history, in run order
	batch  *batch        // the latest batch, nil before the first
	series profiler.Spec // the editor's spec: its kernel and shape pick the runs
}

func (c chart) sweep() *batch {
	if c.batch != nil && c.batch.sweep != "" {
		return c.batch
	}
	return nil
}

// seriesRuns are the measured runs of the editor's kernel and shape.
func (c chart) seriesRuns() []entry {
	if c.series.Kernel == "" {
		return nil
	}
	key := c.series.ShapeKey()
	var out []entry
	for _, e := range c.runs {
		if _, ok := throughput(e.res); ok && e.res.Spec.ShapeKey() == key {
			out = append(out, e)
		}
	}
	return out
}

// seriesName is "attn_fwd f32 B=1 H=8 … causal": what the series holds.
func seriesName(s profiler.Spec) string {
	name := s.Kernel + " " + string(s.DType)
	if d := dimString(s); d != "" {
		name += " " + d
	}
	return name
}

// runSpan is "runs #3–#9", or "run #3".
func runSpan(es []entry) string {
	if len(es) == 1 {
		return fmt.Sprintf("run #%d", es[0].id)
	}
	return fmt.Sprintf("runs #%d–#%d", es[0].id, es[len(es)-1].id)
}

// title names what the chart shows, w cells at most: the series' kernel
// and shape (cut first when long), its unit and its runs.
func (c chart) title(w int) string {
	if c.batch != nil && c.batch.tune != nil {
		return c.batch.tune.title()
	}
	if b := c.sweep(); b != nil {
		t := "throughput vs " + b.sweep
		if mine := b.entries(); countMeasured(mine) > 0 {
			t += " · " + unitFor(results(mine)) + " · " + runSpan(mine)
		}
		return t
	}
	if c.series.Kernel == "" {
		return "throughput"
	}
	tail := ""
	if es := c.seriesRuns(); len(es) > 0 {
		tail = " · " + unitFor(results(es)) + " · " + runSpan(es)
	}
	return ansi.Truncate(seriesName(c.series), max(8, w-ansi.StringWidth(tail)), "…") + tail
}

func results(es []entry) []profiler.Result {
	out := make([]profiler.Result, len(es))
	for i, e := range es {
		out[i] = e.res
	}
	return out
}

// View is the chart boxed to w×h.
func (c chart) View(w, h int) []string {
	return box(c.th, c.title(w-6), c.lines(w-2, h-2), w, h, false)
}

func (c chart) lines(w, h int) []string {
	if c.batch != nil && c.batch.tune != nil {
		return c.batch.tune.chartLines(c.th, w, h)
	}
	b := c.sweep()
	if b == nil {
		empty := "no runs yet: r runs the kernel, s sweeps the selected knob, L loads a YAML sweep"
		if len(c.runs) > 0 {
			empty = "no run of this kernel at this shape and dtype yet: r runs it (the chart shows only the kernel and shape in the editor)"
		}
		return c.plot(c.seriesRuns(), w, h, empty)
	}
	bars := c.sweepBars(b, w)
	mine := b.entries()
	if h-len(bars) >= 8 && countMeasured(mine) > 0 {
		out := c.plot(mine, w, h-len(bars)-1, "")
		out = append(out, c.th.dim.Render(strings.Repeat("─", w)))
		return append(out, bars...)
	}
	return bars
}

// entries are the batch's finished runs, in run order.
func (b *batch) entries() []entry {
	var out []entry
	for i, r := range b.results {
		if r != nil {
			out = append(out, entry{id: b.ids[i], res: *r})
		}
	}
	return out
}

func countMeasured(es []entry) int {
	n := 0
	for _, e := range es {
		if _, ok := throughput(e.res); ok {
			n++
		}
	}
	return n
}

// plot draws the throughput of the measured runs among es as a line, or a
// single run as a point with its p10–p90 bar.
func (c chart) plot(es []entry, w, h int, empty string) []string {
	var rs []profiler.Result
	for _, e := range es {
		if _, ok := throughput(e.res); ok {
			rs = append(rs, e.res)
		}
	}
	if len(rs) == 0 {
		if empty == "" {
			empty = "no measured run yet"
		}
		return wrap(empty, w)
	}
	// Points of one unit only; runs of another kind (FLOP/s vs GB/s) are left out.
	unit := unitFor(rs)
	var data []float64
	for _, r := range rs {
		if v := inUnit(r, unit); v > 0 {
			data = append(data, v)
		}
	}
	if h < 4 {
		return []string{fmt.Sprintf("last %s %s", units.SIAxis(data[len(data)-1]), unit)}
	}
	if len(data) == 1 {
		return c.point(rs[len(rs)-1], unit, w, h)
	}
	const labelW = 6 // the widest SI label: "-1.23k"
	pw := max(4, w-labelW-3)
	if len(data) > pw {
		data = data[len(data)-pw:]
	}
	lo, hi := minOf(data), maxOf(data)
	opts := []asciigraph.Option{asciigraph.Height(h - 1), asciigraph.Width(pw),
		asciigraph.YAxisValueFormatter(func(v float64) string { return padLeft(siTick(v, hi), labelW) })}
	if lo == hi { // a flat series: give the axis room so the line sits mid-height
		opts = append(opts, asciigraph.LowerBound(lo*0.9), asciigraph.UpperBound(hi*1.1+1e-9))
	} else {
		opts = append(opts, asciigraph.LowerBound(0))
	}
	out := strings.Split(asciigraph.Plot(data, opts...), "\n")
	if !c.th.plain {
		for i := range out {
			out[i] = c.th.barFill.Render(out[i])
		}
	}
	return out
}

// point draws one run: its median throughput as ● on a short axis, with
// the bar from its p90 time (the lower throughput) to its p10 time.
func (c chart) point(r profiler.Result, unit string, w, h int) []string {
	med := inUnit(r, unit)
	top, bot := med, med
	if st := r.Stats; st.P10 > 0 && st.P90 > 0 {
		top, bot = med*st.Median/st.P10, med*st.Median/st.P90
	}
	pad := math.Max((top-bot)/2, 0.05*med)
	hiV, loV := top+pad, math.Max(0, bot-pad)
	rows := h - 1
	row := func(v float64) int { // 0 is the top row
		return clamp(int(math.Round((hiV-v)/(hiV-loV)*float64(rows-1))), 0, rows-1)
	}
	rTop, rMed, rBot := row(top), row(med), row(bot)
	const labelW = 6
	var out []string
	for i := range rows {
		label := strings.Repeat(" ", labelW)
		if i == 0 || i == rows-1 || i == rMed {
			label = padLeft(siTick(hiV-float64(i)/float64(rows-1)*(hiV-loV), hiV), labelW)
		}
		mark := " "
		switch {
		case i == rMed:
			mark = "●"
		case i == rTop && i == rBot:
		case i == rTop:
			mark = "┬"
		case i == rBot:
			mark = "┴"
		case i > rTop && i < rBot:
			mark = "│"
		}
		line := label + " ┤   " + mark
		if i == rMed {
			line += fmt.Sprintf("  %s %s", units.SIAxis(med), unit)
		}
		out = append(out, fit(line, w))
	}
	note := fmt.Sprintf("bar: p10–p90 %s–%s", units.SIAxis(bot), units.SIAxis(top))
	return append(out, c.th.dim.Render(fit(note, w)))
}

// siTick is an axis label: siLabel, with values that are zero at the
// scale of the axis (hi) printed "0".
func siTick(v, hi float64) string {
	if math.Abs(v) < math.Abs(hi)*1e-6 {
		return "0"
	}
	return units.SIAxis(v)
}

// sweepBars draws the swept values against their throughput, one bar each.
func (c chart) sweepBars(b *batch, w int) []string {
	var done []profiler.Result
	for _, r := range b.results {
		if r != nil {
			done = append(done, *r)
		}
	}
	unit := unitFor(done)
	best := 0.0
	for _, r := range done {
		best = math.Max(best, inUnit(r, unit))
	}
	labelW := 0
	for _, v := range b.sweepVals {
		labelW = max(labelW, len(strconv.Itoa(v)))
	}
	var out []string
	for i, v := range b.sweepVals {
		label := padLeft(strconv.Itoa(v), labelW) + " "
		r := b.results[i]
		var tail string
		bar := ""
		switch {
		case r == nil && b.running && i == b.current:
			tail = c.th.warn.Render("measuring…")
		case r == nil && b.running:
			tail = c.th.dim.Render("queued")
		case r == nil:
			tail = c.th.dim.Render("not run")
		case inUnit(*r, unit) == 0:
			tail = c.th.bad.Render("✗ " + string(r.Status))
		default:
			val := inUnit(*r, unit)
			tail = " " + units.Sig3(val)
			if val == best {
				tail += " ★"
			}
			if r.Status == profiler.StatusMismatch {
				tail += c.th.bad.Render(" ✗mismatch")
			}
			bw := max(0, w-labelW-1-12)
			n := int(math.Round(float64(bw) * val / best))
			bar = c.th.barFill.Render(strings.Repeat("█", n))
		}
		out = append(out, label+bar+tail)
	}
	if unit != "" {
		out = append(out, c.th.dim.Render(fmt.Sprintf("%s=value · bars in %s · ★ best", b.sweep, unit)))
	}
	return out
}

func minOf(v []float64) float64 {
	x := math.Inf(1)
	for _, a := range v {
		x = math.Min(x, a)
	}
	return x
}

func maxOf(v []float64) float64 {
	x := math.Inf(-1)
	for _, a := range v {
		x = math.Max(x, a)
	}
	return x
}
