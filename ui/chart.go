package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/guptarohit/asciigraph"
	"github.com/mltop/mltop/profiler"
)

// chart plots throughput: of every run in run order, or, while the latest
// batch is a sweep of one knob, of that sweep's runs only, with one bar per
// swept value. The area is always drawn; with nothing to plot it says how
// to get something.
type chart struct {
	th    theme
	runs  []entry // the history, in run order
	batch *batch  // the latest batch, nil before the first
}

func (c chart) sweep() *batch {
	if c.batch != nil && c.batch.sweep != "" {
		return c.batch
	}
	return nil
}

func (c chart) title() string {
	if b := c.sweep(); b != nil {
		return "throughput vs " + b.sweep
	}
	return "throughput per run"
}

// View is the chart boxed to w×h.
func (c chart) View(w, h int) []string {
	return box(c.th, c.title(), c.lines(w-2, h-2), w, h, false)
}

func (c chart) lines(w, h int) []string {
	b := c.sweep()
	if b == nil {
		return c.plot(c.runs, w, h, "no runs yet: r runs the kernel, s sweeps the selected knob, L loads a YAML sweep")
	}
	bars := c.sweepBars(b, w)
	var mine []entry // the sweep's own runs, in run order
	for i, r := range b.results {
		if r != nil {
			mine = append(mine, entry{id: b.ids[i], res: *r})
		}
	}
	if h-len(bars) >= 8 && countMeasured(mine) > 0 {
		out := c.plot(mine, w, h-len(bars)-1, "")
		out = append(out, c.th.dim.Render(strings.Repeat("─", w)))
		return append(out, bars...)
	}
	return bars
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

// plot draws the throughput of the measured runs among es as a line.
func (c chart) plot(es []entry, w, h int, empty string) []string {
	var rs []profiler.Result
	var ids []int
	for _, e := range es {
		if _, ok := throughput(e.res); ok {
			rs = append(rs, e.res)
			ids = append(ids, e.id)
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
	first := 0
	for i, r := range rs {
		if v := inUnit(r, unit); v > 0 {
			if len(data) == 0 {
				first = ids[i]
			}
			data = append(data, v)
		}
	}
	caption := fmt.Sprintf("%s, runs #%d–#%d", unit, first, ids[len(ids)-1])
	if first == ids[len(ids)-1] {
		caption = fmt.Sprintf("%s, run #%d", unit, first)
	}
	if h < 4 {
		return []string{caption, fmt.Sprintf("last %s %s", sig3(data[len(data)-1]), unit)}
	}
	labelW := len(strconv.FormatFloat(maxOf(data), 'f', 2, 64)) + 1
	pw := max(4, w-labelW-3)
	if len(data) > pw {
		data = data[len(data)-pw:]
	}
	if len(data) == 1 {
		data = append(data, data[0])
	}
	lo, hi := minOf(data), maxOf(data)
	opts := []asciigraph.Option{asciigraph.Height(h - 2), asciigraph.Width(pw), asciigraph.Precision(2)}
	if lo == hi { // a flat series: give the axis room so the line sits mid-height
		opts = append(opts, asciigraph.LowerBound(lo*0.9), asciigraph.UpperBound(hi*1.1+1e-9))
	} else {
		opts = append(opts, asciigraph.LowerBound(0))
	}
	out := strings.Split(asciigraph.Plot(data, opts...), "\n")
	for i, l := range out { // the axis' lowest label can round to "-0.00"
		if z := strings.Index(l, "-0.00 "); z >= 0 && strings.TrimSpace(l[:z]) == "" {
			out[i] = l[:z] + " 0.00 " + l[z+6:]
		}
	}
	if !c.th.plain {
		for i := range out {
			out[i] = c.th.barFill.Render(out[i])
		}
	}
	return append(out, c.th.dim.Render(caption))
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
			tail = " " + sig3(val)
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
