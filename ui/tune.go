package ui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/tune"
	"github.com/mltop/mltop/profiler/units"
)

// This file is `T`: a search over the knobs of the editor's kernel at its
// shape and dtype, through profiler/tune (the driver `mltop tune` uses),
// so the rules, the re-measurement of the best and the verdict are the
// headless ones. `f` fixes knobs the search must keep.

const (
	originTune  = "tune"  // an evaluation of a search
	originFinal = "final" // a contender re-measured at the end of a search

	// tuneMinEvals is the smallest default budget: a tenth of a small space
	// is too few points for a model-based strategy to learn anything.
	tuneMinEvals = 24
	// tuneSeed seeds the strategies: the same session proposes the same
	// points, as `mltop tune` does with its default --search-seed.
	tuneSeed = 1
)

// tunePlan is what `T` found before asking for the budget: the base spec,
// the knobs to search and how many configurations the rules allow.
type tunePlan struct {
	base     profiler.Spec
	knobs    []search.Knob
	fixed    []string
	size     int // configurations the rules allow
	excluded int // configurations they refuse
	defaults tuneChoice
}

// tuneChoice is the answer to the prompt of `T`.
type tuneChoice struct {
	budget    search.Budget
	strategy  string
	objective tune.Objective
}

// String is the choice as the prompt's starting value: "24 tpe".
func (c tuneChoice) String() string {
	b := c.budget.String()
	if c.budget.Evals > 0 {
		b = fmt.Sprint(c.budget.Evals)
	}
	s := b + " " + c.strategy
	if c.objective != tune.MedianUS {
		s += " " + string(c.objective)
	}
	return s
}

// parseTuneAnswer reads "40 evolution", "10% gbps", "2m": each word a
// budget, a strategy or an objective, in any order; what is not given
// keeps its default. An empty answer takes every default.
func parseTuneAnswer(text string, def tuneChoice) (tuneChoice, error) {
	c := def
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' }) {
		if name, ok := search.Canonical(w); ok {
			c.strategy = name
			continue
		}
		if o, err := tune.ParseObjective(w); err == nil {
			c.objective = o
			continue
		}
		b, err := search.ParseBudget(w)
		if err != nil {
			return def, fmt.Errorf("tune: %q is not a budget (24 evaluations, 10%% of the configurations, 5m), a strategy (%s) or an objective (median_us, tflops, gbps): press T and type e.g. \"40 evolution\"",
				w, strings.Join(search.Names, ", "))
		}
		c.budget = b
	}
	return c, nil
}

// defaultTuneBudget is a tenth of the space, at least tuneMinEvals
// evaluations, at most the whole space (the driver then measures every
// configuration).
func defaultTuneBudget(size int) search.Budget {
	return search.Budget{Evals: min(size, max(tuneMinEvals, int(math.Ceil(float64(size)/10))))}
}

// tuneSpace is the configurations of knobs the search may measure at
// base: those the engine would run (run.Runnable, the check the driver
// asks), so the prompt can say how many there are and an empty space is
// refused before anything runs, with the first refusal's reason.
func tuneSpace(dev profiler.DeviceInfo, base profiler.Spec, knobs []search.Knob, opt profiler.Options) (*search.Space, error) {
	cache := run.NewPlanCache(0)
	return search.NewSpace(knobs, func(values map[string]int) error {
		s := base.Clone()
		maps.Copy(s.Knobs, values)
		if _, ok := run.Runnable(profiler.Job{Spec: s, Options: opt}, dev, cache); ok {
			return nil
		}
		if _, err := run.Prepare(s, opt.Limits.Apply(dev), run.PrepareOptions{Mode: opt.CacheMode(), Cache: cache}); err != nil {
			return err
		}
		return errors.New(profiler.CPUCannotRunUser(base.Kernel))
	})
}

