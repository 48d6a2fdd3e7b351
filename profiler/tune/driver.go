package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/units"
)

// Config is one search: a shape (Base: kernel, dtype, dims, flags and any
// knobs held fixed), the knobs to search and how.
type Config struct {
	Base  profiler.Spec
	Knobs []search.Knob
	// Allow is an extra rule a configuration must pass before it is
	// measured (a sweep's where: filters); nil for none.
	Allow     func(profiler.Spec) error
	Strategy  string
	Seed      uint64
	Budget    search.Budget
	Objective Objective
	// MinImprovement stops the search when the last Patience full
	// measurements improved the best by less than this fraction (0: off).
	MinImprovement float64
	Patience       int // 0: max(10, a quarter of the budget)
	Top            int // contenders re-measured at the end (0: 3)
	Batch          int // points proposed at once (0: 4), so compiles overlap
	Options        profiler.Options
	// Resume are rows a search wrote before (any shapes: those of this
	// shape with a search step are told to the strategy, not measured).
	Resume []profiler.Result
	Log    io.Writer // progress lines; nil for none
	Hooks  run.Hooks
	// Now is the clock of a time budget (nil: time.Now).
	Now func() time.Time
	// Space is the configurations to search when the caller built them
	// already with SpaceOf for this device, Base, Knobs, Options and Allow
	// (searches of one shape share it: planning every configuration to
	// ask the rules is most of a replayed search's time); nil builds it.
	Space *search.Space
}

// Outcome is what a search found.
type Outcome struct {
	Space      int // configurations allowed
	Excluded   int // refused by the constraints before measuring
	Exhaustive bool
	Measured   int     // measurements this run made (brief ones included)
	Resumed    int     // measurements told from Resume
	Spent      float64 // budget spent, in full measurements
	Stop       string  // why the search stopped
	// Finalists are the contenders' re-measurements, best first.
	Finalists []profiler.Result
	Compare   Comparison
}

// Winner is the best finalist.
func (o *Outcome) Winner() profiler.Result { return o.Finalists[0] }

// ErrNoValid is wrapped when every configuration measured was invalid or
// failed: nothing can be called best.
var ErrNoValid = errors.New("no configuration gave a usable measurement")

// searchRun is one search's state.
type searchRun struct {
	cfg   Config
	exec  profiler.Executor
	sinks []profiler.Sink
	sp    *search.Space
	strat search.Strategy
	out   Outcome
	step  int
	best  []float64 // best full-fidelity cost after each full measurement
	rows  []profiler.Result
}

// Search runs cfg on exec, writing every measurement to sinks. Errors that
// are the input's (no configuration allowed, an unknown strategy) come
// before anything is measured; *profiler.InputError is not used here, the
// caller decides the exit code (errors.Is search.ErrEmpty, ErrNoValid).
func Search(ctx context.Context, exec profiler.Executor, cfg Config, sinks []profiler.Sink) (*Outcome, error) {
	cfg = withDefaults(cfg)
	sp := cfg.Space
	if sp == nil {
		var err error
		if sp, err = SpaceOf(exec.Device(), cfg); err != nil {
			return nil, err
		}
	} else if !sameKnobs(sp.Knobs, cfg.Knobs) {
		return nil, fmt.Errorf("%s: the space given was built for other knobs than the search's: build it with SpaceOf from this Config", cfg.Label())
	}
	evals := cfg.Budget.EvalsFor(sp.Size())
	r := &searchRun{cfg: cfg, exec: exec, sinks: sinks, sp: sp, out: Outcome{Space: sp.Size(), Excluded: sp.Excluded}}
	name := cfg.Strategy
	if evals >= sp.Size() && cfg.Budget.Time == 0 { // a time budget keeps its strategy: the clock stops it
		name, r.out.Exhaustive = "exhaustive", true
		evals = sp.Size()
		r.logf("budget %s ≥ the %d configurations allowed: measuring every one (exhaustive)", cfg.Budget, sp.Size())
	}
	var err error
	if r.strat, err = search.New(name, sp, cfg.Seed, evals); err != nil {
		return nil, err
	}
	r.resume()
	r.logf("%s: %s search over %d configurations (%d refused before measuring), budget %s%s", cfg.Label(), r.strat.Name(), sp.Size(), sp.Excluded, cfg.Budget, measuringTime(cfg, exec.Device(), evals))
	if err := r.loop(ctx, float64(evals)); err != nil {
		return &r.out, err
	}
	if err := r.remeasure(ctx); err != nil {
		return &r.out, err
	}
	return &r.out, nil
}

