package ui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// budgetPanel shows the threadgroup-memory budget of every dispatch: one
// bar per dispatch first, then each dispatch's items, compiler figure and
// warnings. What does not fit scrolls (tab to the panel, ↑/↓) behind
// "↑ N more" / "↓ N more" marks, so nothing is hidden without a word.
type budgetPanel struct {
	th       theme
	reports  []profiler.BudgetReport
	compiled bool   // the figures come from a run (the compiler's are known)
	run      int    // the run they describe, 0 for the editor's plan
	of       string // the run's kernel when it is not the editor's
	invalid  bool   // the editor's spec is rejected: nothing to plan
	off      int    // scroll offset in lines
	key      string // what is shown, to reset the scroll when it changes
	planKey  string // cache of the plan of a picked run without figures
	plan     []profiler.BudgetReport
}

// showPreview describes the editor's plan.
func (p *budgetPanel) showPreview(pv run.Preview) {
	p.of = ""
	p.set("plan "+pv.Spec.Key(), pv.Budget, false, 0)
	p.invalid = pv.Err != nil
}

// showRun describes a run: its compiled figures, or, for a run that never
// compiled, the plan of its spec.
func (p *budgetPanel) showRun(e entry, dev profiler.DeviceInfo) {
	p.invalid, p.of = false, ""
	if len(e.res.Budget) > 0 {
		p.set(fmt.Sprintf("run %d", e.id), e.res.Budget, true, e.id)
		return
	}
	if k := e.res.Spec.Key(); k != p.planKey {
		p.planKey, p.plan = k, run.MakePreview(e.res.Spec, dev).Budget
	}
	p.set(fmt.Sprintf("run %d", e.id), p.plan, false, e.id)
}

func (p *budgetPanel) set(key string, rs []profiler.BudgetReport, compiled bool, run int) {
	if key != p.key {
		p.key, p.off = key, 0
	}
	p.reports, p.compiled, p.run = rs, compiled, run
}

// Update scrolls a panel whose inside is w×h cells.
func (p budgetPanel) Update(k tea.KeyPressMsg, keys keyMap, w, h int) budgetPanel {
	switch {
	case key.Matches(k, keys.Up):
		p.off--
	case key.Matches(k, keys.Down):
		p.off++
	}
	_, p.off = scrollLines(p.th, p.lines(w), max(0, p.off), h)
	return p
}

func (p budgetPanel) title() string {
	if p.run > 0 {
		if p.of != "" {
			return fmt.Sprintf("TGM budget #%d %s", p.run, p.of)
		}
		return fmt.Sprintf("TGM budget #%d", p.run)
	}
	return "TGM budget"
}

// View is the panel boxed to w×h. Scrolled into a dispatch's items, the
// "↑ N more" mark names the dispatch they belong to.
func (p budgetPanel) View(w, h int, focused bool) []string {
	all, owner := p.linesOwned(w - 2)
	lines, off := scrollLines(p.th, all, p.off, h-2)
	if off > 0 && off < len(owner) && owner[off] != "" {
		lines[0] = p.th.dim.Render(fmt.Sprintf("↑ %d more · %s", off, owner[off]))
	}
	return box(p.th, p.title(), lines, w, h, focused)
}

func (p budgetPanel) lines(w int) []string {
	l, _ := p.linesOwned(w)
	return l
}

