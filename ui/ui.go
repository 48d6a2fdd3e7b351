// Package ui is mltop's interactive session: a bubbletea program that edits a
// kernel family's knobs, previews the threadgroup-memory budget and the
// occupancy estimate as they change, runs specs on an Executor in the
// background and shows throughput, correctness and timing as results arrive.
//
// The session is a root Model composed of one model per component, each in
// its own file with its own state and a View(width, height):
//
//	kernellist.go   kernelList   the families, filtered, with scroll marks
//	editor.go       editor       knobs, dtype, dims, flags of the selected family; the live preview
//	chart.go        chart        throughput per run, or the current sweep's bars
//	budget.go       budgetPanel  every dispatch's threadgroup-memory budget (scrolls)
//	panels.go       occPanel, corrPanel, timingPanel, errorPanel: the selected run
//	history.go      history      every run, sortable, with a pinnable baseline
//	reason.go       —            an invalid run's reason for the status line and error panel; whether the backend runs user sources
//	prompt.go       prompt       the one-line editor of the filter, typed values and paths
//	help.go         helpScreen   the help bar and the `?` screen
//	run.go          batch        runs through run.Jobs, the job loop the headless sweep uses
//	reload.go       live reload: WatchKernels turns a user kernel's saves into Events; the
//	                reloaded family replaces the old one in the list and the editor; profiler.ErrorSite
//	                finds the file:line an error names
//	view.go         the root's layout (layout.go) and status line
//
// The root routes keys by focus (any open prompt takes every key first),
// keeps the components in step (syncPanels) and lays them out on a grid
// that depends on the terminal size only. Messages from outside the session
// (the file watcher of WatchKernels, say) arrive as Event.
package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// SessionSweepLimit is the largest sweep `L` loads: the session holds
// every spec and every result of a run in memory (the history), so a
// larger one is left to a headless sweep, which streams in constant
// memory.
const SessionSweepLimit = 100_000

// Options configure a session.
type Options struct {
	// NoColor draws without colour (--no-color). A non-empty NO_COLOR in the
	// environment does the same.
	NoColor bool
	// DefaultOptions are the measurement settings of `r` and `s`.
	DefaultOptions profiler.Options
	// Backends is a one-line description of the backends found, for the header.
	Backends string
	// Devices are the GPUs of --devices, one worker pool each, the first
	// being the executor the session runs on: a sweep (s, L) runs across
	// all of them as a headless --devices sweep does, a single run and a
	// search (T) on the first; the header shows each one. nil: one device.
	Devices []run.Device
	// LoadSweep reads a YAML sweep for `L`; nil disables `L` with a message.
	LoadSweep func(path string) ([]profiler.Spec, profiler.Options, error)
	// SweepSize counts the specs of the sweep at path without loading it
	// (an estimate for a large one); `L` asks before loading more than
	// run.BigSweep, as a headless sweep needs --yes. nil: it never asks.
	SweepSize func(path string) (int, error)
	// WriteCSV writes the history for `e`; nil disables export with a message.
	WriteCSV func(path string, results []profiler.Result) error
	// Families are the kernels offered; nil means every registered family.
	Families []profiler.Family
	// Now stamps the default export file name; nil means time.Now.
	Now func() time.Time
	// Select is the family selected at the start (the first --kernel);
	// empty: the first in the list.
	Select string
	// Events are messages from outside the session (a file watcher that
	// reloads user kernels, say), handled in order until the channel closes.
	Events <-chan Event
}

// Run starts the session on the terminal and returns when the user quits or
// ctx ends. A run in flight is cancelled on the way out.
func Run(ctx context.Context, exec profiler.Executor, opts Options) error {
	opts = resolveOptions(opts, os.Getenv)
	m := NewModel(exec, opts)
	defer close(m.stop)
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	final, err := tea.NewProgram(m, popts...).Run()
	if fm, ok := final.(Model); ok && fm.batch != nil && fm.batch.cancel != nil {
		fm.batch.cancel()
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the caller ended the session (a signal): not an error
	}
	return err
}

