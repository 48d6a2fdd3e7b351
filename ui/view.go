package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"
	"github.com/mltop/mltop/profiler"
)

// Below these sizes the layout stops shrinking and clips instead.
const (
	minWidth  = 40
	minHeight = 12
)

// View draws the whole screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "mltop"
	return v
}

// Render is the screen as text, exactly m.width×m.height cells (tests and
// the README capture use it).
func (m Model) Render() string {
	w, h := max(m.width, minWidth), max(m.height, minHeight)
	var lines []string
	lines = append(lines, m.header(w))
	bodyH := h - 3
	if m.showHelp {
		lines = append(lines, m.fullHelp(w, bodyH)...)
	} else {
		lines = append(lines, m.body(w, bodyH)...)
	}
	lines = append(lines, m.statusLine(w), m.helpBar(w))
	// Never draw past the terminal: clip every line to the real size.
	out := make([]string, 0, m.height)
	for i, l := range lines {
		if m.height > 0 && i >= m.height {
			break
		}
		out = append(out, fit(l, m.width))
	}
	return strings.Join(out, "\n")
}

func (m Model) header(w int) string {
	d := m.dev
	timer := d.Timer
	if e, ok := m.selected(); ok && e.res.Timer != "" {
		timer = e.res.Timer
	}
	left := m.th.accent.Render("mltop") + "  " + d.Name + " · " + d.Backend + " · timer " + timer
	if d.Units > 0 {
		left += fmt.Sprintf(" · %d %ss", d.Units, unitLabel(d))
	}
	right := m.opts.Backends
	lw := lipgloss.Width(left)
	if right != "" && lw+2+lipgloss.Width(right) <= w {
		return left + strings.Repeat(" ", w-lw-lipgloss.Width(right)) + m.th.dim.Render(right)
	}
	return fit(left, w)
}

func unitLabel(d profiler.DeviceInfo) string {
	if d.UnitName != "" {
		return d.UnitName
	}
	return "unit"
}

func (m Model) body(w, h int) []string {
	panH := clamp(h/4, 6, 8)
	// The editor gets the rows its fields need; the history takes the rest
	// but keeps a header and a row on short terminals.
	topH := max(6, min(len(m.fields)+5, h-panH-4))
	histH := h - panH - topH
	longest := 0
	for _, f := range m.fams {
		longest = max(longest, len(f.Name()))
	}
	listW := clamp(longest+5, 16, max(16, w/5))
	edW := clamp(w*3/10, 28, 40)
	chartW := w - listW - edW

	top := joinCols(
		m.box(m.listTitle(), m.kernelLines(listW-2, topH-2), listW, topH, m.focus == paneKernels),
		m.box(m.editorTitle(), m.editorLines(edW-2, topH-2), edW, topH, m.focus == paneEditor),
		m.box(m.chartTitle(), m.chartLines(chartW-2, topH-2), chartW, topH, false),
	)
	pw := w / 4
	widths := []int{pw, pw, pw, w - 3*pw}
	ih := panH - 2
	var panels [][]string
	panels = append(panels,
		m.box(m.budgetTitle(), m.budgetLines(widths[0]-2, ih), widths[0], panH, false),
		m.box(m.occTitle(), m.occLines(widths[1]-2, ih), widths[1], panH, false),
	)
	if e, ok := m.selected(); ok && isFailure(e.res.Status) {
		ew := widths[2] + widths[3]
		panels = append(panels, m.boxStyled(m.th.bad, fmt.Sprintf("✗ %s · run #%d", e.res.Status, e.id), m.errorLines(e, ew-2, ih), ew, panH, false))
	} else {
		panels = append(panels,
			m.box(m.corrTitle(), m.corrLines(widths[2]-2, ih), widths[2], panH, false),
			m.box("timing", m.timingLines(widths[3]-2, ih), widths[3], panH, false),
		)
	}
	mid := joinCols(panels...)
	hist := m.box(m.historyTitle(), m.historyLines(w-2, histH-2), w, histH, m.focus == paneHistory)
	out := append(top, mid...)
	out = append(out, hist...)
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h]
}

// isFailure is a status whose story is an error message rather than numbers.
func isFailure(s profiler.Status) bool {
	return s != profiler.StatusOK && s != profiler.StatusMismatch
}

// box frames lines (clipped and padded to fit) under a title.
func (m Model) box(title string, lines []string, w, h int, focused bool) []string {
	ts := m.th.title
	if focused {
		ts = m.th.focus
	}
	return m.boxStyled(ts, title, lines, w, h, focused)
}

