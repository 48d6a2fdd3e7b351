package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// This file is the session's only use of the engine's job loop: a batch
// runs through run.Jobs, the loop the headless sweep uses, so the
// TUI prefetches the next spec's compile exactly as `mltop --config` does.

// batch is a group of specs started by one key: `r` (one spec), `s` (a
// sweep of one knob) or `L` (a YAML sweep).
type batch struct {
	id        int
	label     string
	specs     []profiler.Spec
	sweep     string // the swept field, empty unless `s`
	sweepVals []int
	results   []*profiler.Result // by spec index, nil until finished
	ids       []int              // by spec index: the history id of its run
	done      int
	running   bool
	progress  profiler.Progress
	current   int // index of the spec being measured
	cancel    context.CancelFunc
	cancelled bool
	events    <-chan runEvent
	note      string    // why it runs, when not a key (an Event): kept in the messages
	origin    string    // what started it: r, sweep, yaml, reload, event (the history's via)
	saved     time.Time // a reload's save time: the result says how long after it it came
	skipped   []string  // values a sweep skipped before running, as "BQ=8"
	skipWhy   string    // the rule that rejected the first skipped value
	// tune is the search of `T`; its specs, results and ids grow as the
	// driver measures (nothing is known ahead).
	tune *tuneRun
	// multi: the batch runs across the devices of Options.Devices.
	multi bool
}

// summary counts a finished batch's runs by outcome, invalid apart from
// failures ("4 runs: 3 ok, 1 invalid, 1 failed"), and names the values
// skipped before running ("; 1 skipped: BQ=8 (rule …)"). bad is true when
// any run did not pass.
func (b *batch) summary() (msg string, bad bool) {
	ok, invalid, failed := 0, 0, 0
	for _, r := range b.results {
		switch {
		case r == nil:
		case r.Status == profiler.StatusOK:
			ok++
		case r.Status == profiler.StatusInvalid:
			invalid++
		default:
			failed++
		}
	}
	parts := []string{fmt.Sprintf("%d ok", ok)}
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d invalid", invalid))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	msg = fmt.Sprintf("%s done: %s: %s", b.label, plural(b.done, "run"), strings.Join(parts, ", "))
	if len(b.skipped) > 0 {
		msg += fmt.Sprintf("; %d skipped: %s", len(b.skipped), strings.Join(b.skipped, ","))
		if b.skipWhy != "" {
			msg += " (" + b.skipWhy + ")"
		}
	}
	return msg, invalid+failed > 0
}

// runEvent is what the job loop's hooks send: the start of spec idx, a
// progress report, or its result. The channel closes when the batch ends.
type runEvent struct {
	idx      int
	started  bool
	progress *profiler.Progress
	result   *profiler.Result
	devices  []run.DeviceCount // a multi-device batch's counts
	note     string            // a line of the multi-device loop (a device dropped)
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

// busy is the answer to a key that starts a run while one is in flight.
const busy = "a run is in flight: esc cancels it, or wait"

func (m Model) load(path string) (Model, tea.Cmd) {
	if path == "" {
		m.setMsg(true, "no sweep file given: press L and type a path such as configs/quick.yaml")
		return m, nil
	}
	if m.opts.SweepSize != nil {
		n, err := m.opts.SweepSize(path)
		if err != nil {
			m.setMsg(true, err.Error())
			return m, nil
		}
		if n > SessionSweepLimit {
			m.setMsg(true, fmt.Sprintf("%s: %s, more than the session holds (%d); headless it runs in constant memory: mltop --config %s --csv out.csv", path, plural(n, "spec"), SessionSweepLimit, path))
			return m, nil
		}
		if n > run.BigSweep {
			m.confirm = path
			return m, m.prompt.open(promptAsk, fmt.Sprintf("%s has %s (more than %d): load and run them? y/n ", path, plural(n, "spec"), run.BigSweep), "", m.width)
		}
	}
	return m.loadNow(path)
}

// answerLoad is the answer to the question about a large sweep: y loads it.
func (m Model) answerLoad(answer string) (Model, tea.Cmd) {
	path := m.confirm
	m.confirm = ""
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "y") {
		m.setMsg(false, path+" not loaded")
		return m, nil
	}
	return m.loadNow(path)
}

