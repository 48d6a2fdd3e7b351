package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func (m Model) onKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m.quit()
	}
	if m.showHelp {
		switch {
		case key.Matches(k, m.keys.Quit):
			return m.quit()
		case key.Matches(k, m.keys.Help, m.keys.Cancel):
			m.showHelp = false
		}
		return m, nil
	}
	if m.mode != modeNormal {
		return m.onPromptKey(k)
	}
	m.msg = ""
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.quit()
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
	case key.Matches(k, m.keys.Cancel):
		switch {
		case m.running():
			m.batch.cancel()
			m.batch.cancelled = true
			m.setMsg(false, "cancelling… the current spec stops at its next check")
		case m.filter != "":
			m.filter = ""
			m.refilter()
		}
	case key.Matches(k, m.keys.Tab):
		m.focus = (m.focus + 1) % paneCount
	case key.Matches(k, m.keys.BackTab):
		m.focus = (m.focus + paneCount - 1) % paneCount
	case key.Matches(k, m.keys.Filter):
		m.focus = paneKernels
		return m, m.prompt(modeFilter, "/", m.filter)
	case key.Matches(k, m.keys.Run):
		return m.startRun()
	case key.Matches(k, m.keys.Sweep):
		return m.startSweep()
	case key.Matches(k, m.keys.Load):
		if m.opts.LoadSweep == nil {
			m.setMsg(true, "loading a YAML sweep is unavailable in this build: run `mltop --config FILE` instead")
			return m, nil
		}
		if m.running() {
			m.setMsg(true, "a run is in progress: esc cancels it first")
			return m, nil
		}
		return m, m.prompt(modeLoad, "sweep file: ", "")
	case key.Matches(k, m.keys.Export):
		switch {
		case m.opts.WriteCSV == nil:
			m.setMsg(true, "export unavailable: this build has no CSV writer")
		case len(m.history) == 0:
			m.setMsg(true, "nothing to export yet: press r to run")
		default:
			name := "./mltop-" + m.opts.Now().Format("20060102-150405") + ".csv"
			return m, m.prompt(modeExport, "export CSV to: ", name)
		}
	case key.Matches(k, m.keys.Sort):
		m.sortCol = (m.sortCol + 1) % len(sortCols)
		m.sortDesc = sortCols[m.sortCol].desc
		m.histCur = 0
	case key.Matches(k, m.keys.Reverse):
		m.sortDesc = !m.sortDesc
		m.histCur = 0
	default:
		m.onNavKey(k)
	}
	return m, nil
}

// onNavKey moves within the focused pane and edits values.
func (m *Model) onNavKey(k tea.KeyPressMsg) {
	switch m.focus {
	case paneKernels:
		switch {
		case key.Matches(k, m.keys.Up):
			m.moveList(-1)
		case key.Matches(k, m.keys.Down):
			m.moveList(1)
		case key.Matches(k, m.keys.Right, m.keys.Enter):
			m.focus = paneEditor
		}
	case paneEditor:
		if len(m.fields) == 0 {
			return
		}
		f := m.fields[m.fieldCur]
		switch {
		case key.Matches(k, m.keys.Up):
			m.fieldCur = clamp(m.fieldCur-1, 0, len(m.fields)-1)
		case key.Matches(k, m.keys.Down):
			m.fieldCur = clamp(m.fieldCur+1, 0, len(m.fields)-1)
		case key.Matches(k, m.keys.Left), key.Matches(k, m.keys.Right):
			dir := 1
			if key.Matches(k, m.keys.Left) {
				dir = -1
			}
			s := m.spec().Clone()
			f.step(&s, dir)
			m.setSpec(s)
		case key.Matches(k, m.keys.Reset):
			s := m.spec().Clone()
			switch f.kind {
			case kindKnob:
				s.Knobs[f.name] = f.param.Default
			case kindDim:
				s.Dims[f.name] = f.param.Default
			case kindFlag:
				s.Flags[f.name] = f.flag.Default
			case kindDType:
				s.DType = f.types[0]
			}
			m.setSpec(s)
		case key.Matches(k, m.keys.Enter):
			if f.kind == kindFlag {
				s := m.spec().Clone()
				f.step(&s, 1)
				m.setSpec(s)
				return
			}
			// Start empty with the current value as placeholder: typing
			// replaces it, enter alone keeps it.
			m.prompt(modeTyping, "", "")
			m.input.Placeholder = f.value(m.spec())
			m.input.SetWidth(10)
		}
	case paneHistory:
		switch {
		case key.Matches(k, m.keys.Up):
			m.histCur = clamp(m.histCur-1, 0, max(0, len(m.history)-1))
		case key.Matches(k, m.keys.Down):
			m.histCur = clamp(m.histCur+1, 0, max(0, len(m.history)-1))
		}
	}
}