func (m Model) boxStyled(ts lipgloss.Style, title string, lines []string, w, h int, focused bool) []string {
	if w < 4 || h < 2 {
		return make([]string, max(h, 0))
	}
	bs := m.th.border
	if focused {
		bs = m.th.focusBord
		title = "▸" + title
	}
	iw := w - 2
	t := fit(" "+title+" ", min(iw-1, lipgloss.Width(" "+title+" ")))
	top := bs.Render("╭─") + ts.Render(t) + bs.Render(strings.Repeat("─", max(0, iw-1-lipgloss.Width(t)))+"╮")
	out := []string{top}
	for i := 0; i < h-2; i++ {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out = append(out, bs.Render("│")+fit(l, iw)+bs.Render("│"))
	}
	out = append(out, bs.Render("╰"+strings.Repeat("─", iw)+"╯"))
	return out
}

// joinCols puts equal-height columns side by side.
func joinCols(cols ...[]string) []string {
	h := 0
	for _, c := range cols {
		h = max(h, len(c))
	}
	out := make([]string, h)
	for i := range out {
		var b strings.Builder
		for _, c := range cols {
			if i < len(c) {
				b.WriteString(c[i])
			}
		}
		out[i] = b.String()
	}
	return out
}

// ---- kernel list ----

func (m Model) listTitle() string {
	if m.filter != "" && m.mode != modeFilter {
		return "/" + m.filter
	}
	return "kernels"
}

func (m Model) kernelLines(w, h int) []string {
	var out []string
	if m.mode == modeFilter {
		out = append(out, m.input.View())
	}
	if len(m.visible) == 0 {
		out = append(out, m.th.dim.Render("no kernel matches"), m.th.dim.Render("esc clears the filter"))
		return out
	}
	rows := h - len(out)
	start := clamp(m.listCur-rows/2, 0, max(0, len(m.visible)-rows))
	for j := start; j < len(m.visible) && len(out) < h; j++ {
		f := m.fams[m.visible[j]]
		if m.visible[j] == m.famIdx {
			out = append(out, m.th.sel.Render(fit("▸ "+f.Name(), w)))
		} else {
			out = append(out, "  "+f.Name())
		}
	}
	return out
}

// ---- editor ----

func (m Model) editorTitle() string {
	if f := m.family(); f != nil {
		return f.Name()
	}
	return "editor"
}

func (m Model) editorLines(w, h int) []string {
	f := m.family()
	if f == nil {
		return []string{m.th.dim.Render("pick a kernel on the left")}
	}
	var head []string
	if err := m.preview.Err; err != nil {
		for i, l := range wrap("✗ "+err.Error(), w) {
			if i == 3 {
				break
			}
			head = append(head, m.th.bad.Render(l))
		}
	} else {
		for i, l := range wrap("✓ "+m.previewSummary(w < 30), w) {
			if i == 2 {
				break
			}
			head = append(head, l)
		}
	}
	head = append(head, m.th.dim.Render(strings.Repeat("─", w)))
	s := m.spec()
	rows := max(1, h-len(head))
	start := clamp(m.fieldCur-rows/2, 0, max(0, len(m.fields)-rows))
	named := false
	for _, fd := range m.fields {
		named = named || fd.blames(m.preview.Err)
	}
	out := head
	for i := start; i < len(m.fields) && i < start+rows; i++ {
		fd := m.fields[i]
		val := fd.value(s)
		cur := i == m.fieldCur
		bad := fd.blames(m.preview.Err) || (!named && m.preview.Err != nil && fd.name == m.edited)
		switch {
		case cur && m.mode == modeTyping:
			val = m.input.View()
		case cur && fd.kind != kindFlag:
			val = "◂ " + val + " ▸"
		case cur:
			val = "[" + val + "]"
		}
		mark := "  "
		if cur {
			mark = "▸ "
		}
		name := fit(fd.name, 7)
		if bad {
			val = m.th.bad.Render(val + " ✗")
		}
		line := mark + name + " " + val
		tag := m.th.dim.Render(fd.kind.String())
		if lipgloss.Width(line)+1+lipgloss.Width(tag) <= w {
			line = fit(line, w-lipgloss.Width(tag)) + tag
		}
		if cur && m.focus == paneEditor && m.mode != modeTyping {
			line = m.th.sel.Render(fit(line, w))
		}
		out = append(out, line)
	}
	return out
}