// askTune is `T`: it checks that there is something to search and asks
// for the budget and strategy, with the defaults filled in.
func (m Model) askTune() (Model, tea.Cmd) {
	if m.family() == nil {
		m.setMsg(true, "no kernel selected: pick one in the list")
		return m, nil
	}
	if m.running() {
		m.setMsg(true, busy)
		return m, nil
	}
	free, fixed := m.editor.tuneKnobs()
	if len(free) == 0 {
		if len(fixed) == 0 {
			m.setMsg(true, m.family().Name()+" has no knobs to tune: s sweeps a dim instead")
		} else {
			m.setMsg(true, fmt.Sprintf("every knob of %s is fixed (%s): f on a knob in the editor frees it for T", m.family().Name(), strings.Join(fixed, " ")))
		}
		return m, nil
	}
	p := &tunePlan{base: m.spec().Clone(), fixed: fixed}
	for _, k := range free {
		p.knobs = append(p.knobs, search.Knob{Name: k.Name, Values: k.Choices()})
	}
	sp, err := tuneSpace(m.dev, p.base, p.knobs, m.opts.DefaultOptions)
	if err != nil {
		what := "no configuration of " + knobNames(p.knobs) + " is valid"
		if len(fixed) > 0 {
			what += " with " + tune.KnobText(p.base.Knobs, fixed)
		}
		m.setMsg(true, fmt.Sprintf("nothing to tune: %s at this shape and dtype (%v); change the shape or free a fixed knob (f)", what, err))
		return m, nil
	}
	p.size, p.excluded = sp.Size(), sp.Excluded
	p.defaults = tuneChoice{budget: defaultTuneBudget(p.size), strategy: "tpe", objective: tune.MedianUS}
	m.tuneAsk = p
	label := "tune " + knobNames(p.knobs)
	if len(fixed) > 0 {
		label += " (fixed " + strings.Join(fixed, " ") + ")"
	}
	label += fmt.Sprintf(" · %s allowed", plural(p.size, "config"))
	if p.excluded > 0 {
		label += fmt.Sprintf(", %d refused", p.excluded)
	}
	label += " · budget strategy: "
	return m, m.prompt.open(promptTune, label, p.defaults.String(), m.width)
}

func knobNames(ks []search.Knob) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return strings.Join(names, " ")
}

// tuneRun is a search started by `T`: its settings, each evaluation in
// order and, once the driver is done, its outcome.
type tuneRun struct {
	cfg     tune.Config
	knobs   []string // the searched knobs
	space   int      // configurations allowed
	evals   int      // evaluations the budget allows (full measurements)
	points  []tunePoint
	spent   float64 // budget spent, in full measurements
	finals  int     // contenders re-measured so far
	ended   bool
	outcome *tune.Outcome
	err     error
}

// tunePoint is one evaluation of the search.
type tunePoint struct {
	id     int     // its history run
	value  float64 // the objective, when ok
	ok     bool    // measured and usable (not invalid, failed or wrong)
	status profiler.Status
	knobs  map[string]int
}

// remeasuring says whether the search is over and its best are being
// measured again.
func (t *tuneRun) remeasuring() bool {
	return !t.ended && (t.finals > 0 || t.spent >= float64(t.evals)-1e-9)
}

// better says whether objective value a beats b.
func (t *tuneRun) better(a, b float64) bool {
	if t.cfg.Objective.Maximise() {
		return a > b
	}
	return a < b
}

// bestSoFar is, after each evaluation, the index of the best usable one
// up to it (-1 before the first usable).
func (t *tuneRun) bestSoFar() []int {
	out := make([]int, len(t.points))
	best := -1
	for i, p := range t.points {
		if p.ok && (best < 0 || t.better(p.value, t.points[best].value)) {
			best = i
		}
		out[i] = best
	}
	return out
}

// best is the best evaluation so far.
func (t *tuneRun) best() (tunePoint, bool) {
	bs := t.bestSoFar()
	if len(bs) == 0 || bs[len(bs)-1] < 0 {
		return tunePoint{}, false
	}
	return t.points[bs[len(bs)-1]], true
}