// resolveOptions applies the environment: any non-empty NO_COLOR turns
// colour off (https://no-color.org).
func resolveOptions(opts Options, getenv func(string) string) Options {
	if getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	return opts
}

// pane is a focusable component; tab cycles through them in this order.
type pane int

const (
	paneKernels pane = iota
	paneEditor
	paneHistory
	paneBudget
	paneCount
)

// Event is a message from outside the session, for instance a file watcher
// that reloads a user kernel: Text goes to the status line (red when Bad)
// and stays until the next key; Rerun runs the spec in the editor again
// when no run is in flight. Hand them over through Options.Events (or
// tea.Program.Send).
type Event struct {
	Text  string
	Bad   bool
	Rerun bool
	// Family is a new definition of a family (a user kernel reloaded from
	// its files, already installed in the registry): it replaces the family
	// of that name in the list and the editor, whose values are kept where
	// the new schema still allows them; the history stays. With Family set,
	// Rerun reruns only when that family is the selected one.
	Family profiler.Family
	// Renamed is the name Family had before its manifest renamed it: the
	// list's entry and the editor's spec of that name become Family's, so
	// the list never shows the old name beside the new one.
	Renamed string
	// Source is the file the definition came from (a manifest), for Family
	// and LoadError.
	Source string
	// LoadError is a definition that failed to reload (a manifest that no
	// longer parses): the old family stays, and the error panel shows the
	// error until the next Family from the same Source.
	LoadError string
	// Saved is when the change was saved (the newest modification time of
	// the changed files): the rerun's status line says how long after it
	// the result came.
	Saved time.Time
}

// Model is the session's state: the components and what ties them
// together. It is a bubbletea model; NewModel makes one for tests and Run
// drives one on the terminal.
type Model struct {
	exec profiler.Executor
	dev  profiler.DeviceInfo
	opts Options
	th   theme
	keys keyMap

	width, height int
	focus         pane
	picked        bool // see picking

	list   kernelList
	editor editor
	chart  chart
	budget budgetPanel
	occ    occPanel
	corr   corrPanel
	timing timingPanel
	errp   errorPanel
	hist   history
	prompt prompt
	help   helpScreen

	batchSeq   int
	batch      *batch
	queued     *batch           // a sweep loaded during a run: it starts when that run ends
	queuedOpts profiler.Options // its measurement options
	confirm    string           // the large sweep file that `L` asks about
	tuneAsk    *tunePlan        // the search that `T` asks the budget of

	devCounts []run.DeviceCount // the header's devices (Options.Devices)

	msg    string // the status message: stays until the next key
	msgBad bool

	loadErr       *loadError    // a reload that failed: the error panel shows it
	pendingReload *Event        // a reload that came during a reload run: rerun when it ends
	stop          chan struct{} // closed when the program has exited
}

// NewModel builds a session model over exec.
func NewModel(exec profiler.Executor, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Families == nil {
		opts.Families = profiler.Families(false)
	}
	th := newTheme(opts.NoColor)
	keys := newKeyMap()
	dev := exec.Device()
	m := Model{
		exec:   exec,
		dev:    dev,
		opts:   opts,
		th:     th,
		keys:   keys,
		width:  80,
		height: 24,
		focus:  paneKernels, // a first j/k picks a kernel, not a knob
		list:   newKernelList(th, opts.Families),
		editor: newEditor(th, dev),
		chart:  chart{th: th},
		budget: budgetPanel{th: th},
		occ:    occPanel{th: th, unit: unitLabel(dev)},
		corr:   corrPanel{th: th},
		timing: timingPanel{th: th},
		errp:   errorPanel{th: th},
		hist:   newHistory(th),
		prompt: newPrompt(th, opts.NoColor),
		help:   newHelpScreen(th, keys),
		stop:   make(chan struct{}),

		devCounts: deviceCounts(opts.Devices),
	}
	if opts.Select != "" {
		m.list.selectName(opts.Select)
	}
	if f := m.list.selectedFamily(); f != nil {
		m.editor.setFamily(f)
	}
	m.syncPanels()
	return m
}