// loadNow loads the sweep at path and runs it (after the question of a
// large one).
func (m Model) loadNow(path string) (Model, tea.Cmd) {
	specs, o, err := m.opts.LoadSweep(path)
	if err != nil {
		m.setMsg(true, err.Error())
		return m, nil
	}
	if len(specs) == 0 {
		m.setMsg(true, path+" holds no specs")
		return m, nil
	}
	b := &batch{label: filepath.Base(path), specs: specs, origin: originYAML}
	if m.running() { // checked now, run next
		m.queued, m.queuedOpts = b, o
		m.setMsg(false, fmt.Sprintf("%s (%s) starts when the run in flight ends; esc cancels both", b.label, plural(len(specs), "spec")))
		return m, nil
	}
	m = m.startBatch(b, o)
	return m, m.waitBatch()
}

func (m Model) startRun() (Model, tea.Cmd) {
	if m.family() == nil {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return m, nil
	}
	if m.running() {
		m.setMsg(true, busy)
		return m, nil
	}
	if err := m.editor.preview.Err; err != nil {
		m.setMsg(true, "cannot run: "+err.Error())
		return m, nil
	}
	m = m.startBatch(&batch{label: "run", specs: []profiler.Spec{m.editor.preview.Spec}, origin: originRun}, m.opts.DefaultOptions)
	return m, m.waitBatch()
}

// startSweep measures the selected knob (or dim) over its allowed values,
// skipping the values the family's rules reject for the other settings.
func (m Model) startSweep() (Model, tea.Cmd) {
	f, ok := m.editor.field()
	if m.family() == nil || !ok {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return m, nil
	}
	if m.running() {
		m.setMsg(true, busy)
		return m, nil
	}
	if !f.sweepable() {
		m.setMsg(true, fmt.Sprintf("s sweeps a knob or dim: move the editor cursor to one (it is on %s)", f.name))
		return m, nil
	}
	b := &batch{label: "sweep " + f.name, sweep: f.name, origin: originSweep}
	for _, v := range f.sweepValues() {
		s := m.spec().Clone()
		if f.kind == kindKnob {
			s.Knobs[f.name] = v
		} else {
			s.Dims[f.name] = v
		}
		p := run.MakePreview(s, m.dev)
		if p.Err != nil {
			if len(b.skipped) == 0 {
				b.skipWhy = p.Err.Error()
			}
			b.skipped = append(b.skipped, fmt.Sprintf("%s=%d", f.name, v))
			continue
		}
		b.specs = append(b.specs, p.Spec)
		b.sweepVals = append(b.sweepVals, v)
	}
	if len(b.specs) == 0 {
		m.setMsg(true, fmt.Sprintf("no value of %s is valid with the other settings: %v", f.name, m.editor.preview.Err))
		return m, nil
	}
	m = m.startBatch(b, m.opts.DefaultOptions)
	if len(b.skipped) > 0 {
		m.setMsg(false, fmt.Sprintf("sweeping %s over %s; %d skipped: %s (%s)", f.name, plural(len(b.specs), "value"), len(b.skipped), strings.Join(b.skipped, ","), b.skipWhy))
	}
	return m, m.waitBatch()
}

// startBatch runs b's specs through the engine's job loop in a goroutine.
// The UI keeps handling keys; the loop's hooks send events back.
func (m Model) startBatch(b *batch, o profiler.Options) Model {
	m.batchSeq++
	b.id = m.batchSeq
	b.running = true
	b.results = make([]*profiler.Result, len(b.specs))
	b.ids = make([]int, len(b.specs))
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	m.batch = b
	m.msg = ""
	ch := make(chan runEvent, 64)
	b.events = ch
	jobs := make([]profiler.Job, len(b.specs))
	for i, s := range b.specs {
		jobs[i] = profiler.Job{Spec: s, Options: o}
	}
	exec, stop := m.exec, m.stop
	send := func(ev runEvent) { // results and starts may not be dropped
		select {
		case ch <- ev:
		case <-stop:
			cancel()
		}
	}
	hooks := run.Hooks{
		Start: func(i, _ int, _ profiler.Spec) { send(runEvent{idx: i, started: true}) },
		Progress: func(i, _ int, _ profiler.Spec, p profiler.Progress) {
			select { // progress may be dropped
			case ch <- runEvent{idx: i, progress: &p}:
			default:
			}
		},
		Done: func(i, _ int, r profiler.Result) { send(runEvent{idx: i, result: &r}) },
	}
	devs := m.opts.Devices
	b.multi = len(devs) > 0 && len(jobs) > 1
	go func() {
		defer close(ch)
		if b.multi {
			hooks = deviceHooks(b.specs, hooks, func(c []run.DeviceCount) { send(runEvent{idx: -1, devices: c}) })
			log := lineWriter(func(l string) { send(runEvent{idx: -1, note: l}) })
			_, _ = run.JobsOnDevices(ctx, devs, jobs, nil, nil, hooks, log)
			return
		}
		_, _ = run.Jobs(ctx, exec, jobs, nil, nil, hooks)
	}()
	return m
}

