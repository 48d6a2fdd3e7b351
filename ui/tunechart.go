package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler/tune"
	"github.com/mltop/mltop/profiler/units"
)

// The chart of a search started by `T`: the objective of each evaluation
// against its number, as a point, and the best so far as a line; the
// invalid or failed evaluations as ✗ on the axis; at the end, the
// verdict on the winner and the runner-up.

// Marks of the tune chart.
const (
	tuneMarkPoint = '•'
	tuneMarkBest  = '─'
	tuneMarkBad   = '✗'
)

// title is "tune BQ BK · median_us (µs) vs evaluation · tpe".
func (t *tuneRun) title() string {
	return fmt.Sprintf("tune %s · %s (%s) vs evaluation · %s", strings.Join(t.knobs, " "), t.cfg.Objective, t.cfg.Objective.Unit(), t.cfg.Strategy)
}

// chartLines are the chart's content, w×h at most.
func (t *tuneRun) chartLines(th theme, w, h int) []string {
	foot := t.footer(th, w)
	if len(t.points) == 0 {
		head := wrap(fmt.Sprintf("tuning %s: %s over %s, budget %s; the first evaluations are being measured",
			strings.Join(t.knobs, " "), t.cfg.Strategy, plural(t.space, "configuration"), t.cfg.Budget), w)
		if t.ended {
			head = nil
		}
		return clip(append(head, foot...), h)
	}
	// The verdict gives way to the plot on a short chart, down to one line.
	if keep := h - 2 - 3; len(foot) > keep {
		foot = foot[:max(1, keep)]
	}
	rows := h - 2 - len(foot)
	if rows < 3 { // no room for a plot: say it in words
		return clip(append([]string{t.bestText()}, foot...), h)
	}
	return append(t.plot(th, w, rows), foot...)
}

// clip keeps the first h lines.
func clip(lines []string, h int) []string {
	if len(lines) > h {
		return lines[:max(0, h)]
	}
	return lines
}

// footer is the legend and, once the driver is done, its verdict or why
// it found nothing.
func (t *tuneRun) footer(th theme, w int) []string {
	bad := 0
	for _, p := range t.points {
		if !p.ok {
			bad++
		}
	}
	legend := fmt.Sprintf("%c evaluation · %c best so far", tuneMarkPoint, tuneMarkBest)
	if bad > 0 {
		legend += fmt.Sprintf(" · %c %d invalid/failed", tuneMarkBad, bad)
	}
	out := []string{th.dim.Render(fit(legend, w))}
	switch {
	case !t.ended:
	case errors.Is(t.err, context.Canceled):
		out = append(out, th.dim.Render(fit("cancelled: the editor keeps its knobs", w)))
	case t.err != nil:
		for _, l := range wrap("✗ "+t.err.Error(), w) {
			out = append(out, th.bad.Render(l))
		}
	case t.outcome != nil && len(t.outcome.Finalists) > 0:
		win := t.outcome.Winner()
		out = append(out, fit(fmt.Sprintf("★ %s in the editor (r runs it)", tune.KnobText(win.Spec.Knobs, t.knobs)), w))
		out = append(out, wrap(t.outcome.Compare.Text, w)...)
	}
	return out
}

// plot draws the evaluations on rows lines plus the axis and its labels.
func (t *tuneRun) plot(th theme, w, rows int) []string {
	const labelW = 6
	pw := max(4, w-labelW-2)
	n := len(t.points)
	xMax := max(n, t.evals)
	if t.cfg.Budget.Time > 0 { // the budget is a time: the space is no scale
		xMax = max(n, min(t.evals, pw))
	}
	col := func(i int) int {
		if xMax <= 1 {
			return 0
		}
		return i * (pw - 1) / (xMax - 1)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range t.points {
		if p.ok {
			lo, hi = math.Min(lo, p.value), math.Max(hi, p.value)
		}
	}
	row := func(v float64) int {
		if hi <= lo {
			return rows / 2
		}
		return clamp(int(math.Round((hi-v)/(hi-lo)*float64(rows-1))), 0, rows-1)
	}
	grid := make([][]rune, rows)
	for r := range grid {
		grid[r] = []rune(strings.Repeat(" ", pw))
	}
	axis := []rune(strings.Repeat("─", pw))
	// The best-so-far line: in each column, the best after the last
	// evaluation drawn there, carried on to the next column.
	best := t.bestSoFar()
	line := make([]int, pw)
	for c := range line {
		line[c] = -1
	}
	for i := range t.points {
		line[col(i)] = best[i]
	}
	carry := -1
	for c := 0; c <= col(n-1); c++ {
		if line[c] < 0 {
			line[c] = carry
		}
		carry = line[c]
		if carry >= 0 {
			grid[row(t.points[carry].value)][c] = tuneMarkBest
		}
	}
	for i, p := range t.points {
		if p.ok {
			grid[row(p.value)][col(i)] = tuneMarkPoint
		} else {
			axis[col(i)] = tuneMarkBad
		}
	}
	out := make([]string, 0, rows+2)
	for r := range rows {
		label := ""
		switch {
		case hi < lo: // nothing usable yet
		case r == 0:
			label = units.SIAxis(hi)
		case r == rows-1 && hi > lo:
			label = units.SIAxis(lo)
		}
		out = append(out, th.barFill.Render(padLeft(label, labelW)+" ┤"+string(grid[r])))
	}
	out = append(out, strings.Repeat(" ", labelW)+" └"+string(axis))
	last := strconv.Itoa(xMax)
	mid := "evaluation"
	gap := max(1, pw-1-len(last)-len(mid))
	xl := strings.Repeat(" ", labelW+2) + "1" + strings.Repeat(" ", gap/2) + mid + strings.Repeat(" ", gap-gap/2) + last
	return append(out, th.dim.Render(fit(xl, w)))
}
