package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mltop/mltop/profiler"
)

// kernelList is the list of families, narrowed by the filter. It scrolls
// around its cursor and says how many rows are hidden above and below.
type kernelList struct {
	th      theme
	fams    []profiler.Family
	visible []int // indices of fams that pass the filter
	filter  string
	cur     int // cursor in visible
	sel     int // selected family, index in fams (-1: none)
	longest int // the longest name: fixes the column width
}

func newKernelList(th theme, fams []profiler.Family) kernelList {
	l := kernelList{th: th, fams: fams, sel: -1}
	for _, f := range fams {
		l.longest = max(l.longest, len(f.Name()))
	}
	l.setFilter("")
	if len(l.visible) > 0 {
		l.sel = l.visible[0]
	}
	return l
}

func (l kernelList) selectedFamily() profiler.Family {
	if l.sel < 0 || l.sel >= len(l.fams) {
		return nil
	}
	return l.fams[l.sel]
}

// setFilter narrows the list to names containing s (any case) and keeps the
// cursor on the selected family when it is still listed.
func (l *kernelList) setFilter(s string) {
	l.filter = s
	l.visible = l.visible[:0]
	for i, f := range l.fams {
		if s == "" || containsFold(f.Name(), s) {
			l.visible = append(l.visible, i)
		}
	}
	l.cur = 0
	for j, i := range l.visible {
		if i == l.sel {
			l.cur = j
		}
	}
	if len(l.visible) > 0 {
		l.sel = l.visible[l.cur]
	}
}

// Update moves the cursor; the selection follows it.
func (l kernelList) Update(k tea.KeyPressMsg, keys keyMap) kernelList {
	if len(l.visible) == 0 {
		return l
	}
	switch {
	case key.Matches(k, keys.Up):
		l.cur--
	case key.Matches(k, keys.Down):
		l.cur++
	default:
		return l
	}
	l.cur = clamp(l.cur, 0, len(l.visible)-1)
	l.sel = l.visible[l.cur]
	return l
}

func (l kernelList) title(filtering bool) string {
	if l.filter != "" && !filtering {
		return "/" + l.filter
	}
	return "kernels"
}

// View is the list boxed to w×h; filterInput is the open filter prompt's
// line, empty when the filter is closed.
func (l kernelList) View(w, h int, focused bool, filterInput string) []string {
	iw, ih := w-2, h-2
	var out []string
	if filterInput != "" {
		out = append(out, filterInput)
	}
	if len(l.visible) == 0 {
		out = append(out, l.th.dim.Render("no kernel matches"), l.th.dim.Render("esc clears the filter"))
		return box(l.th, l.title(filterInput != ""), out, w, h, focused)
	}
	start, end := window(len(l.visible), l.cur, ih-len(out))
	var rows []string
	for j := start; j < end; j++ {
		f := l.fams[l.visible[j]]
		if l.visible[j] == l.sel {
			rows = append(rows, l.th.sel.Render(fit("▸ "+f.Name(), iw)))
		} else {
			rows = append(rows, "  "+f.Name())
		}
	}
	out = append(out, scrollMarks(l.th, rows, start, end, len(l.visible))...)
	return box(l.th, l.title(filterInput != ""), out, w, h, focused)
}