// previewSummary is the one-line budget and occupancy preview.
func (m Model) previewSummary(narrow bool) string {
	p := m.preview
	if len(p.Budget) == 0 {
		return "no threadgroup memory"
	}
	b := p.Budget[0]
	for _, x := range p.Budget[1:] {
		if x.Total > b.Total {
			b = x
		}
	}
	s := "TGM " + fmtKiBPair(b.Total, b.Limit)
	if narrow {
		s = "TGM " + fmtKiBShort(b.Total, b.Limit)
	}
	if o, ok := minOcc(p.Occupancy); ok {
		s += fmt.Sprintf(" · ~%d/%s", o.GroupsPerUnit, unitLabel(m.dev)) // ~: a limits-table estimate
	}
	return s
}

func minOcc(os []profiler.Occupancy) (profiler.Occupancy, bool) {
	r := profiler.Result{Occupancy: os}
	return r.MinOccupancy()
}

// ---- charts ----

func (m Model) chartTitle() string {
	if b := m.batch; b != nil && b.sweep != "" {
		return "throughput vs " + b.sweep
	}
	return "throughput per run"
}

func (m Model) chartLines(w, h int) []string {
	b := m.batch
	if b != nil && b.sweep != "" {
		bars := m.sweepBars(w)
		if h-len(bars) >= 8 && m.okRuns() > 0 {
			out := m.runChart(w, h-len(bars)-1)
			out = append(out, m.th.dim.Render(strings.Repeat("─", w)))
			return append(out, bars...)
		}
		return bars
	}
	return m.runChart(w, h)
}

func (m Model) okRuns() int {
	n := 0
	for _, e := range m.history {
		if _, ok := throughput(e.res); ok {
			n++
		}
	}
	return n
}

