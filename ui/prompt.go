package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// promptKind is what an open prompt edits.
type promptKind int

const (
	promptNone   promptKind = iota
	promptFilter            // the kernel list's filter, drawn in the list
	promptTyping            // a value of the editor's current field, drawn in the editor
	promptExport            // the CSV path of `e`, drawn in the status line
	promptLoad              // the YAML path of `L`, drawn in the status line
	promptAsk               // y/n before loading a sweep of more than run.BigSweep specs
	promptTune              // the budget and strategy of `T`, drawn in the status line
)

// prompt is the one-line editor behind `/`, `enter` in the editor, `e`,
// `L` and `T`. While it is open the root hands it every key, so a typed path never
// turns into commands.
type prompt struct {
	kind  promptKind
	input textinput.Model
}

func newPrompt(th theme, plain bool) prompt {
	in := textinput.New()
	st := textinput.DefaultDarkStyles()
	st.Cursor.Blink = false // a steady cursor keeps frames reproducible
	if plain {
		st = textinput.Styles{}
	}
	in.SetStyles(st)
	return prompt{input: in}
}

func (p prompt) active() bool { return p.kind != promptNone }

// open shows the prompt with a label and a starting value, width cells wide.
func (p *prompt) open(kind promptKind, label, value string, width int) tea.Cmd {
	p.kind = kind
	p.input.Prompt = label
	p.input.Placeholder = ""
	// The width first: the input scrolls to the cursor with the width it
	// has when the value is set, so setting it afterwards would keep the
	// scroll of the previous, narrower prompt and cut the path's start.
	p.input.SetWidth(max(10, width-ansi.StringWidth(label)-4))
	p.input.SetValue(value)
	p.input.CursorEnd()
	return p.input.Focus()
}

func (p *prompt) close() {
	p.kind = promptNone
	p.input.Blur()
}

func (p prompt) value() string { return strings.TrimSpace(p.input.Value()) }

// Update hands the message to the line editor.
func (p prompt) Update(msg tea.Msg) (prompt, tea.Cmd) {
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return p, cmd
}

// View is the prompt's line when it is open as kind, else "".
func (p prompt) View(kind promptKind) string {
	if p.kind != kind {
		return ""
	}
	return p.input.View()
}