// Init listens for outside events, if any; otherwise the session waits for
// keys.
func (m Model) Init() tea.Cmd { return waitEvent(m.opts.Events) }

// waitEvent delivers the next outside event; nothing once the channel
// closes (or without one).
func waitEvent(ch <-chan Event) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return nil
		}
		return eventMsg{ev}
	}
}

// eventMsg is an Event read from Options.Events: handled as Event, then
// the next one is awaited.
type eventMsg struct{ Event }

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case runEventMsg:
		mm, cmd := m.onRunEvent(msg)
		mm.syncPanels()
		return mm, cmd
	case tuneEventMsg:
		mm, cmd := m.onTuneEvent(msg)
		mm.syncPanels()
		return mm, cmd
	case eventMsg:
		mm, cmd := m.Update(msg.Event)
		return mm, tea.Batch(cmd, waitEvent(m.opts.Events))
	case Event:
		mm, cmd := m.onEvent(msg)
		mm.syncPanels()
		return mm, cmd
	case tea.KeyPressMsg:
		mm, cmd := m.onKey(msg)
		switch mm.focus {
		case paneHistory:
			mm.picked = true
		case paneKernels, paneEditor:
			mm.picked = false
		}
		mm.syncPanels()
		return mm, cmd
	}
	if m.prompt.active() {
		var cmd tea.Cmd
		m.prompt, cmd = m.prompt.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m *Model) family() profiler.Family { return m.editor.fam }

// spec is the edited spec of the selected family.
func (m *Model) spec() profiler.Spec { return m.editor.spec() }

func (m *Model) setMsg(bad bool, s string) { m.msg, m.msgBad = s, bad }

func (m *Model) running() bool { return m.batch != nil && m.batch.running }

// picking is true from the moment the user goes to the history until they
// go back to the kernel list or the editor (the TGM budget, next after the
// history, keeps it): the panels then describe the picked run rather than
// the latest.
func (m *Model) picking() bool { return m.picked }

// selected is the run the panels describe: the highlighted history row
// while the user is picking, else the latest run.
func (m *Model) selected() (entry, bool) {
	if m.picking() {
		return m.hist.current()
	}
	return m.hist.latest()
}

// syncPanels hands every panel what it describes now: the selected run, or
// the spec in the editor. Called after every message that can change either.
func (m *Model) syncPanels() {
	e, ok := m.selected()
	var run *entry
	if ok {
		run = &e
	}
	m.corr.run, m.timing.run, m.errp.run = run, run, run
	// A run of another kernel than the editor's is named in every title.
	other := run != nil && m.family() != nil && run.res.Spec.Kernel != m.family().Name()
	m.corr.other, m.timing.other = other, other
	m.errp.load = nil
	if m.loadErr != nil && !m.picking() && m.hist.len() == m.loadErr.runs {
		m.errp.load = m.loadErr // until a newer run or a good reload
	}
	m.timing.base, m.timing.prev, m.timing.compare = nil, nil, m.hist.compare
	if b, ok := m.hist.baseline(); ok {
		m.timing.base = &b
	}
	if run != nil {
		if p, ok := m.hist.previous(*run); ok {
			m.timing.prev = &p
		}
	}
	// The budget and occupancy follow the picked run; otherwise they show
	// the editor's plan, with the compiled figures of the latest run when it
	// measured this very spec.
	switch {
	case run != nil && m.picking():
		m.budget.showRun(*run, m.dev)
		m.occ.showRun(*run, m.dev)
		if other {
			m.budget.of, m.occ.of = run.res.Spec.Kernel, runTitle(*run, true)
		}
	case run != nil && run.res.Spec.Key() == m.editor.preview.Spec.Key() && len(run.res.Budget) > 0:
		m.budget.showRun(*run, m.dev)
		m.occ.showRun(*run, m.dev)
	default:
		m.budget.showPreview(m.editor.preview)
		m.occ.showPreview(m.editor.preview)
	}
	m.chart.batch = m.batch
	m.chart.runs = m.hist.entries
	m.chart.series = profiler.Spec{}
	if m.family() != nil {
		m.chart.series = m.spec()
	}
}

