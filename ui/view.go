package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mltop/mltop/profiler/units"
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
	if m.help.open {
		lines = append(lines, m.help.View(w, bodyH)...)
	} else {
		lines = append(lines, m.body(w, bodyH)...)
	}
	lines = append(lines, m.statusLine(w), m.help.Bar(w, m.focus))
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
	if devs := m.devicesText(); devs != "" {
		left += " │ " + devs
	}
	right := m.opts.Backends
	lw := lipgloss.Width(left)
	if right != "" && lw+2+lipgloss.Width(right) <= w {
		return left + strings.Repeat(" ", w-lw-lipgloss.Width(right)) + m.th.dim.Render(right)
	}
	return fit(left, w)
}

// body lays the components out on a grid that depends on the terminal size
// only: kernel list, editor and chart on top; budget, occupancy,
// correctness and timing (or the error of a failed run) in the middle; the
// history at the bottom.
func (m Model) body(w, h int) []string {
	l := makeLayout(w, h, m.list.longest)
	top := joinCols(
		m.list.View(l.listW, l.topH, m.focus == paneKernels, m.prompt.View(promptFilter)),
		m.editor.View(l.edW, l.topH, m.focus == paneEditor, m.prompt.View(promptTyping)),
		m.chart.View(l.chartW, l.topH),
	)
	panels := [][]string{m.budget.View(l.panW[0], l.panH, m.focus == paneBudget)}
	switch {
	case m.errp.show() && m.errp.wide():
		panels = append(panels, m.errp.View(l.panW[1]+l.panW[2]+l.panW[3], l.panH))
	case m.errp.show():
		panels = append(panels, m.occ.View(l.panW[1], l.panH), m.errp.View(l.panW[2]+l.panW[3], l.panH))
	default:
		panels = append(panels, m.occ.View(l.panW[1], l.panH))
		panels = append(panels, m.corr.View(l.panW[2], l.panH), m.timing.View(l.panW[3], l.panH))
	}
	out := append(top, joinCols(panels...)...)
	out = append(out, m.hist.View(w, l.histH, m.focus == paneHistory)...)
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h]
}

// statusLine says, in order: the open path prompt; what the typing and
// filter prompts take; the last message (it stays until the next key, even
// during a run); the progress of a run; the focused field's doc.
func (m Model) statusLine(w int) string {
	th := m.th
	switch {
	case m.prompt.kind == promptExport || m.prompt.kind == promptLoad || m.prompt.kind == promptAsk || m.prompt.kind == promptTune:
		return fit(m.prompt.input.View(), w)
	case m.prompt.kind == promptTyping:
		f, _ := m.editor.field()
		return fit(th.warn.Render(fmt.Sprintf("type %s %s · enter sets it, esc cancels", f.name, f.allowed())), w)
	case m.prompt.kind == promptFilter:
		return fit(th.warn.Render("filter kernels by name · enter keeps the filter, esc clears it"), w)
	case m.msg != "":
		// The message comes first and stays until the next key; a run's
		// progress follows it in what room is left.
		msg := m.msg
		if m.msgBad {
			msg = th.bad.Render(msg)
		}
		if m.running() {
			msg += th.dim.Render("  │ " + m.progress())
		}
		return fit(msg, w)
	case m.running():
		return fit(th.warn.Render(m.progress()+" · esc cancels"), w)
	case m.focus == paneEditor && m.editor.preview.Err != nil:
		return fit(th.bad.Render(m.editor.preview.Err.Error()), w)
	case m.focus == paneEditor && len(m.editor.fields) > 0:
		f, _ := m.editor.field()
		s := f.name + " " + f.allowed()
		if d := f.doc(); d != "" {
			s += " · " + d
		}
		return fit(th.dim.Render(s), w)
	case m.focus == paneKernels && m.family() != nil:
		return fit(th.dim.Render("kernel list: ↑/↓ pick · enter edits "+m.family().Name()+" · "+m.family().Doc()), w)
	case m.focus == paneHistory && m.hist.len() > 0:
		return fit(th.dim.Render("↑/↓ pick the run the panels describe · p pins it as the baseline · o/O sort · e exports"), w)
	case m.focus == paneBudget:
		return fit(th.dim.Render("TGM budget: ↑/↓ scroll · tab leaves"), w)
	}
	return fit("", w)
}

// progress is the run in flight: "▶ sweep BQ 2/3 · attn_fwd BQ=64 … · measure n=7 …".
func (m Model) progress() string {
	b := m.batch
	if b.tune != nil {
		return m.tuneProgress()
	}
	p := b.progress
	s := fmt.Sprintf("▶ %s %d/%d", b.label, min(b.done+1, len(b.specs)), len(b.specs))
	if b.current < len(b.specs) {
		s += " · " + b.specs[b.current].Kernel + " " + knobString(b.specs[b.current])
	}
	if p.Phase != "" {
		s += " · " + p.Phase
	}
	if p.Samples > 0 {
		s += fmt.Sprintf(" n=%d median %s cv %.1f%%", p.Samples, units.Nanos(p.Median), p.CV*100)
	}
	return s
}