// fmtValue is an objective value as people read it: "118 µs", "1.23 TFLOP/s".
func (t *tuneRun) fmtValue(v float64) string {
	if t.cfg.Objective == tune.MedianUS {
		return units.Nanos(v * 1e3)
	}
	return units.Sig3(v) + " " + t.cfg.Objective.Unit()
}

// bestText is "best 118 µs BQ=8 BK=16 (#7)", or "" before any usable one.
func (t *tuneRun) bestText() string {
	p, ok := t.best()
	if !ok {
		return ""
	}
	return fmt.Sprintf("best %s %s (#%d)", t.fmtValue(p.value), tune.KnobText(p.knobs, t.knobs), p.id)
}

// tuneEvent is what the search's goroutine sends: a spec started, a
// progress report, a measured row (stamped with its search step) or the
// end with the driver's outcome.
type tuneEvent struct {
	started  bool
	progress *profiler.Progress
	row      *profiler.Result
	end      bool
	outcome  *tune.Outcome
	err      error
}

type tuneEventMsg struct {
	batch int
	ch    <-chan tuneEvent
	ev    tuneEvent
	done  bool
}

func waitTune(id int, ch <-chan tuneEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		return tuneEventMsg{batch: id, ch: ch, ev: ev, done: !ok}
	}
}

// rowSink hands the driver's rows to the session as they are written.
type rowSink func(profiler.Result)

func (s rowSink) Write(r profiler.Result) error { s(r); return nil }
func (s rowSink) Close() error                  { return nil }

// startTune runs the search the prompt's answer asks for in a goroutine,
// as a batch: esc cancels it and every row joins the history.
func (m Model) startTune(answer string) (Model, tea.Cmd) {
	p := m.tuneAsk
	m.tuneAsk = nil
	if p == nil {
		return m, nil
	}
	c, err := parseTuneAnswer(answer, p.defaults)
	if err != nil {
		m.setMsg(true, err.Error())
		return m, nil
	}
	cfg := tune.Config{Base: p.base, Knobs: p.knobs, Strategy: c.strategy, Seed: tuneSeed, Budget: c.budget,
		Objective: c.objective, Options: m.opts.DefaultOptions}
	t := &tuneRun{cfg: cfg, space: p.size, evals: min(c.budget.EvalsFor(p.size), p.size)}
	if t.evals == p.size && c.budget.Time == 0 {
		t.cfg.Strategy = "exhaustive" // as the driver decides: the budget covers every configuration
	}
	for _, k := range p.knobs {
		t.knobs = append(t.knobs, k.Name)
	}
	m.batchSeq++
	b := &batch{id: m.batchSeq, label: "tune", running: true, origin: originTune, tune: t}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	m.batch, m.msg = b, ""
	ch := make(chan tuneEvent, 64)
	exec, stop := m.exec, m.stop
	send := func(ev tuneEvent) { // rows and the end may not be dropped
		select {
		case ch <- ev:
		case <-stop:
			cancel()
		}
	}
	cfg.Hooks = run.Hooks{
		Start: func(int, int, profiler.Spec) { send(tuneEvent{started: true}) },
		Progress: func(_, _ int, _ profiler.Spec, p profiler.Progress) {
			select { // progress may be dropped
			case ch <- tuneEvent{progress: &p}:
			default:
			}
		},
	}
	sink := rowSink(func(r profiler.Result) { send(tuneEvent{row: &r}) })
	go func() {
		defer close(ch)
		out, err := tune.Search(ctx, exec, cfg, []profiler.Sink{sink})
		send(tuneEvent{end: true, outcome: out, err: err})
	}()
	return m, waitTune(b.id, ch)
}

