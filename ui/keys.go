package ui

import "charm.land/bubbles/v2/key"

// keyMap is every binding of the session; KEYS.md lists the same map for
// the README.
type keyMap struct {
	Up, Down, Left, Right key.Binding
	Enter, Tab, BackTab   key.Binding
	Filter                key.Binding
	Run, Sweep, Load      key.Binding
	Tune, Fix             key.Binding
	Cancel                key.Binding
	Export, Sort, Reverse key.Binding
	Pin                   key.Binding
	Reset                 key.Binding
	Help, Quit            key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return keyMap{
		Up:      b([]string{"up", "k"}, "↑/k", "up"),
		Down:    b([]string{"down", "j"}, "↓/j", "down"),
		Left:    b([]string{"left", "h"}, "←/h", "previous value"),
		Right:   b([]string{"right", "l"}, "→/l", "next value"),
		Enter:   b([]string{"enter"}, "enter", "type a value"),
		Tab:     b([]string{"tab"}, "tab", "next pane"),
		BackTab: b([]string{"shift+tab"}, "shift+tab", "previous pane"),
		Filter:  b([]string{"/"}, "/", "filter kernels"),
		Run:     b([]string{"r"}, "r", "run"),
		Sweep:   b([]string{"s"}, "s", "sweep knob"),
		Load:    b([]string{"L"}, "L", "load YAML sweep"),
		Tune:    b([]string{"T"}, "T", "tune the free knobs"),
		Fix:     b([]string{"f"}, "f", "fix/free knob for T"),
		Cancel:  b([]string{"esc"}, "esc", "cancel"),
		Export:  b([]string{"e"}, "e", "export CSV"),
		Sort:    b([]string{"o"}, "o", "sort column"),
		Reverse: b([]string{"O"}, "O", "reverse sort"),
		Pin:     b([]string{"p"}, "p", "pin baseline"),
		Reset:   b([]string{"d"}, "d", "default value"),
		Help:    b([]string{"?"}, "?", "help"),
		Quit:    b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// ShortHelp is the always-visible help bar: short words, the most used
// first, help and quit early so they survive truncation on narrow terminals.
// In the kernel list (where the session starts) it begins with how to pick
// a kernel and reach its knobs.
func (k keyMap) ShortHelp(focus pane) []key.Binding {
	short := func(b key.Binding, keys, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keys, desc))
	}
	if focus == paneKernels {
		return []key.Binding{
			short(k.Down, "↑↓", "pick kernel"), short(k.Enter, "enter", "edit its knobs"),
			short(k.Run, "r", "run"), short(k.Help, "?", "help"), short(k.Quit, "q", "quit"),
			short(k.Tab, "tab", "pane"), short(k.Filter, "/", "filter"), short(k.Load, "L", "load"),
			short(k.Sweep, "s", "sweep"), short(k.Cancel, "esc", "clear filter"),
		}
	}
	return []key.Binding{
		short(k.Run, "r", "run"), short(k.Sweep, "s", "sweep"), short(k.Left, "←→", "step"),
		short(k.Enter, "enter", "type"), short(k.Help, "?", "help"), short(k.Quit, "q", "quit"),
		short(k.Tab, "tab", "pane"), short(k.Filter, "/", "filter"), short(k.Load, "L", "load"),
		short(k.Tune, "T", "tune"), short(k.Export, "e", "export"), short(k.Sort, "o", "sort"),
		short(k.Cancel, "esc", "cancel"),
	}
}

// FullHelp is the `?` screen, grouped by columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Tab, k.BackTab, k.Filter},
		{k.Left, k.Right, k.Enter, k.Reset, k.Fix},
		{k.Run, k.Sweep, k.Tune, k.Load, k.Cancel},
		{k.Export, k.Sort, k.Reverse, k.Pin, k.Help, k.Quit},
	}
}
