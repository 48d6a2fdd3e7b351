// Package ui is mltop's interactive session: a bubbletea program that edits a
// kernel family's knobs, previews the threadgroup-memory budget and the
// occupancy estimate as they change, runs specs on an Executor in the
// background and shows throughput, correctness and timing as results arrive.
package ui

import (
	"context"
	"errors"
	"os"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Options configure a session.
type Options struct {
	// NoColor draws without colour (--no-color). A non-empty NO_COLOR in the
	// environment does the same.
	NoColor bool
	// DefaultOptions are the measurement settings of `r` and `s`.
	DefaultOptions profiler.Options
	// Backends is a one-line description of the backends found, for the header.
	Backends string
	// LoadSweep reads a YAML sweep for `L`; nil disables `L` with a message.
	LoadSweep func(path string) ([]profiler.Spec, profiler.Options, error)
	// WriteCSV writes the history for `e`; nil disables export with a message.
	WriteCSV func(path string, results []profiler.Result) error
	// Families are the kernels offered; nil means every registered family.
	Families []profiler.Family
	// Now stamps the default export file name; nil means time.Now.
	Now func() time.Time
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

type pane int

const (
	paneKernels pane = iota
	paneEditor
	paneHistory
	paneCount
)

type mode int

const (
	modeNormal mode = iota
	modeFilter
	modeTyping
	modeExport
	modeLoad
)

// entry is one row of the history.
type entry struct {
	id  int
	res profiler.Result
}

// batch is a group of specs started by one key: `r` (one spec), `s` (a
// sweep of one knob) or `L` (a YAML sweep).
type batch struct {
	id        int
	label     string
	specs     []profiler.Spec
	sweep     string // the swept field, empty unless `s`
	sweepVals []int
	results   []*profiler.Result // by spec index, nil until finished
	done      int
	running   bool
	progress  profiler.Progress
	current   int // index of the spec being measured
	cancel    context.CancelFunc
	cancelled bool
}

// Model is the session's state. It is a bubbletea model; NewModel makes one
// for tests and Run drives one on the terminal.
type Model struct {
	exec profiler.Executor
	dev  profiler.DeviceInfo
	opts Options
	th   theme
	keys keyMap
	help help.Model

	width, height int

	fams    []profiler.Family
	visible []int // indices of fams that pass the filter
	filter  string
	listCur int // cursor in visible
	famIdx  int // selected family, index in fams (-1: none)

	specs    map[string]profiler.Spec // the edited spec of each family
	fields   []field
	fieldCur int
	edited   string // the field changed last: blamed when an error names none
	preview  run.Preview

	focus    pane
	mode     mode
	input    textinput.Model
	showHelp bool

	batchSeq int
	batch    *batch
	history  []entry
	histCur  int
	sortCol  int
	sortDesc bool

	msg    string
	msgBad bool
	stop   chan struct{} // closed when the program has exited
}

// NewModel builds a session model over exec.
func NewModel(exec profiler.Executor, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Families == nil {
		opts.Families = profiler.Families(false)
	}
	m := Model{
		exec:     exec,
		dev:      exec.Device(),
		opts:     opts,
		th:       newTheme(opts.NoColor),
		keys:     newKeyMap(),
		help:     help.New(),
		width:    80,
		height:   24,
		fams:     opts.Families,
		famIdx:   -1,
		specs:    map[string]profiler.Spec{},
		focus:    paneEditor,
		sortCol:  0,
		sortDesc: true,
		stop:     make(chan struct{}),
	}
	m.help.Styles.ShortKey = m.th.helpKey
	m.help.Styles.ShortDesc = m.th.helpDesc
	m.help.Styles.ShortSeparator = m.th.dim
	m.help.Styles.Ellipsis = m.th.dim
	m.help.Styles.FullKey = m.th.helpKey
	m.help.Styles.FullDesc = m.th.helpDesc
	m.help.Styles.FullSeparator = m.th.dim
	m.input = textinput.New()
	st := textinput.DefaultDarkStyles()
	st.Cursor.Blink = false // a steady cursor keeps frames reproducible
	if opts.NoColor {
		st = textinput.Styles{}
	}
	m.input.SetStyles(st)
	m.refilter()
	if len(m.visible) > 0 {
		m.selectFamily(m.visible[0])
	} else {
		m.focus = paneKernels
	}
	return m
}

// Init starts nothing: the session waits for keys.
func (m Model) Init() tea.Cmd { return nil }

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case runEventMsg:
		return m.onRunEvent(msg)
	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	if m.mode != modeNormal {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m *Model) family() profiler.Family {
	if m.famIdx < 0 || m.famIdx >= len(m.fams) {
		return nil
	}
	return m.fams[m.famIdx]
}

// spec is the edited spec of the selected family.
func (m *Model) spec() profiler.Spec {
	f := m.family()
	if f == nil {
		return profiler.Spec{}
	}
	return m.specs[f.Name()]
}

func (m *Model) setSpec(s profiler.Spec) {
	if len(m.fields) > 0 {
		m.edited = m.fields[m.fieldCur].name
	}
	if f := m.family(); f != nil {
		m.specs[f.Name()] = s
		m.refreshPreview()
	}
}

func (m *Model) refreshPreview() {
	m.preview = run.MakePreview(m.spec(), m.dev)
}

func (m *Model) selectFamily(i int) {
	if i == m.famIdx {
		return
	}
	m.famIdx = i
	f := m.family()
	sc := f.Schema()
	if _, ok := m.specs[f.Name()]; !ok {
		m.specs[f.Name()] = profiler.Spec{Kernel: f.Name()}.WithDefaults(sc)
	}
	m.fields = fieldsOf(sc)
	m.fieldCur = clamp(m.fieldCur, 0, max(0, len(m.fields)-1))
	m.refreshPreview()
}

func (m *Model) refilter() {
	m.visible = m.visible[:0]
	for i, f := range m.fams {
		if m.filter == "" || containsFold(f.Name(), m.filter) {
			m.visible = append(m.visible, i)
		}
	}
	m.listCur = 0
	for j, i := range m.visible {
		if i == m.famIdx {
			m.listCur = j
		}
	}
}

func (m *Model) setMsg(bad bool, s string) { m.msg, m.msgBad = s, bad }

func (m *Model) running() bool { return m.batch != nil && m.batch.running }