// SpaceOf is the space Search builds for cfg on a device: cfg.Knobs'
// combinations that the schema, the family's rules, its plan, the device's
// limits and cfg.Allow let run (see allowed).
func SpaceOf(dev profiler.DeviceInfo, cfg Config) (*search.Space, error) {
	sp, err := search.NewSpace(cfg.Knobs, allowed(dev, cfg.Base, cfg.Options, cfg.Allow))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	return sp, nil
}

func sameKnobs(a, b []search.Knob) bool {
	return slices.EqualFunc(a, b, func(x, y search.Knob) bool { return x.Name == y.Name && slices.Equal(x.Values, y.Values) })
}

// Label names the search's shape: the base spec without the searched
// knobs ("rmsnorm_bwd bf16 ST=0 | rows=4096 D=8192").
func (c Config) Label() string {
	s := c.Base.Clone()
	for _, k := range c.Knobs {
		delete(s.Knobs, k.Name)
	}
	return s.String()
}

func withDefaults(cfg Config) Config {
	if cfg.Top <= 0 {
		cfg.Top = 3
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 4
	}
	if cfg.Objective == "" {
		cfg.Objective = MedianUS
	}
	if cfg.Strategy == "" {
		cfg.Strategy = "tpe"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

func (r *searchRun) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "mltop: "+format+"\n", a...)
	}
}

// sameShape says whether row was measured for base's shape (everything
// but the searched knobs).
func (r *searchRun) sameShape(row profiler.Result) bool {
	b := r.cfg.Base
	if row.Spec.Kernel != b.Kernel || row.Spec.DType != b.DType || !maps.Equal(row.Spec.Dims, b.Dims) {
		return false
	}
	for k, v := range b.Flags {
		if row.Spec.Flags[k] != v {
			return false
		}
	}
	for k, v := range b.Knobs {
		if !slices.ContainsFunc(r.cfg.Knobs, func(kn search.Knob) bool { return kn.Name == k }) && row.Spec.Knobs[k] != v {
			return false
		}
	}
	return true
}

// resume tells the strategy the rows of this shape a search wrote before.
func (r *searchRun) resume() {
	var told []search.Result
	for _, row := range r.cfg.Resume {
		if row.Search == nil || row.Search.Final || row.Status == profiler.StatusCancelled || !r.sameShape(row) {
			continue
		}
		i, ok := r.sp.Find(row.Spec.Knobs)
		if !ok {
			continue
		}
		p := r.sp.Point(i)
		p.Fidelity = row.Search.Fidelity
		told = append(told, r.result(p, row))
		r.out.Resumed++
		r.out.Spent += p.Fidelity
		r.step = max(r.step, row.Search.Step)
	}
	if len(told) > 0 {
		r.strat.Tell(told)
		r.logf("resumed: %d measurements of %s already in the file are told to the search, not measured again", len(told), r.cfg.Label())
	}
}

// result turns a measured row into what the strategy learns; it also
// keeps the row as a contender.
func (r *searchRun) result(p search.Point, row profiler.Result) search.Result {
	res := search.Result{Point: p}
	cost, ok := r.cfg.Objective.Cost(row)
	switch {
	case row.Status == profiler.StatusInvalid:
		res.Invalid = true
	case !ok:
		res.Failed = true
	default:
		res.Cost = cost
	}
	r.rows = append(r.rows, row)
	if p.Fidelity >= 1 && ok {
		b := cost
		if n := len(r.best); n > 0 {
			b = min(b, r.best[n-1])
		}
		r.best = append(r.best, b)
	}
	return res
}

// loop proposes, measures and tells until the budget, the clock, the
// space or min_improvement stops it.
func (r *searchRun) loop(ctx context.Context, evals float64) error {
	var deadline time.Time
	if r.cfg.Budget.Time > 0 {
		deadline = r.cfg.Now().Add(r.cfg.Budget.Time)
	}
	for {
		switch {
		case r.out.Spent >= evals-1e-9:
			r.out.Stop = fmt.Sprintf("budget spent (%s)", r.cfg.Budget)
			if r.out.Exhaustive {
				r.out.Stop = "every configuration measured (exhaustive)"
			}
			return nil
		case !deadline.IsZero() && !r.cfg.Now().Before(deadline):
			r.out.Stop = fmt.Sprintf("time budget spent (%s)", r.cfg.Budget.Time)
			return nil
		case r.stalled():
			r.out.Stop = fmt.Sprintf("the last %d measurements improved the best by less than min_improvement %g", r.patience(), r.cfg.MinImprovement)
			return nil
		}
		ps := r.strat.Next(min(r.cfg.Batch, max(1, int(math.Ceil(evals-r.out.Spent)))))
		if len(ps) == 0 {
			r.out.Stop = "every configuration allowed was measured"
			return nil
		}
		if ps = fitBudget(ps, evals-r.out.Spent); len(ps) == 0 {
			r.out.Stop = fmt.Sprintf("budget spent (%s)", r.cfg.Budget)
			return nil
		}
		rows, err := r.measure(ctx, ps, false)
		var told []search.Result
		for k, row := range rows {
			if row.Status == profiler.StatusCancelled {
				continue
			}
			told = append(told, r.result(ps[k], row))
			r.out.Spent += ps[k].Fidelity
		}
		r.strat.Tell(told)
		if err != nil {
			r.out.Stop = "interrupted"
			return err
		}
	}
}