func (m Model) onKey(k tea.KeyPressMsg) (Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m.quit()
	}
	if m.help.open {
		switch {
		case key.Matches(k, m.keys.Quit):
			return m.quit()
		case key.Matches(k, m.keys.Help, m.keys.Cancel):
			m.help.open = false
		}
		return m, nil
	}
	// An open prompt takes every key: a typed path never becomes commands.
	if m.prompt.active() {
		return m.onPromptKey(k)
	}
	m.msg = ""
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.quit()
	case key.Matches(k, m.keys.Help):
		m.help.open = true
	case key.Matches(k, m.keys.Cancel):
		switch {
		case m.running():
			m.batch.cancel()
			m.batch.cancelled = true
			m.setMsg(false, "cancelling… the current spec stops at its next check")
		case m.focus == paneKernels && m.list.filter != "":
			// esc clears only what the focused pane owns: the filter
			// belongs to the kernel list, not to the editor beside it.
			m.list.setFilter("")
			m.followList()
		}
	case key.Matches(k, m.keys.Tab):
		m.focus = (m.focus + 1) % paneCount
	case key.Matches(k, m.keys.BackTab):
		m.focus = (m.focus + paneCount - 1) % paneCount
	case key.Matches(k, m.keys.Filter):
		m.focus = paneKernels
		return m, m.prompt.open(promptFilter, "/", m.list.filter, m.width)
	case key.Matches(k, m.keys.Run):
		return m.startRun()
	case key.Matches(k, m.keys.Sweep):
		return m.startSweep()
	case key.Matches(k, m.keys.Tune):
		return m.askTune()
	case key.Matches(k, m.keys.Fix):
		m.fixKnob()
	case key.Matches(k, m.keys.Load):
		if m.opts.LoadSweep == nil {
			m.setMsg(true, "loading a YAML sweep is unavailable in this build: run `mltop --config FILE` instead")
			return m, nil
		}
		label := "sweep file: "
		if m.running() {
			label = "sweep file (starts when the run in flight ends): "
		}
		return m, m.prompt.open(promptLoad, label, "", m.width)
	case key.Matches(k, m.keys.Export):
		if m.opts.WriteCSV == nil {
			m.setMsg(true, "export unavailable: this build has no CSV writer")
			return m, nil
		}
		name := "./mltop-" + m.opts.Now().Format("20060102-150405") + ".csv"
		label := "export CSV to: "
		if m.hist.len() == 0 {
			label = "export CSV (no runs yet) to: "
		}
		return m, m.prompt.open(promptExport, label, name, m.width)
	case key.Matches(k, m.keys.Sort, m.keys.Reverse, m.keys.Pin):
		m.hist = m.hist.Update(k, m.keys)
		if key.Matches(k, m.keys.Pin) {
			m.pin()
		}
	default:
		m.onNavKey(k)
	}
	return m, nil
}

// pin makes the selected run the history's baseline (again: unpins).
func (m *Model) pin() {
	e, ok := m.selected()
	if !ok {
		m.setMsg(true, "nothing to pin yet: press r to run")
		return
	}
	if b, ok := m.hist.baseline(); ok && b.id == e.id {
		m.hist.Pin(0)
		m.setMsg(false, fmt.Sprintf("run #%d is no longer the baseline", e.id))
		return
	}
	m.hist.Pin(e.id)
	m.setMsg(false, fmt.Sprintf("run #%d is the baseline: Δthr base compares every run of %s of its shape with it", e.id, e.res.Spec.Kernel))
}

