package ui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds every style the session draws with. The plain theme carries no
// colour at all (NO_COLOR, --no-color); markers such as ✗, ▸ and [ ] carry
// the meaning there, so nothing is conveyed by colour alone.
type theme struct {
	plain     bool
	title     lipgloss.Style // panel titles
	focus     lipgloss.Style // the focused panel's title
	border    lipgloss.Style
	focusBord lipgloss.Style
	dim       lipgloss.Style
	sel       lipgloss.Style // selected row
	bad       lipgloss.Style // errors, failures, invalid values
	good      lipgloss.Style // pass
	warn      lipgloss.Style
	accent    lipgloss.Style // header, chart
	barFill   lipgloss.Style
	barOver   lipgloss.Style
	helpKey   lipgloss.Style
	helpDesc  lipgloss.Style
}

func newTheme(plain bool) theme {
	s := lipgloss.NewStyle
	if plain { // text attributes only: the ASCII profile keeps bold and reverse
		b := s().Bold(true)
		return theme{plain: true, title: b, focus: b, border: s(), focusBord: s(), dim: s(), sel: s().Reverse(true), bad: b, good: s(), warn: s(), accent: b, barFill: s(), barOver: s(), helpKey: b, helpDesc: s()}
	}
	c := func(hex string) color.Color { return lipgloss.Color(hex) }
	return theme{
		title:     s().Bold(true).Foreground(c("#8fbcbb")),
		focus:     s().Bold(true).Foreground(c("#ebcb8b")),
		border:    s().Foreground(c("#4c566a")),
		focusBord: s().Foreground(c("#ebcb8b")),
		dim:       s().Foreground(c("#7b8394")),
		sel:       s().Bold(true).Foreground(c("#eceff4")).Background(c("#3b4252")),
		bad:       s().Bold(true).Foreground(c("#ff6b6b")),
		good:      s().Bold(true).Foreground(c("#a3be8c")),
		warn:      s().Foreground(c("#ebcb8b")),
		accent:    s().Bold(true).Foreground(c("#88c0d0")),
		barFill:   s().Foreground(c("#81a1c1")),
		barOver:   s().Foreground(c("#ff6b6b")),
		helpKey:   s().Foreground(c("#88c0d0")),
		helpDesc:  s().Foreground(c("#7b8394")),
	}
}
