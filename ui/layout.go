package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/mltop/mltop/profiler"
)

// Below these sizes the layout stops shrinking and clips instead.
const (
	minWidth  = 40
	minHeight = 12
)

// layout is where each component goes. It depends on the terminal size
// only, never on the kernel or the data, so nothing jumps when the user
// moves between kernels or a run arrives.
type layout struct {
	listW, edW, chartW int // top row: kernel list, editor, chart
	topH, panH, histH  int // rows: top, panels, history
	panW               [4]int
}

func makeLayout(w, h, longestName int) layout {
	var l layout
	l.panH = clamp(h/4, 6, 8)
	rest := h - l.panH
	l.topH = clamp(rest*2/3, 6, max(6, rest-4))
	l.histH = h - l.panH - l.topH
	l.listW = clamp(longestName+5, 16, max(16, w/4))
	l.edW = clamp(w*3/10, 28, 40)
	l.chartW = w - l.listW - l.edW
	pw := w / 4
	l.panW = [4]int{pw, pw, pw, w - 3*pw}
	return l
}

// box frames lines (clipped and padded to fit) under a title: exactly w×h
// cells.
func box(th theme, title string, lines []string, w, h int, focused bool) []string {
	ts := th.title
	if focused {
		ts = th.focus
	}
	return boxStyled(th, ts, title, lines, w, h, focused)
}

func boxStyled(th theme, ts lipgloss.Style, title string, lines []string, w, h int, focused bool) []string {
	if w < 4 || h < 2 {
		return make([]string, max(h, 0))
	}
	bs := th.border
	if focused {
		bs = th.focusBord
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

// window picks the rows [start, end) of n that h lines show around the
// cursor, keeping a line for "↑ N more" above and "↓ N more" below when
// rows are hidden there.
func window(n, cur, h int) (start, end int) {
	h = max(1, h)
	if n <= h {
		return 0, n
	}
	rows := h
	for range 3 {
		start = clamp(cur-rows/2, 0, max(0, n-rows))
		end = min(n, start+rows)
		r := h
		if start > 0 {
			r--
		}
		if end < n {
			r--
		}
		r = max(1, r)
		if r == rows {
			break
		}
		rows = r
	}
	start = clamp(cur-rows/2, 0, max(0, n-rows))
	return start, min(n, start+rows)
}

// scrollMarks adds the "↑ N more" / "↓ N more" lines around rows
// [start, end) of n.
func scrollMarks(th theme, rows []string, start, end, n int) []string {
	var out []string
	if start > 0 {
		out = append(out, th.dim.Render(fmt.Sprintf("↑ %d more", start)))
	}
	out = append(out, rows...)
	if end < n {
		out = append(out, th.dim.Render(fmt.Sprintf("↓ %d more", n-end)))
	}
	return out
}

// scrollLines shows h of lines from offset off with scroll marks; it
// returns the offset clamped to what can be shown.
func scrollLines(th theme, lines []string, off, h int) ([]string, int) {
	n := len(lines)
	if n <= h {
		return lines, 0
	}
	h = max(2, h)
	// The last page ends with the last line and has only an "↑" mark.
	maxOff := n - (h - 1)
	off = clamp(off, 0, maxOff)
	rows := h
	if off > 0 {
		rows--
	}
	end := min(n, off+rows)
	if end < n {
		end--
	}
	return scrollMarks(th, lines[off:end], off, end, n), off
}

// plural is "1 run", "2 runs".
func plural(n int, word string) string { return profiler.Plural(n, word, word+"s") }