func (m Model) onTuneEvent(msg tuneEventMsg) (Model, tea.Cmd) {
	b := m.batch
	if b == nil || b.id != msg.batch {
		if msg.done {
			return m, nil
		}
		return m, waitTune(msg.batch, msg.ch) // drain a superseded search
	}
	if msg.done {
		b.running = false
		b.cancel()
		if b.cancelled && m.queued != nil {
			m.msg += "; " + m.queued.label + " was not started"
		}
		return m.afterBatch(b)
	}
	switch ev := msg.ev; {
	case ev.started:
		b.progress = profiler.Progress{}
	case ev.progress != nil:
		b.progress = *ev.progress
	case ev.row != nil:
		m.addTuneRow(b, *ev.row)
	case ev.end:
		b.tune.ended, b.tune.outcome, b.tune.err = true, ev.outcome, ev.err
		m.finishTune(b)
	}
	return m, waitTune(msg.batch, msg.ch)
}

// addTuneRow puts a row of the search in the history and, unless it is a
// re-measurement or was cancelled, among the evaluations.
func (m *Model) addTuneRow(b *batch, r profiler.Result) {
	t := b.tune
	final := r.Search != nil && r.Search.Final
	via := originTune
	if final {
		via = originFinal
	}
	e := m.hist.add(r, !m.picking(), via)
	b.specs = append(b.specs, r.Spec)
	b.results = append(b.results, &r)
	b.ids = append(b.ids, e.id)
	b.done++
	b.progress = profiler.Progress{}
	switch {
	case r.Status == profiler.StatusCancelled:
	case final:
		t.finals++
	default:
		v, ok := t.cfg.Objective.Value(r)
		t.points = append(t.points, tunePoint{id: e.id, value: v, ok: ok, status: r.Status, knobs: r.Spec.Knobs})
		t.spent++
		if r.Search != nil && r.Search.Fidelity > 0 {
			t.spent += r.Search.Fidelity - 1
		}
	}
}

// finishTune says how the search ended and, when it found a winner,
// loads it into the editor: the next `r` runs it.
func (m *Model) finishTune(b *batch) {
	t := b.tune
	n := plural(len(t.points), "evaluation")
	switch {
	case b.cancelled:
		s := "tune cancelled after " + n
		if bt := t.bestText(); bt != "" {
			s += "; " + bt
		}
		m.setMsg(false, s+"; the editor is unchanged, the runs stay in the history")
	case t.err != nil:
		m.setMsg(true, fmt.Sprintf("tune found no winner after %s: %v", n, t.err))
	case t.outcome == nil || len(t.outcome.Finalists) == 0:
		m.setMsg(true, "tune ended without a winner after "+n)
	default:
		w := t.outcome.Winner()
		win := t.cfg.Base.Clone()
		for _, k := range t.knobs {
			win.Knobs[k] = w.Spec.Knobs[k]
		}
		m.editor.loadSpec(win)
		m.setMsg(false, fmt.Sprintf("tune done (%s): %s loaded into the editor · %s", n, tune.KnobText(win.Knobs, t.knobs), t.outcome.Compare.Text))
	}
}

// tuneProgress is the status line of a search in flight:
// "▶ tune tpe 7/24 · best 118 µs BQ=8 BK=16 (#7) · measure n=7 …".
func (m Model) tuneProgress() string {
	b, t := m.batch, m.batch.tune
	var s string
	switch {
	case t.remeasuring():
		s = fmt.Sprintf("▶ tune %s: re-measuring the best (%d done)", t.cfg.Strategy, t.finals)
	case t.cfg.Budget.Time > 0:
		s = fmt.Sprintf("▶ tune %s %d evaluations of %s", t.cfg.Strategy, len(t.points), t.cfg.Budget.Time)
	default:
		s = fmt.Sprintf("▶ tune %s %g/%d", t.cfg.Strategy, t.spent, t.evals)
	}
	if bt := t.bestText(); bt != "" {
		s += " · " + bt
	}
	if p := b.progress; p.Phase != "" {
		s += " · " + p.Phase
		if p.Samples > 0 {
			s += fmt.Sprintf(" n=%d", p.Samples)
		}
	}
	return s
}