func (m *Model) moveList(d int) {
	if len(m.visible) == 0 {
		return
	}
	m.listCur = clamp(m.listCur+d, 0, len(m.visible)-1)
	m.selectFamily(m.visible[m.listCur])
}

// prompt opens the line editor for a mode.
func (m *Model) prompt(md mode, label, value string) tea.Cmd {
	m.mode = md
	m.input.Prompt = label
	m.input.SetValue(value)
	m.input.CursorEnd()
	m.input.Placeholder = ""
	m.input.SetWidth(max(10, m.width-len(label)-4))
	return m.input.Focus()
}

func (m Model) onPromptKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "esc":
		if m.mode == modeFilter {
			m.filter = ""
			m.refilter()
		}
		m.mode = modeNormal
		m.input.Blur()
		return m, nil
	case "enter":
		md, val := m.mode, strings.TrimSpace(m.input.Value())
		m.mode = modeNormal
		m.input.Blur()
		switch md {
		case modeFilter:
			if len(m.visible) > 0 {
				m.selectFamily(m.visible[m.listCur])
			}
		case modeTyping:
			if val == "" {
				return m, nil
			}
			f := m.fields[m.fieldCur]
			s := m.spec().Clone()
			if err := f.setTyped(&s, val); err != nil {
				m.setMsg(true, err.Error())
				return m, nil
			}
			m.setSpec(s)
		case modeExport:
			return m.export(val)
		case modeLoad:
			return m.load(val)
		}
		return m, nil
	}
	if m.mode == modeFilter {
		switch {
		case key.Matches(k, m.keys.Up) && k.String() == "up":
			m.moveList(-1)
			return m, nil
		case key.Matches(k, m.keys.Down) && k.String() == "down":
			m.moveList(1)
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	if m.mode == modeFilter {
		m.filter = m.input.Value()
		m.refilter()
		if len(m.visible) > 0 {
			m.selectFamily(m.visible[m.listCur])
		}
	}
	return m, cmd
}

func (m Model) quit() (tea.Model, tea.Cmd) {
	if m.running() {
		m.batch.cancel()
	}
	return m, tea.Quit
}

func (m Model) export(path string) (tea.Model, tea.Cmd) {
	if path == "" {
		m.setMsg(true, "export cancelled: no file name given")
		return m, nil
	}
	rows := m.sortedHistory()
	res := make([]profiler.Result, len(rows))
	for i, e := range rows {
		res[i] = e.res
	}
	if err := m.opts.WriteCSV(path, res); err != nil {
		m.setMsg(true, fmt.Sprintf("export to %s failed: %v", path, err))
		return m, nil
	}
	m.setMsg(false, fmt.Sprintf("exported %d runs to %s", len(res), path))
	return m, nil
}

func (m Model) load(path string) (tea.Model, tea.Cmd) {
	if path == "" {
		m.setMsg(true, "no sweep file given: press L and type a path such as configs/quick.yaml")
		return m, nil
	}
	specs, o, err := m.opts.LoadSweep(path)
	if err != nil {
		m.setMsg(true, err.Error())
		return m, nil
	}
	if len(specs) == 0 {
		m.setMsg(true, path+" holds no specs")
		return m, nil
	}
	return m.startBatch(&batch{label: filepath.Base(path), specs: specs}, o)
}

func (m Model) startRun() (tea.Model, tea.Cmd) {
	if m.family() == nil {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return m, nil
	}
	if m.running() {
		m.setMsg(true, "a run is in progress: esc cancels it")
		return m, nil
	}
	if m.preview.Err != nil {
		m.setMsg(true, "cannot run: "+m.preview.Err.Error())
		return m, nil
	}
	return m.startBatch(&batch{label: "run", specs: []profiler.Spec{m.preview.Spec}}, m.opts.DefaultOptions)
}

// startSweep measures the selected knob (or dim) over its allowed values,
// skipping the values the family's rules reject for the other settings.
func (m Model) startSweep() (tea.Model, tea.Cmd) {
	if m.family() == nil || len(m.fields) == 0 {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return m, nil
	}
	if m.running() {
		m.setMsg(true, "a run is in progress: esc cancels it")
		return m, nil
	}
	f := m.fields[m.fieldCur]
	if !f.sweepable() {
		m.setMsg(true, fmt.Sprintf("s sweeps a knob or dim: move the editor cursor to one (it is on %s)", f.name))
		return m, nil
	}
	b := &batch{label: "sweep " + f.name, sweep: f.name}
	var skipped []string
	for _, v := range f.sweepValues() {
		s := m.spec().Clone()
		if f.kind == kindKnob {
			s.Knobs[f.name] = v
		} else {
			s.Dims[f.name] = v
		}
		p := run.MakePreview(s, m.dev)
		if p.Err != nil {
			skipped = append(skipped, fmt.Sprint(v))
			continue
		}
		b.specs = append(b.specs, p.Spec)
		b.sweepVals = append(b.sweepVals, v)
	}
	if len(b.specs) == 0 {
		m.setMsg(true, fmt.Sprintf("no value of %s is valid with the other settings: %v", f.name, m.preview.Err))
		return m, nil
	}
	m2, cmd := m.startBatch(b, m.opts.DefaultOptions)
	if len(skipped) > 0 {
		mm := m2.(Model)
		mm.setMsg(false, fmt.Sprintf("sweeping %s over %d values; skipped %s=%s (invalid with the other settings)", f.name, len(b.specs), f.name, strings.Join(skipped, ",")))
		return mm, cmd
	}
	return m2, cmd
}

// runEvent is what the worker goroutine sends: a progress report or a
// finished result for spec idx. The channel closes when the batch ends.
type runEvent struct {
	idx      int
	progress *profiler.Progress
	result   *profiler.Result
}

type runEventMsg struct {
	batch int
	ch    <-chan runEvent
	ev    runEvent
	done  bool
}

func waitRun(id int, ch <-chan runEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		return runEventMsg{batch: id, ch: ch, ev: ev, done: !ok}
	}
}