// fitBudget keeps the points whose fidelities fit in what is left.
func fitBudget(ps []search.Point, left float64) []search.Point {
	for k, p := range ps {
		if left -= p.Fidelity; left < -1e-9 {
			return ps[:k]
		}
	}
	return ps
}

func (r *searchRun) patience() int {
	if r.cfg.Patience > 0 {
		return r.cfg.Patience
	}
	return max(10, r.cfg.Budget.EvalsFor(r.sp.Size())/4)
}

// stalled says whether min_improvement stops the search.
func (r *searchRun) stalled() bool {
	n, p := len(r.best), r.patience()
	if r.cfg.MinImprovement <= 0 || n <= p {
		return false
	}
	before, now := r.best[n-1-p], r.best[n-1]
	return before-now < r.cfg.MinImprovement*math.Abs(before)
}

// measure runs the points through the engine's job loop, each row marked
// with its search step (or as final), and returns the rows in order.
func (r *searchRun) measure(ctx context.Context, ps []search.Point, final bool) ([]profiler.Result, error) {
	jobs := make([]profiler.Job, len(ps))
	marks := make([]*profiler.SearchMark, len(ps))
	for k, p := range ps {
		opt := r.cfg.Options
		if final {
			marks[k] = &profiler.SearchMark{Final: true, Fidelity: 1}
			opt = FinalOptions(opt)
		} else {
			r.step++
			marks[k] = &profiler.SearchMark{Step: r.step, Fidelity: p.Fidelity}
			opt = BriefOptions(opt, p.Fidelity)
		}
		jobs[k] = profiler.Job{Spec: specAt(r.cfg.Base, r.sp.Values(p)), Options: opt}
	}
	st := &stampSink{marks: marks, inner: r.sinks}
	_, err := run.Jobs(ctx, r.exec, jobs, nil, []profiler.Sink{st}, r.cfg.Hooks)
	if !final {
		r.out.Measured += len(st.rows)
	}
	return st.rows, err
}

// BriefOptions are o for a measurement of the given fidelity: that share
// of the time limit and of the minimum time and samples (at least 3).
func BriefOptions(o profiler.Options, fidelity float64) profiler.Options {
	if fidelity >= 1 || fidelity <= 0 {
		return o
	}
	o.Stop.MaxTime *= fidelity
	o.Stop.MinTime *= fidelity
	o.Stop.MinSamples = max(3, int(math.Ceil(float64(o.Stop.MinSamples)*fidelity)))
	return o
}

// FinalOptions are o for re-measuring a contender: the noise target at most
// 0.5% and twice the time limit, so that the comparison has narrow
// intervals where the device allows.
func FinalOptions(o profiler.Options) profiler.Options {
	o.Stop.Noise = min(o.Stop.Noise, 0.005)
	o.Stop.MaxTime *= 2
	return o
}

// stampSink marks each row with its search step (rows come in job order)
// and hands it on.
type stampSink struct {
	marks []*profiler.SearchMark
	inner []profiler.Sink
	rows  []profiler.Result
}

func (s *stampSink) Write(res profiler.Result) error {
	if n := len(s.rows); n < len(s.marks) {
		m := *s.marks[n]
		res.Search = &m
	}
	s.rows = append(s.rows, res)
	for _, in := range s.inner {
		if err := in.Write(res); err != nil {
			return err
		}
	}
	return nil
}

func (s *stampSink) Close() error { return nil }

// measuringTime is "; measuring takes about 20 s to 2 min" for evals
// evaluations and the re-measurement of the top few, each costing what a
// sweep's estimate gives the base spec on dev ("" for a time budget, or
// when the spec cannot be planned).
func measuringTime(cfg Config, dev profiler.DeviceInfo, evals int) string {
	if cfg.Budget.Time > 0 {
		return ""
	}
	one := run.Estimate([]profiler.Job{{Spec: cfg.Base, Options: cfg.Options}}, &dev)
	if one.Hi <= 0 {
		return ""
	}
	n := time.Duration(evals + cfg.Top)
	lo, hi := n*one.Lo, n*one.Hi
	if hi < time.Minute {
		return fmt.Sprintf("; measuring takes about %s to %s", units.Elapsed(lo), units.Elapsed(hi))
	}
	return fmt.Sprintf("; measuring takes about %s to %s", units.Span(lo), units.Span(hi))
}