// runChart plots the throughput of every measured run in run order.
func (m Model) runChart(w, h int) []string {
	var rs []profiler.Result
	var ids []int
	for _, e := range m.history {
		if _, ok := throughput(e.res); ok {
			rs = append(rs, e.res)
			ids = append(ids, e.id)
		}
	}
	if len(rs) == 0 {
		return wrap("no runs yet: r runs the kernel, s sweeps the selected knob, L loads a YAML sweep", w)
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
	plot := asciigraph.Plot(data, opts...)
	out := strings.Split(plot, "\n")
	if !m.th.plain {
		for i := range out {
			out[i] = m.th.barFill.Render(out[i])
		}
	}
	return append(out, m.th.dim.Render(caption))
}

// sweepBars draws the swept values against their throughput, one bar each.
func (m Model) sweepBars(w int) []string {
	b := m.batch
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
			tail = m.th.warn.Render("measuring…")
		case r == nil && b.running:
			tail = m.th.dim.Render("queued")
		case r == nil:
			tail = m.th.dim.Render("not run")
		case inUnit(*r, unit) == 0:
			tail = m.th.bad.Render("✗ " + string(r.Status))
		default:
			val := inUnit(*r, unit)
			tail = " " + sig3(val)
			if val == best {
				tail += " ★"
			}
			if r.Status == profiler.StatusMismatch {
				tail += m.th.bad.Render(" ✗mismatch")
			}
			bw := max(0, w-labelW-1-12)
			n := int(math.Round(float64(bw) * val / best))
			bar = m.th.barFill.Render(strings.Repeat("█", n))
		}
		out = append(out, label+bar+tail)
	}
	if unit != "" {
		out = append(out, m.th.dim.Render(fmt.Sprintf("%s=value · bars in %s · ★ best", b.sweep, unit)))
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

// ---- panels ----

// budgets are the reports the budget panel shows: the compiled figures of
// the selected run when it is the spec in the editor, else the plan's.
func (m Model) budgets() ([]profiler.BudgetReport, bool) {
	if e, ok := m.selected(); ok && len(e.res.Budget) > 0 && e.res.Spec.Key() == m.preview.Spec.Key() {
		return e.res.Budget, true
	}
	return m.preview.Budget, false
}

func (m Model) budgetTitle() string { return "TGM budget" }

func (m Model) budgetLines(w, h int) []string {
	all, compiled := m.budgets()
	// Dispatches without threadgroup memory (a zero fill, an elementwise
	// prologue) say nothing here; the largest budget comes first.
	var bs []profiler.BudgetReport
	for _, b := range all {
		if b.Total > 0 || len(all) == 1 {
			bs = append(bs, b)
		}
	}
	slices.SortStableFunc(bs, func(a, b profiler.BudgetReport) int { return b.Total - a.Total })
	if len(all) > 0 && len(bs) == 0 {
		return []string{"no threadgroup memory"}
	}
	if len(bs) == 0 {
		if m.preview.Err != nil {
			return []string{m.th.bad.Render("✗ invalid spec"), "fix the value in red"}
		}
		return []string{m.th.dim.Render("no kernel")}
	}
	var out []string
	for _, b := range bs {
		if len(bs) > 1 {
			out = append(out, m.th.dim.Render(b.Dispatch))
		}
		out = append(out, m.bar(b.Total, b.Limit, w))
		for _, it := range b.Items {
			out = append(out, fit(it.Name, max(1, w-10))+padLeft(fmtKiB(it.Bytes), 10))
		}
		switch {
		case b.CompilerTGM > 0:
			out = append(out, "compiler: "+fmtKiB(b.CompilerTGM)+" static")
		case !compiled:
			out = append(out, m.th.dim.Render("compiler: after a run"))
		default:
			out = append(out, m.th.dim.Render("compiler: not reported"))
		}
		for _, wmsg := range b.Warnings {
			out = append(out, m.th.bad.Render("! "+wmsg))
		}
	}
	return out
}

// bar draws used against limit: "████░░░░ 12.5/32.0 KiB".
func (m Model) bar(used, limit, w int) string {
	label := " " + fmtKiBPair(used, limit)
	if w-len([]rune(label)) < 8 {
		label = " " + fmtKiBShort(used, limit)
	}
	if limit <= 0 {
		return fmtKiB(used) + " (no limit reported)"
	}
	over := used > limit
	if over {
		label += " ✗"
	}
	bw := max(4, w-len([]rune(label)))
	n := int(math.Round(float64(bw) * math.Min(1, float64(used)/float64(limit))))
	fill := m.th.barFill
	if over {
		fill = m.th.barOver
	}
	return fill.Render(strings.Repeat("█", n)) + m.th.dim.Render(strings.Repeat("░", bw-n)) + label
}

func (m Model) occupancies() ([]profiler.Occupancy, bool) {
	if e, ok := m.selected(); ok && len(e.res.Occupancy) > 0 && e.res.Spec.Key() == m.preview.Spec.Key() {
		return e.res.Occupancy, true
	}
	return m.preview.Occupancy, false
}

func (m Model) occTitle() string {
	os, _ := m.occupancies()
	if o, ok := minOcc(os); ok && !o.Estimate {
		return "occupancy"
	}
	return "occupancy est."
}

func (m Model) occLines(w, h int) []string {
	os, _ := m.occupancies()
	if len(os) == 0 {
		return []string{m.th.dim.Render("—")}
	}
	o, ok := minOcc(os)
	if !ok {
		return append([]string{"n/a"}, wrap(os[0].Reason, w)...)
	}
	unit := unitLabel(m.dev)
	var out []string
	if len(os) > 1 { // the tightest dispatch of a multi-kernel plan
		out = append(out, m.th.dim.Render(o.Dispatch))
	}
	out = append(out,
		fmt.Sprintf("%d groups/%s", o.GroupsPerUnit, unit),
		"bound by "+m.th.warn.Render(o.Limiter),
		fmt.Sprintf("%.0f%% of max threads", o.ThreadsPct),
	)
	if o.Registers > 0 {
		out = append(out, fmt.Sprintf("regs %d/thread, spills %d B", o.Registers, o.SpillBytes))
	} else {
		out = append(out, m.th.dim.Render("regs: not reported"))
	}
	src := o.Source
	if o.Estimate {
		src = "estimate: " + src
	}
	if o.Confidence != "" {
		src += " (" + o.Confidence + ")"
	}
	return append(out, m.th.dim.Render(src))
}

func (m Model) corrTitle() string {
	if e, ok := m.selected(); ok {
		return fmt.Sprintf("correctness #%d", e.id)
	}
	return "correctness"
}

func (m Model) corrLines(w, h int) []string {
	e, ok := m.selected()
	if !ok {
		return []string{m.th.dim.Render("no runs yet")}
	}
	v := e.res.Verdict
	if v == nil {
		return []string{m.th.dim.Render("not verified")}
	}
	verdict := m.th.good.Render("✓ PASS")
	if !v.Pass {
		verdict = m.th.bad.Render(fmt.Sprintf("✗ FAIL %d bad", v.Mismatches))
	}
	if v.NaNInf > 0 {
		verdict += m.th.bad.Render(fmt.Sprintf(" %d NaN/Inf", v.NaNInf))
	}
	out := []string{verdict}
	if !v.Pass && v.Worst != "" {
		for i, l := range wrap("worst "+v.Worst, w) {
			if i < 2 {
				out = append(out, m.th.bad.Render(l))
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

func (m Model) timingLines(w, h int) []string {
	e, ok := m.selected()
	if !ok {
		return []string{m.th.dim.Render("r runs the kernel")}
	}
	st := e.res.Stats
	if st.N == 0 {
		return []string{m.th.dim.Render("not measured")}
	}
	out := []string{
		"median " + fmtDur(st.Median),
		"p10–p90 " + fmtRange(st.P10, st.P90),
		fmt.Sprintf("CV %.1f%% · n %d", st.CV*100, st.N),
		fmtThroughput(e.res),
		"timer " + e.res.Timer,
	}
	for _, d := range e.res.PerDispatch { // multi-kernel plans: each kernel's median
		out = append(out, m.th.dim.Render(fit(d.Name, max(1, w-9))+padLeft(fmtDur(d.Stats.Median), 9)))
	}
	return out
}

func (m Model) errorLines(e entry, w, h int) []string {
	msg := e.res.Error
	if msg == "" {
		msg = string(e.res.Status)
	}
	out := []string{m.th.dim.Render(fit(e.res.Spec.Kernel+" "+string(e.res.Spec.DType)+" "+knobString(e.res.Spec)+" · "+dimString(e.res.Spec), w))}
	lines := wrap(msg, w)
	if room := h - 1; len(lines) > room && room > 1 {
		// Compilers put the first error first: keep the head, say what was cut.
		lines = append(lines[:room-1], fmt.Sprintf("… %d more lines (e exports the full text to CSV)", len(lines)-room+1))
	}
	for _, l := range lines {
		out = append(out, m.th.bad.Render(l))
	}
	return out
}

// ---- history ----

func (m Model) historyTitle() string {
	c := sortCols[m.sortCol]
	dir := "▲"
	if m.sortDesc {
		dir = "▼"
	}
	return fmt.Sprintf("history · %d runs · sort %s %s", len(m.history), c.name, dir)
}

type histCol struct {
	name     string
	w        int
	right    bool
	optional bool // dropped on narrow terminals
}

var histCols = []histCol{{"#", 4, true, false}, {"kernel", 12, false, false}, {"dtype", 5, false, true}, {"status", 16, false, false}, {"median", 9, true, false}, {"throughput", 14, true, false}, {"max err", 9, true, true}}

// cell is a history column's value for one run.
func cell(name string, e entry) string {
	r := e.res
	switch name {
	case "#":
		return strconv.Itoa(e.id)
	case "kernel":
		return r.Spec.Kernel
	case "dtype":
		return string(r.Spec.DType)
	case "status":
		if r.Status != profiler.StatusOK {
			return "✗ " + string(r.Status)
		}
		return string(r.Status)
	case "median":
		if r.Stats.N > 0 {
			return fmtDur(r.Stats.Median)
		}
	case "throughput":
		return fmtThroughput(r)
	case "max err":
		if r.Verdict != nil {
			return fmtErr(r.Verdict.MaxAbsErr)
		}
	}
	return "—"
}

func (m Model) historyLines(w, h int) []string {
	if len(m.history) == 0 {
		return []string{m.th.dim.Render("runs appear here · o sorts · e exports CSV")}
	}
	cols := histCols
	if w < 100 {
		cols = nil
		for _, c := range histCols {
			if !c.optional {
				cols = append(cols, c)
			}
		}
	}
	row := func(cells []string) string {
		var b strings.Builder
		for i, c := range cols {
			if c.right {
				b.WriteString(padLeft(cells[i], c.w))
			} else {
				b.WriteString(fit(cells[i], c.w))
			}
			b.WriteString(" ")
		}
		b.WriteString(cells[len(cols)])
		return fit(b.String(), w)
	}
	hdr := make([]string, len(cols)+1)
	for i, c := range cols {
		hdr[i] = c.name
		if c.name == sortCols[m.sortCol].name {
			if m.sortDesc {
				hdr[i] += "▼"
			} else {
				hdr[i] += "▲"
			}
		}
	}
	hdr[len(cols)] = "knobs · dims"
	out := []string{m.th.title.Render(row(hdr))}
	rows := m.sortedHistory()
	n := max(1, h-1)
	cur := clamp(m.histCur, 0, len(rows)-1)
	start := 0
	if m.focus == paneHistory {
		start = clamp(cur-n/2, 0, max(0, len(rows)-n))
	}
	for i := start; i < len(rows) && i < start+n; i++ {
		e := rows[i]
		cells := make([]string, 0, len(cols)+1)
		for _, c := range cols {
			cells = append(cells, cell(c.name, e))
		}
		cells = append(cells, knobString(e.res.Spec)+" · "+dimString(e.res.Spec))
		line := row(cells)
		switch {
		case m.focus == paneHistory && i == cur:
			line = m.th.sel.Render("▸" + ansi.Cut(line, 1, w))
		case e.res.Status != profiler.StatusOK:
			line = m.th.bad.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// ---- status and help ----

func (m Model) statusLine(w int) string {
	switch {
	case m.mode == modeExport || m.mode == modeLoad:
		return fit(m.input.View(), w)
	case m.mode == modeTyping:
		f := m.fields[m.fieldCur]
		return fit(m.th.warn.Render(fmt.Sprintf("type %s %s · enter sets it, esc cancels", f.name, f.allowed())), w)
	case m.mode == modeFilter:
		return fit(m.th.warn.Render("filter kernels by name · enter keeps the filter, esc clears it"), w)
	case m.running():
		b := m.batch
		p := b.progress
		s := fmt.Sprintf("▶ %s %d/%d", b.label, min(b.done+1, len(b.specs)), len(b.specs))
		if b.current < len(b.specs) {
			s += " · " + b.specs[b.current].Kernel + " " + knobString(b.specs[b.current])
		}
		if p.Phase != "" {
			s += " · " + p.Phase
		}
		if p.Samples > 0 {
			s += fmt.Sprintf(" n=%d median %s cv %.1f%%", p.Samples, fmtDur(p.Median), p.CV*100)
		}
		return fit(m.th.warn.Render(s+" · esc cancels"), w)
	case m.msg != "":
		if m.msgBad {
			return fit(m.th.bad.Render(m.msg), w)
		}
		return fit(m.msg, w)
	case m.focus == paneEditor && len(m.fields) > 0:
		f := m.fields[m.fieldCur]
		s := f.name + " " + f.allowed()
		if d := f.doc(); d != "" {
			s += " · " + d
		}
		return fit(m.th.dim.Render(s), w)
	case m.focus == paneKernels && m.family() != nil:
		return fit(m.th.dim.Render(m.family().Doc()), w)
	}
	return fit("", w)
}

func (m Model) helpBar(w int) string {
	hm := m.help
	hm.SetWidth(w)
	return hm.ShortHelpView(m.keys.ShortHelp())
}

// fullHelp is the `?` screen: every binding, grouped, in two columns when
// the terminal is wide enough.
func (m Model) fullHelp(w, h int) []string {
	k := m.keys
	group := func(title string, bs ...key.Binding) []string {
		out := []string{m.th.title.Render(title)}
		for _, b := range bs {
			out = append(out, m.th.helpKey.Render(fit(b.Help().Key, 10))+" "+b.Help().Desc)
		}
		return append(out, "")
	}
	left := append(group("navigate", k.Up, k.Down, k.Tab, k.BackTab, k.Filter),
		group("edit", k.Left, k.Right, k.Enter, k.Reset)...)
	right := append(group("measure", k.Run, k.Sweep, k.Load, k.Cancel),
		group("results", k.Sort, k.Reverse, k.Export, k.Help, k.Quit)...)
	var lines []string
	if cw := (w - 2) / 2; cw >= 32 {
		for i := range max(len(left), len(right)) {
			l, r := "", ""
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			lines = append(lines, fit(l, cw)+r)
		}
	} else {
		lines = append(left, right...)
	}
	for _, p := range []string{
		"The editor steps knobs and dims through their allowed values; the TGM budget and the occupancy estimate follow every change before anything runs.",
		"s sweeps the knob under the editor cursor over its allowed values. In the history (tab to it) ↑/↓ pick the run the bottom panels describe.",
		"esc or ? closes this help.",
	} {
		lines = append(lines, wrap(p, w-2)...)
	}
	return m.box("help", lines, w, h, true)
}