// linesOwned is the panel's text and, for each line, the dispatch whose
// section it is in ("" for the totals and single-dispatch plans).
func (p budgetPanel) linesOwned(w int) (out, owner []string) {
	th := p.th
	if len(p.reports) == 0 {
		if p.invalid {
			return []string{th.bad.Render("✗ invalid spec"), "fix the value in red"}, nil
		}
		return []string{th.dim.Render("no kernel")}, nil
	}
	multi := len(p.reports) > 1
	if multi { // every dispatch's total first: nothing below can hide one
		lw := 0
		labels := make([]string, len(p.reports))
		for i, b := range p.reports {
			switch {
			case b.Total == 0:
				labels[i] = "no TGM"
			case b.Limit <= 0:
				labels[i] = units.KiB(b.Total)
			default:
				labels[i] = fmtKiBShort(b.Total, b.Limit)
				if b.Total > b.Limit {
					labels[i] += "✗"
				}
			}
			lw = max(lw, len([]rune(labels[i])))
		}
		for i, b := range p.reports {
			l := padLeft(labels[i], lw)
			switch {
			case b.Total == 0:
				l = th.dim.Render(l)
			case b.Total > b.Limit && b.Limit > 0:
				l = th.bad.Render(l)
			}
			out = append(out, l+" "+p.short(b.Dispatch))
		}
	}
	for _, b := range p.reports {
		for len(owner) < len(out) { // the lines so far belong to the sections before
			owner = append(owner, "")
		}
		section := ""
		if multi {
			if b.Total == 0 && len(b.Items) == 0 {
				continue
			}
			section = p.short(b.Dispatch)
			out = append(out, th.dim.Render("─ "+section+" "+strings.Repeat("─", max(0, w-3-len([]rune(section))))), p.bar(b.Total, b.Limit, w))
		} else if b.Total == 0 && len(b.Items) == 0 {
			out = append(out, "no threadgroup memory")
		} else {
			out = append(out, p.bar(b.Total, b.Limit, w))
		}
		for _, it := range b.Items {
			out = append(out, fit(it.Name, max(1, w-10))+padLeft(units.KiB(it.Bytes), 10))
		}
		switch {
		case b.CompilerTGM > 0:
			out = append(out, "compiler: "+units.KiB(b.CompilerTGM)+" static")
		case b.Total == 0:
		case !p.compiled:
			out = append(out, th.dim.Render("compiler: after a run"))
		default:
			out = append(out, th.dim.Render("compiler: not reported"))
		}
		for _, wmsg := range b.Warnings {
			for _, l := range wrap("! "+wmsg, w) {
				out = append(out, th.bad.Render(l))
			}
		}
		for len(owner) < len(out) {
			owner = append(owner, section)
		}
	}
	return out, owner
}

// bar draws used against limit: "████░░░░ 12.5/32.0 KiB".
func (p budgetPanel) bar(used, limit, w int) string {
	label := " " + fmtKiBPair(used, limit)
	if w-len([]rune(label)) < 8 {
		label = " " + fmtKiBShort(used, limit)
	}
	if limit <= 0 {
		return units.KiB(used) + " (no limit reported)"
	}
	over := used > limit
	if over {
		label += " ✗"
	}
	bw := max(2, w-len([]rune(label)))
	n := int(math.Round(float64(bw) * math.Min(1, float64(used)/float64(limit))))
	fill := p.th.barFill
	if over {
		fill = p.th.barOver
	}
	return fill.Render(strings.Repeat("█", n)) + p.th.dim.Render(strings.Repeat("░", bw-n)) + label
}

// short is a dispatch's name without the prefix all of the plan's
// dispatches share up to an underscore: attn_bwd's "attn_bwd_dkv" is "dkv",
// attn_bwd_atomic's "attn_bwd_cast" is "cast", in a panel that already says
// which kernel it is.
func (p budgetPanel) short(dispatch string) string {
	if len(p.reports) < 2 {
		return dispatch
	}
	prefix := p.reports[0].Dispatch
	for _, b := range p.reports[1:] {
		n := 0
		for n < len(prefix) && n < len(b.Dispatch) && prefix[n] == b.Dispatch[n] {
			n++
		}
		prefix = prefix[:n]
	}
	prefix = prefix[:strings.LastIndex(prefix, "_")+1]
	for _, b := range p.reports {
		if len(b.Dispatch) == len(prefix) {
			return dispatch // one name is all prefix: keep them whole
		}
	}
	return strings.TrimPrefix(dispatch, prefix)
}