func (m Model) waitBatch() tea.Cmd { return waitRun(m.batch.id, m.batch.events) }

func (m Model) onRunEvent(msg runEventMsg) (Model, tea.Cmd) {
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
		for i := range m.devCounts {
			m.devCounts[i].Busy = false // a cancelled device may not have said so
		}
		switch {
		case b.cancelled:
			m.setMsg(false, fmt.Sprintf("%s cancelled after %d of %s", b.label, b.done, plural(len(b.specs), "spec")))
			if m.queued != nil {
				m.msg += "; " + m.queued.label + " was not started"
			}
		case len(b.specs) > 1:
			sum, bad := b.summary()
			m.setMsg(bad, sum)
		}
		return m.afterBatch(b)
	}
	switch ev := msg.ev; {
	case ev.devices != nil:
		m.devCounts = ev.devices
	case ev.note != "":
		m.setMsg(true, strings.TrimPrefix(ev.note, "mltop: "))
	case ev.started:
		b.current = ev.idx
		b.progress = profiler.Progress{}
	case ev.progress != nil:
		b.progress = *ev.progress
		b.current = ev.idx
	case ev.result != nil:
		r := ev.result
		b.results[ev.idx] = r
		b.done++
		b.progress = profiler.Progress{}
		e := m.hist.add(*r, !m.picking(), b.origin)
		b.ids[ev.idx] = e.id
		if len(b.specs) == 1 {
			m.setMsg(r.Status != profiler.StatusOK, m.outcome(b, e))
		}
	}
	return m, waitRun(msg.batch, msg.ch)
}

// afterBatch starts what waited for the finished batch b: a sweep loaded
// during it, or the rerun of a reload that came during it (neither after
// a cancel).
func (m Model) afterBatch(b *batch) (Model, tea.Cmd) {
	if q := m.queued; q != nil {
		m.queued = nil
		if !b.cancelled {
			msg, bad := m.msg, m.msgBad
			m = m.startBatch(q, m.queuedOpts)
			m.setMsg(bad, strings.TrimPrefix(msg+"; ", "; ")+"started "+q.label)
			return m, m.waitBatch()
		}
	}
	if ev := m.pendingReload; ev != nil {
		m.pendingReload = nil
		if !b.cancelled {
			msg, bad := m.msg, m.msgBad
			mm, cmd := m.onEvent(*ev)
			if !mm.running() { // not rerun after all: keep the last outcome in view
				mm.setMsg(bad, msg+" · "+mm.msg)
			}
			return mm, cmd
		}
	}
	return m, nil
}

// outcome is the status line after a single run: what it gave and, for a
// rerun on save, how long after the save the result came; a compile error
// names the user's file:line and what to do.
func (m Model) outcome(b *batch, e entry) string {
	r := e.res
	reload := b.origin == originReload
	s := fmt.Sprintf("run #%d %s: %s", e.id, r.Spec.Kernel, r.Status)
	if reload { // the note names the kernel
		s = fmt.Sprintf("run #%d: %s", e.id, r.Status)
	}
	if r.Status == profiler.StatusInvalid && r.Error != "" {
		s += " — " + profiler.FirstLine(reason(r)) // the reason first: it is what to fix
	}
	if r.Status == profiler.StatusCompileError {
		if at := profiler.SiteLabel(r.Error); at != "" {
			s = fmt.Sprintf("run #%d: compile error in %s", e.id, at)
		} else {
			s = fmt.Sprintf("run #%d %s: compile error", e.id, r.Spec.Kernel)
		}
		if reload {
			s += " — fix and save to rerun"
		} else {
			s += " — fix it and press r"
		}
	}
	if reload && !b.saved.IsZero() {
		s += fmt.Sprintf(" · %s after save", units.Elapsed(time.Since(b.saved)))
	}
	if r.Stats.N > 0 {
		s += " · median " + units.Nanos(r.Stats.Median)
		if p, ok := m.hist.previous(e); ok {
			if c, ok := m.hist.compare(p, e); ok {
				s += fmt.Sprintf(" (%s vs #%d)", c, p.id)
			}
		}
		s += " · " + fmtThroughput(r)
	}
	if b.note != "" {
		s = b.note + " · " + s
	}
	return s
}