// startBatch runs b's specs one by one in a goroutine. The UI keeps
// handling keys; results come back through the channel.
func (m Model) startBatch(b *batch, o profiler.Options) (tea.Model, tea.Cmd) {
	m.batchSeq++
	b.id = m.batchSeq
	b.running = true
	b.results = make([]*profiler.Result, len(b.specs))
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	m.batch = b
	m.msg = ""
	ch := make(chan runEvent, 64)
	exec, specs, stop := m.exec, b.specs, m.stop
	go func() {
		defer close(ch)
		for i, s := range specs {
			if ctx.Err() != nil {
				return
			}
			res := exec.Run(ctx, s, o, func(p profiler.Progress) {
				select { // progress may be dropped; results may not
				case ch <- runEvent{idx: i, progress: &p}:
				default:
				}
			})
			select {
			case ch <- runEvent{idx: i, result: &res}:
			case <-stop:
				return
			}
		}
	}()
	return m, waitRun(b.id, ch)
}

func (m Model) onRunEvent(msg runEventMsg) (tea.Model, tea.Cmd) {
	b := m.batch
	if b == nil || b.id != msg.batch {
		if msg.done {
			return m, nil
		}
		return m, waitRun(msg.batch, msg.ch) // drain a superseded batch
	}
	if msg.done {
		b.running = false
		b.cancel()
		failed := 0
		for _, r := range b.results {
			if r != nil && r.Status != profiler.StatusOK {
				failed++
			}
		}
		switch {
		case b.cancelled:
			m.setMsg(false, fmt.Sprintf("%s cancelled after %d of %d specs", b.label, b.done, len(b.specs)))
		case len(b.specs) > 1:
			m.setMsg(failed > 0, fmt.Sprintf("%s done: %d runs, %d failed", b.label, b.done, failed))
		}
		return m, nil
	}
	if p := msg.ev.progress; p != nil {
		b.progress = *p
		b.current = msg.ev.idx
	}
	if r := msg.ev.result; r != nil {
		b.results[msg.ev.idx] = r
		b.done++
		b.progress = profiler.Progress{}
		m.history = append(m.history, entry{id: len(m.history) + 1, res: *r})
		if m.focus != paneHistory {
			m.histCur = 0
		}
		if len(b.specs) == 1 {
			s := fmt.Sprintf("run #%d %s: %s", len(m.history), r.Spec.Kernel, r.Status)
			if r.Stats.N > 0 {
				s += " · median " + fmtDur(r.Stats.Median) + " · " + fmtThroughput(*r)
			}
			m.setMsg(r.Status != profiler.StatusOK, s)
		}
	}
	return m, waitRun(msg.batch, msg.ch)
}
