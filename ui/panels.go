package ui

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/compare"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/units"
)

// occPanel is the occupancy of the tightest dispatch: measured by the
// driver, or estimated from the device's limits table.
type occPanel struct {
	th      theme
	of      string // " #9 attn_fwd" when it shows a run of another kernel than the editor's
	unit    string
	os      []profiler.Occupancy
	planKey string
	plan    []profiler.Occupancy
}

func (p *occPanel) showPreview(pv run.Preview) { p.os, p.of = pv.Occupancy, "" }

// showRun describes a run: its figures, or the plan of its spec when it
// never compiled.
func (p *occPanel) showRun(e entry, dev profiler.DeviceInfo) {
	p.of = ""
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
		return "occupancy" + p.of
	}
	return "occupancy est." + p.of
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
	th    theme
	run   *entry
	other bool // the run is of another kernel than the editor's: the title names it
}

func (p corrPanel) title() string {
	if p.run != nil {
		return "correctness" + runTitle(*p.run, p.other)
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
		// What the verdict rests on: a max rel above rtol can pass when the
		// bound grows with the reduction; at most 1 passes.
		"err/bnd "+sink.ErrBound(v),
		"tol "+tolText(v),
		fmt.Sprintf("rows %d/%d", v.RowsChecked, v.RowsTotal),
		"rms     "+fmtErr(v.RMSErr), // last: the first to go in a short panel
	)
}

// tolText is the verdict's tolerance: "1e-05+1e-04·|x|", or "exact"
// where no difference is allowed (a transpose, a copy: outputs that are
// inputs moved, compared bit for bit).
func tolText(v *profiler.Verdict) string {
	if v.ATol == 0 && v.RTol == 0 {
		return "exact"
	}
	return fmt.Sprintf("%.0e+%.0e·|x|", v.ATol, v.RTol)
}

// timingPanel is the selected run's statistics, and its change against
// the previous run of the kernel and the pinned baseline.
type timingPanel struct {
	th    theme
	run   *entry
	prev  *entry
	base  *entry
	other bool // the run is of another kernel than the editor's: the title names it
	// compare judges a run against an earlier one (history.compare).
	compare func(base, now entry) (compare.Result, bool)
}

// runTitle is the run a panel's title names: " #9", and its kernel
// (" #9 attn_fwd") when the editor holds another kernel, so no two panels
// describe two kernels without saying so.
func runTitle(e entry, other bool) string {
	if other {
		return fmt.Sprintf(" #%d %s", e.id, e.res.Spec.Kernel)
	}
	return fmt.Sprintf(" #%d", e.id)
}

func (p timingPanel) View(w, h int) []string {
	title := "timing"
	if p.run != nil && p.other {
		title += runTitle(*p.run, true)
	}
	return box(p.th, title, p.lines(w-2, h-2), w, h, false)
}

func (p timingPanel) lines(w, h int) []string {
	th := p.th
	if p.run == nil {
		return []string{th.dim.Render("r runs the kernel")}
	}
	st := p.run.res.Stats
	if st.N == 0 {
		return []string{th.dim.Render("not measured")}
	}
	out := []string{
		"median " + units.Nanos(st.Median),
		fmtThroughput(p.run.res),
	}
	// The change against the previous run of the kernel and the pinned
	// baseline comes before the details: it is what a rerun is for. Each
	// says whether it is a change at all (faster, slower, within noise),
	// and, room permitting, its 95 % interval on a second line.
	var heads, details []string
	row := func(label string, b *entry) bool {
		c, ok := p.compare(*b, *p.run)
		if !ok {
			return false
		}
		mark := verdictMark(b.res)
		if now := verdictMark(p.run.res); now != mark {
			mark += "→" + now
		}
		word := c.Word()
		if c.Verdict == compare.Faster || c.Verdict == compare.Slower {
			word = th.good.Render(word)
			if c.Verdict == compare.Slower {
				word = th.warn.Render(c.Word())
			}
		}
		head := fmt.Sprintf("%s#%d %+.1f%% %s %s", label, b.id, c.Pct(), word, mark)
		if ansi.StringWidth(head) > w && c.NoiseHit { // narrow: the marker stays
			head = fmt.Sprintf("%s#%d %+.1f%% ≈noise %s", label, b.id, c.Pct(), mark)
		}
		detail := "  no CI: no samples kept"
		if iv := c.Interval(); iv != "" {
			detail = fmt.Sprintf("  %.0f%% CI %s", c.Level*100, iv)
		}
		heads, details = append(heads, head), append(details, th.dim.Render(detail))
		return true
	}
	var notes []string
	// The previous run (#id) and the baseline (◆#id, as the history marks
	// it): Δ median time (negative is faster), the verdict, correctness.
	if b := p.prev; b != nil && (p.base == nil || b.id != p.base.id) {
		row("", b)
	}
	if b := p.base; b != nil && b.id != p.run.id && !row("◆", b) {
		why := "baseline is another shape" // not comparable: say why rather than nothing
		if b.res.Spec.Kernel != p.run.res.Spec.Kernel {
			why = "baseline is another kernel"
		}
		for _, l := range wrap(fmt.Sprintf("◆#%d %s", b.id, why), w) {
			notes = append(notes, th.dim.Render(l))
		}
	}
	rest := []string{
		"p10–p90 " + fmtRange(st.P10, st.P90),
		fmt.Sprintf("CV %.1f%% · n %d", st.CV*100, st.N),
		"timer " + p.run.res.Timer,
	}
	// With room, each change's interval under it; else the changes alone
	// and the spread below them.
	withCI := len(out)+2*len(heads)+len(notes)+2 <= h
	for i, hd := range heads {
		out = append(out, hd)
		if withCI {
			out = append(out, details[i])
		}
	}
	out = append(append(out, notes...), rest...)
	if mhz := p.run.res.SMClockMHz; mhz > 0 {
		out = append(out, fmt.Sprintf("SM clock %.0f MHz", mhz))
	}
	for _, d := range p.run.res.PerDispatch { // multi-kernel plans: each kernel's median
		out = append(out, th.dim.Render(fit(d.Name, max(1, w-9))+padLeft(units.Nanos(d.Stats.Median), 9)))
	}
	return out
}

