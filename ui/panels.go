package ui

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// occPanel is the occupancy of the tightest dispatch: measured by the
// driver, or estimated from the device's limits table.
type occPanel struct {
	th      theme
	unit    string
	os      []profiler.Occupancy
	planKey string
	plan    []profiler.Occupancy
}

func (p *occPanel) showPreview(pv run.Preview) { p.os = pv.Occupancy }

// showRun describes a run: its figures, or the plan of its spec when it
// never compiled.
func (p *occPanel) showRun(e entry, dev profiler.DeviceInfo) {
	if len(e.res.Occupancy) > 0 {
		p.os = e.res.Occupancy
		return
	}
	if k := e.res.Spec.Key(); k != p.planKey {
		p.planKey, p.plan = k, run.MakePreview(e.res.Spec, dev).Occupancy
	}
	p.os = p.plan
}

func (p occPanel) title() string {
	if o, ok := minOcc(p.os); ok && !o.Estimate {
		return "occupancy"
	}
	return "occupancy est."
}

func (p occPanel) View(w, h int) []string { return box(p.th, p.title(), p.lines(w-2), w, h, false) }

func (p occPanel) lines(w int) []string {
	th := p.th
	if len(p.os) == 0 {
		return []string{th.dim.Render("—")}
	}
	o, ok := minOcc(p.os)
	if !ok {
		return append([]string{"n/a"}, wrap(p.os[0].Reason, w)...)
	}
	var out []string
	if len(p.os) > 1 { // the tightest dispatch of a multi-kernel plan
		out = append(out, th.dim.Render(o.Dispatch))
	}
	out = append(out,
		plural(o.GroupsPerUnit, "group")+"/"+p.unit,
		"bound by "+th.warn.Render(o.Limiter),
		fmt.Sprintf("%.0f%% of max threads", o.ThreadsPct),
	)
	if o.Registers > 0 {
		out = append(out, fmt.Sprintf("regs %d/thread, spills %d B", o.Registers, o.SpillBytes))
	} else {
		out = append(out, th.dim.Render("regs: not reported"))
	}
	src := o.Source
	if o.Estimate {
		src = "estimate: " + src
	}
	if o.Confidence != "" {
		src += " (" + o.Confidence + ")"
	}
	return append(out, th.dim.Render(src))
}

// corrPanel is the verdict of the selected run.
type corrPanel struct {
	th  theme
	run *entry
}

func (p corrPanel) title() string {
	if p.run != nil {
		return fmt.Sprintf("correctness #%d", p.run.id)
	}
	return "correctness"
}

func (p corrPanel) View(w, h int) []string { return box(p.th, p.title(), p.lines(w-2), w, h, false) }

func (p corrPanel) lines(w int) []string {
	th := p.th
	if p.run == nil {
		return []string{th.dim.Render("no runs yet")}
	}
	v := p.run.res.Verdict
	if v == nil {
		return []string{th.dim.Render("not verified")}
	}
	verdict := th.good.Render("✓ PASS")
	if !v.Pass {
		verdict = th.bad.Render(fmt.Sprintf("✗ FAIL %d bad", v.Mismatches))
	}
	if v.NaNInf > 0 {
		verdict += th.bad.Render(fmt.Sprintf(" %d NaN/Inf", v.NaNInf))
	}
	out := []string{verdict}
	if !v.Pass && v.Worst != "" {
		for i, l := range wrap("worst "+v.Worst, w) {
			if i < 2 {
				out = append(out, th.bad.Render(l))
			}
		}
	}
	return append(out,
		"max abs "+fmtErr(v.MaxAbsErr),
		"max rel "+fmtErr(v.MaxRelErr),
		"rms     "+fmtErr(v.RMSErr),
		fmt.Sprintf("tol %.0e+%.0e·|x|", v.ATol, v.RTol),
		fmt.Sprintf("rows %d/%d", v.RowsChecked, v.RowsTotal),
	)
}

// timingPanel is the selected run's statistics, and its change against
// the previous run of the kernel and the pinned baseline.
type timingPanel struct {
	th   theme
	run  *entry
	prev *entry
	base *entry
}

func (p timingPanel) View(w, h int) []string {
	return box(p.th, "timing", p.lines(w-2), w, h, false)
}

func (p timingPanel) lines(w int) []string {
	th := p.th
	if p.run == nil {
		return []string{th.dim.Render("r runs the kernel")}
	}
	st := p.run.res.Stats
	if st.N == 0 {
		return []string{th.dim.Render("not measured")}
	}
	out := []string{
		"median " + fmtDur(st.Median),
		"p10–p90 " + fmtRange(st.P10, st.P90),
		fmt.Sprintf("CV %.1f%% · n %d", st.CV*100, st.N),
		fmtThroughput(p.run.res),
	}
	if b := p.prev; b != nil && (p.base == nil || b.id != p.base.id) {
		if d := delta(p.run.res, b.res); d != "" {
			out = append(out, fmt.Sprintf("%s vs previous #%d", d, b.id))
		}
	}
	if b := p.base; b != nil && b.id != p.run.id {
		if d := delta(p.run.res, b.res); d != "" {
			out = append(out, fmt.Sprintf("%s vs baseline #%d", d, b.id))
		}
	}
	out = append(out, "timer "+p.run.res.Timer)
	for _, d := range p.run.res.PerDispatch { // multi-kernel plans: each kernel's median
		out = append(out, th.dim.Render(fit(d.Name, max(1, w-9))+padLeft(fmtDur(d.Stats.Median), 9)))
	}
	return out
}

// errorPanel replaces correctness and timing for a run that produced no
// numbers (compile error, crash, timeout): its error text, head first.
type errorPanel struct {
	th  theme
	run *entry
}

// isFailure is a status whose story is an error message rather than numbers.
func isFailure(s profiler.Status) bool {
	return s != profiler.StatusOK && s != profiler.StatusMismatch
}

func (p errorPanel) show() bool { return p.run != nil && isFailure(p.run.res.Status) }

func (p errorPanel) View(w, h int) []string {
	e := *p.run
	return boxStyled(p.th, p.th.bad, fmt.Sprintf("✗ %s · run #%d", e.res.Status, e.id), p.lines(w-2, h-2), w, h, false)
}

func (p errorPanel) lines(w, h int) []string {
	e := *p.run
	msg := e.res.Error
	if msg == "" {
		msg = string(e.res.Status)
	}
	out := []string{p.th.dim.Render(fit(e.res.Spec.Kernel+" "+string(e.res.Spec.DType)+" "+knobString(e.res.Spec)+" · "+dimString(e.res.Spec), w))}
	lines := wrap(msg, w)
	if room := h - 1; len(lines) > room && room > 1 {
		// Compilers put the first error first: keep the head, say what was cut.
		cut := len(lines) - room + 1
		lines = append(lines[:room-1], "… "+plural(cut, "more line")+" (e exports the full text to CSV)")
	}
	for _, l := range lines {
		out = append(out, p.th.bad.Render(l))
	}
	return out
}