// fixKnob is `f`: the knob under the editor cursor is fixed for `T` (it
// keeps its value while the others are searched), or free again.
func (m *Model) fixKnob() {
	f, ok := m.editor.field()
	if m.family() == nil || !ok {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return
	}
	if f.kind != kindKnob {
		m.setMsg(true, fmt.Sprintf("f fixes a knob for T (tune): move the editor cursor to a knob (it is on %s)", f.name))
		return
	}
	if m.editor.toggleFixed(f.name) {
		m.setMsg(false, fmt.Sprintf("%s fixed at %d: T searches the other knobs (f again frees it)", f.name, m.spec().Knobs[f.name]))
		return
	}
	m.setMsg(false, f.name+" is free: T searches it")
}

// onNavKey hands a key to the focused component.
func (m *Model) onNavKey(k tea.KeyPressMsg) {
	switch m.focus {
	case paneKernels:
		switch {
		case key.Matches(k, m.keys.Right, m.keys.Enter):
			m.focus = paneEditor
		default:
			m.list = m.list.Update(k, m.keys)
			m.followList()
		}
	case paneEditor:
		var act editorAction
		m.editor, act = m.editor.Update(k, m.keys)
		if act == actionType {
			f, _ := m.editor.field()
			m.prompt.open(promptTyping, "", "", 10)
			m.prompt.input.Placeholder = f.value(m.spec())
			m.prompt.input.SetWidth(10)
		}
	case paneHistory:
		m.hist = m.hist.Update(k, m.keys)
	case paneBudget:
		l := makeLayout(max(m.width, minWidth), max(m.height, minHeight)-3, m.list.longest)
		m.budget = m.budget.Update(k, m.keys, l.panW[0]-2, l.panH-2)
	}
}

// followList puts the list's selected family in the editor.
func (m *Model) followList() {
	if f := m.list.selectedFamily(); f != nil {
		m.editor.setFamily(f)
	}
}

func (m Model) onPromptKey(k tea.KeyPressMsg) (Model, tea.Cmd) {
	switch k.String() {
	case "esc":
		switch m.prompt.kind {
		case promptFilter:
			m.list.setFilter("")
			m.followList()
		case promptTune:
			m.tuneAsk = nil
			m.setMsg(false, "tune not started")
		}
		m.prompt.close()
		return m, nil
	case "enter":
		kind, val := m.prompt.kind, m.prompt.value()
		m.prompt.close()
		switch kind {
		case promptFilter:
			m.followList()
		case promptTyping:
			if val == "" {
				return m, nil
			}
			if err := m.editor.setTyped(val); err != nil {
				m.setMsg(true, err.Error())
			}
		case promptExport:
			return m.export(val)
		case promptLoad:
			return m.load(val)
		case promptAsk:
			return m.answerLoad(val)
		case promptTune:
			return m.startTune(val)
		}
		return m, nil
	}
	if m.prompt.kind == promptFilter && (k.String() == "up" || k.String() == "down") {
		m.list = m.list.Update(k, m.keys)
		m.followList()
		return m, nil
	}
	var cmd tea.Cmd
	m.prompt, cmd = m.prompt.Update(k)
	if m.prompt.kind == promptFilter {
		m.list.setFilter(m.prompt.input.Value())
		m.followList()
	}
	return m, cmd
}

func (m Model) quit() (Model, tea.Cmd) {
	if m.running() {
		m.batch.cancel()
	}
	return m, tea.Quit
}

func (m Model) export(path string) (Model, tea.Cmd) {
	if path == "" {
		m.setMsg(true, "export cancelled: no file name given")
		return m, nil
	}
	rows := m.hist.sorted()
	if len(rows) == 0 {
		m.setMsg(true, "nothing exported to "+path+": no run has finished yet (press r to run, then e)")
		return m, nil
	}
	res := make([]profiler.Result, len(rows))
	for i, e := range rows {
		res[i] = e.res
	}
	if err := m.opts.WriteCSV(path, res); err != nil {
		m.setMsg(true, fmt.Sprintf("export to %s failed: %v", path, err))
		return m, nil
	}
	m.setMsg(false, fmt.Sprintf("exported %s to %s", plural(len(res), "run"), path))
	return m, nil
}