// errorPanel replaces correctness and timing for a run that produced no
// numbers (compile error, crash, timeout), or a user kernel whose reload
// failed: its error text, the first error (the line naming the user's
// file:line) first and whole, wrapped, never cut.
type errorPanel struct {
	th   theme
	run  *entry
	load *loadError
}

// isFailure is a status whose story is an error message rather than numbers.
func isFailure(s profiler.Status) bool {
	return s != profiler.StatusOK && s != profiler.StatusMismatch
}

func (p errorPanel) show() bool {
	return p.load != nil || (p.run != nil && isFailure(p.run.res.Status))
}

// wide is an error that leaves the occupancy nothing to say (the kernel
// never compiled): the panel takes its room too.
func (p errorPanel) wide() bool {
	return p.load != nil || p.run.res.Status == profiler.StatusCompileError ||
		p.run.res.CannotRun() // never compiled either
}

func (p errorPanel) View(w, h int) []string {
	if p.load != nil {
		title := "✗ reload failed · " + filepath.Base(p.load.source)
		if at := profiler.SiteLabel(p.load.text); at != "" {
			title = "✗ reload failed · " + at
		}
		return boxStyled(p.th, p.th.bad, title, p.lines(w-2, h-2), w, h, false)
	}
	e := *p.run
	title := fmt.Sprintf("✗ %s · run #%d", e.res.Status, e.id)
	if at := profiler.SiteLabel(e.res.Error); at != "" && e.res.Status == profiler.StatusCompileError {
		title += " · " + at
	}
	return boxStyled(p.th, p.th.bad, title, p.lines(w-2, h-2), w, h, false)
}

func (p errorPanel) lines(w, h int) []string {
	var head, msg, tail string
	if p.load != nil {
		msg = p.load.text
		tail = "the kernel as loaded before stays: fix and save to reload"
	} else {
		e := *p.run
		msg = reason(e.res)
		if msg == "" {
			msg = string(e.res.Status)
		}
		head = fit(e.res.Spec.Kernel+" "+string(e.res.Spec.DType)+" "+knobString(e.res.Spec)+" · "+dimString(e.res.Spec), w)
	}
	// The first error, whole, before the rest of the message (a compiler's
	// log starts with what called it).
	first := ""
	if _, _, text, ok := profiler.ErrorSite(msg); ok {
		first = text
		msg = strings.Replace(msg, text, "", 1)
	} else if p.run != nil && p.run.res.Status == profiler.StatusInvalid {
		first, msg, _ = strings.Cut(msg, "\n") // the reason's first line, whole
	}
	var out []string
	for _, l := range wrap(first, w) {
		out = append(out, p.th.bad.Render(l))
	}
	var rest []string
	for _, l := range wrap(strings.TrimSpace(msg), w) {
		if strings.TrimSpace(l) != "" { // the first error's place stays no gap
			rest = append(rest, l)
		}
	}
	if tail != "" {
		rest = append(rest, wrap(tail, w)...)
	}
	room := h - len(out)
	if head != "" {
		room--
	}
	if len(rest) > room && room > 1 {
		cut := len(rest) - room + 1
		rest = append(rest[:room-1], "… "+plural(cut, "more line")+" (e exports the full text to CSV)")
	}
	for _, l := range rest {
		out = append(out, p.th.bad.Render(l))
	}
	if head != "" {
		out = append([]string{p.th.dim.Render(head)}, out...)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
