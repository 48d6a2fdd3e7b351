package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// helpScreen is the help bar at the bottom and the `?` screen.
type helpScreen struct {
	th   theme
	keys keyMap
	bar  help.Model
	open bool
}

func newHelpScreen(th theme, keys keyMap) helpScreen {
	h := help.New()
	h.Styles.ShortKey = th.helpKey
	h.Styles.ShortDesc = th.helpDesc
	h.Styles.ShortSeparator = th.dim
	h.Styles.Ellipsis = th.dim
	h.Styles.FullKey = th.helpKey
	h.Styles.FullDesc = th.helpDesc
	h.Styles.FullSeparator = th.dim
	return helpScreen{th: th, keys: keys, bar: h}
}

// Bar is the always-visible short help for the focused pane, w cells wide.
func (s helpScreen) Bar(w int, focus pane) string {
	hm := s.bar
	hm.SetWidth(w)
	return hm.ShortHelpView(s.keys.ShortHelp(focus))
}

// View is the `?` screen: every binding, grouped, in two columns when the
// terminal is wide enough.
func (s helpScreen) View(w, h int) []string {
	k, th := s.keys, s.th
	group := func(title string, bs ...key.Binding) []string {
		out := []string{th.title.Render(title)}
		for _, b := range bs {
			out = append(out, th.helpKey.Render(fit(b.Help().Key, 10))+" "+b.Help().Desc)
		}
		return append(out, "")
	}
	left := append(group("navigate", k.Up, k.Down, k.Tab, k.BackTab, k.Filter),
		group("edit", k.Left, k.Right, k.Enter, k.Reset, k.Fix)...)
	right := append(group("measure", k.Run, k.Sweep, k.Tune, k.Load, k.Cancel),
		group("results", k.Sort, k.Reverse, k.Pin, k.Export, k.Help, k.Quit)...)
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
		"s sweeps the knob under the editor cursor over its allowed values. T tunes the knobs not fixed with f (a search under a budget) and loads the winner into the editor. In the history (tab to it) ↑/↓ pick the run the panels describe, p pins it as the baseline; tab once more scrolls the TGM budget.",
		"While a prompt is open (filter, value, path) every key goes to it. esc or ? closes this help.",
	} {
		lines = append(lines, wrap(p, w-2)...)
	}
	return box(th, "help", lines, w, h, true)
}
