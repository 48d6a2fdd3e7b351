package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/profiler/units"
)

// resumeCheck refuses a --resume whose file timed the sweep's specs in
// another cache mode or with another --settle: the specs in it would be
// skipped, and the file would end up with rows of two settings while the
// user believes it holds one. run.Sweep hands it the sweep's jobs found
// in the file (add), before anything runs.
type resumeCheck struct {
	path  string
	done  map[string]sink.DoneRow
	n     int
	first string
}

func (c *resumeCheck) add(j profiler.Job) {
	had, ok := c.done[j.Spec.Key()]
	if !ok || had.Cache == "" { // not in the file, or not measured there
		return
	}
	why := ""
	if want := j.Options.CacheMode(); had.Cache != want {
		why = fmt.Sprintf("cache %s, this sweep times it with cache %s", had.Cache, want)
	} else if had.Settle != j.Options.Settle {
		why = fmt.Sprintf("--settle %g, this sweep times it with --settle %g", had.Settle, j.Options.Settle)
	}
	if why == "" {
		return
	}
	if c.n == 0 {
		c.first = fmt.Sprintf("%s was timed with %s", j.Spec, why)
	}
	c.n++
}

func (c *resumeCheck) err() error {
	if c == nil || c.n == 0 {
		return nil
	}
	return badInput("--resume %s: %d rows of this sweep were timed with other settings (%s): resume with the settings that wrote the file (--cache and --settle, or cache: and settle: in the sweep file), or write a new --csv", c.path, c.n, c.first)
}

// noteNewResumeFile says on stderr, before what runs starts, that the
// --resume file does not exist. Starting afresh and creating it is right
// for a script's first run, but a misspelt path would otherwise measure
// everything again without a word. what is "sweep" or "search".
func noteNewResumeFile(w io.Writer, path, what string, dryRun bool) {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return // there, or unreadable: reading it says why
	}
	tail := fmt.Sprintf("the %s starts from the beginning and writes it", what)
	if dryRun {
		tail = fmt.Sprintf("a run would start the %s from the beginning and write it", what)
	}
	fmt.Fprintf(w, "mltop: --resume %s does not exist: nothing to resume, %s\n", path, tail)
}

// errDryRun stops a --dry-run sweep after its announcement.
var errDryRun = errors.New("--dry-run: nothing runs")

// sweepRun is what runSweep's steps share.
type sweepRun struct {
	o              *options
	ctx            context.Context // the sweep's: stdoutGone cancels it
	cancel         context.CancelCauseFunc
	path           string
	st             *sweep.Stream
	cols           sink.Columns
	stdout, stderr io.Writer
	resume         *resumeCheck
	resumeAt       sink.ResumeOn   // where the --resume runs: its rewrite drops the rows that run again
	claims         *run.DirClaims  // --claims, closed with the sweep
	sample         []profiler.Spec // the first specs, to fit the table to
	bar            *progress
	out            fanout // the sinks, once the announcement has let the sweep start
	csv            profiler.Sink
	phases         *phaseSink
	table          *sink.Table       // closed after the sweep: it says how often a reason repeated
	exec           profiler.Executor // nil with --devices
	timeout        atomic.Int64      // the first watchdog timeout a job asks for (ns; 0: none)
	settles        bool              // some spec settles: the clock note is not needed
	total          int               // specs to run, as announced
	count          string            // total in words ("about …" when estimated)
}

func runSweep(ctx context.Context, s *session, path string, o *options, stdout, stderr io.Writer) error {
	st, err := sweep.LoadStream(path, profiler.DefaultOptions(), s.sweepOptions())
	if err != nil {
		return err
	}
	backend := o.backend
	if !o.set["backend"] && st.Backend != "" {
		backend = st.Backend
	}
	if st.Search != nil { // a search: block picks which specs to measure (search_sweep.go)
		return s.runSweepSearch(ctx, o, backend, path, st)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sr := &sweepRun{o: o, ctx: ctx, cancel: cancel, path: path, st: st, stdout: stdout, stderr: stderr, sample: firstSpecs(ctx, st, 1000)}
	// From the whole sweep's kernels: every shard writes the same header.
	sr.cols = sink.ColumnsFor(kernelSpecs(st))
	cfg := run.SweepConfig{Source: st, Log: stderr, Announce: sr.announce, Start: sr.startOutputs,
		Options: func(opt profiler.Options) profiler.Options {
			m := o.measureOptions(&opt)
			sr.timeout.CompareAndSwap(0, int64(m.Timeout))
			return m
		}}
	if err := sr.checkInputs(&cfg, backend); err != nil {
		return err
	}
	defer sr.close()
	traceStep("sweep read and checked")
	if o.devices != "" && !o.dryRun {
		// The workers start now, while the sweep is counted (earlyDevices).
		early := s.startDevices(ctx, o, backend)
		defer func() { early.close(); traceStep("workers closed") }()
		cfg.OpenDevices = func() ([]run.Device, error) { return early.open(sr) }
	} else if o.devices == "" {
		exec, err := s.openExecutor(ctx, backend, o.isolate)
		switch {
		case err != nil && o.dryRun && strings.Contains(err.Error(), unavailableMarker):
			noteDryRunWithoutDevice(stderr, err, backend)
		case err != nil:
			return err
		default:
			defer exec.Close()
			cfg.Exec = exec
			sr.exec = exec
		}
	}
	sr.resumeOn(&cfg, backend)
	if o.dryRun && cfg.Exec == nil { // no device counts the specs: what every GPU of the backend shares does
		cfg.Shared = sharedLimits(resolveBackend(backend))
	}
	sum, err := run.Sweep(ctx, cfg, &sr.out)
	traceStep("sweep done")
	if !sr.out.open {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitFailed, msg: "interrupted before the sweep started: nothing ran"}
		}
		if errors.Is(err, errDryRun) {
			return nil
		}
		return err // refused before anything ran
	}
	sr.bar.finish()
	return sr.report(sum, err)
}

// noteDryRunWithoutDevice says that --dry-run counts a sweep whose backend
// is not here (a CUDA sweep planned on a laptop) without a device, what
// it holds the specs against and what that leaves out.
func noteDryRunWithoutDevice(w io.Writer, why error, backend string) {
	held := "no spec is checked against one (shared memory, registers, a family's limits)"
	if l := sharedLimits(resolveBackend(backend)); l != nil && l.Backend == "cpu" {
		held = "user kernels count as invalid (the CPU backend runs only built-in families); no spec is checked against a device (memory, a family's limits)"
	} else if l != nil {
		held = fmt.Sprintf("specs are held against the limits every %s shares (%s), not against a device's own (its shared memory, registers, a family's limits)", l.GPUs, l)
	}
	fmt.Fprintf(w, "mltop: %v\nmltop: --dry-run counts the sweep without a device: %s, and the time is estimated from nominal costs\n", why, held)
}

// sharedLimits are the per-group limits every GPU of backend shares (the
// CPU: none, but it refuses user kernels); nil for another name.
func sharedLimits(backend string) *run.SharedLimits {
	switch backend {
	case "cuda":
		return &run.SharedLimits{Backend: "cuda", GPUs: "CUDA GPU", Threads: cuda.MaxThreadsPerBlock,
			StaticTGM: cuda.SharedPerBlockNoOptIn, TGM: cuda.MaxSharedPerBlockOptIn}
	case "metal":
		return &run.SharedLimits{Backend: "metal", GPUs: "Apple GPU", Threads: metal.MaxThreadsPerGroup, TGM: metal.TGMPerGroup}
	case "cpu": // no group limits; a user kernel is refused whatever the CPU
		return &run.SharedLimits{Backend: "cpu", GPUs: "CPU"}
	}
	return nil
}

// checkInputs checks every input before the announcement: --shard,
// --resume, --devices against the backend, the CSV path.
func (sr *sweepRun) checkInputs(cfg *run.SweepConfig, backend string) error {
	o := sr.o
	if o.shard != "" {
		sh, err := sweep.ParseShard(o.shard, os.Getenv)
		if err != nil {
			return badInput("%v", err)
		}
		cfg.Shard = &sh
	} else if o.claims != "" {
		return badInput("--claims %s balances the shards of one sweep: add --shard i/n (each shard with the same --claims directory), or drop --claims", o.claims)
	}
	if o.resume != "" {
		done, err := sink.ReadDoneRows(o.resume, sr.cols)
		if err != nil {
			return err
		}
		// cfg.Skip waits for where the sweep runs (resumeOn).
		sr.resume = &resumeCheck{path: o.resume, done: done}
		cfg.Skipped = sr.resume.add
		cfg.Resumed = func(j profiler.Job) (profiler.Result, bool) {
			row, ok := done[j.Spec.Key()]
			return row.Result(), ok
		}
	}
	if o.devices != "" {
		if o.isolate == "off" {
			return badInput("--devices runs one worker subprocess per device: drop --isolate off")
		}
		b := resolveBackend(backend)
		n, countErr := countDevices(b)
		counted := func(string) (int, error) { return n, countErr } // counted once
		if _, err := resolveDevices(o.devices, b, counted, os.Getenv(repeatDevicesEnv) == "1"); err != nil {
			if !o.dryRun || countErr == nil {
				return err
			}
			noteDryRunWithoutDevice(sr.stderr, err, backend) // the backend cannot count: no device to check against
		}
	}
	if o.csv != "" {
		if err := sink.CheckCSVPath(o.csv, o.resume != ""); err != nil {
			return err
		}
	}
	if o.resume != "" {
		noteNewResumeFile(sr.stderr, o.resume, "sweep", o.dryRun)
	}
	if o.claims != "" && !o.dryRun { // last: nothing after it fails (sweepRun.close removes its file)
		c, err := run.OpenDirClaims(o.claims, cfg.Shard.Part(), cfg.Shard.Parts())
		if err != nil {
			return badInput("%v", err)
		}
		sr.claims, cfg.Claims = c, c
	}
	return nil
}

// resumeOn sets cfg.Skip to the --resume rows the sweep does not run
// again where it runs: on its one device (sr.exec), or on backend (with
// --devices, or a --dry-run without a device). A row that another backend
// or device could not run (invalid, error, compile_error) runs again, and
// stderr says how many before the banner.
func (sr *sweepRun) resumeOn(cfg *run.SweepConfig, backend string) {
	if sr.resume == nil {
		return
	}
	on := sink.ResumeOn{Backend: resolveBackend(backend)}
	if sr.exec != nil {
		d := sr.exec.Device()
		on = sink.ResumeOn{Backend: d.Backend, Device: d.Name}
	}
	sr.resumeAt = on
	cfg.Skip = make(map[string]bool, len(sr.resume.done))
	again := newResumeAgain(on)
	for k, row := range sr.resume.done {
		if !again.take(row) {
			cfg.Skip[k] = true
			continue
		}
		delete(sr.resume.done, k)
	}
	again.note(sr.stderr, sr.o.resume, sr.o.dryRun)
}

// resumeAgain sorts the rows of a --resume file by whether they run again
// where the sweep or search runs (sink.ResumeOn.RunsAgain): those another
// backend or device could not run are counted by where they were recorded
// and their status, for note. Sweeps and searches (tune, search:) share it.
type resumeAgain struct {
	on    sink.ResumeOn
	again map[string]map[profiler.Status]int // where recorded → status → rows
	order []string
}

func newResumeAgain(on sink.ResumeOn) *resumeAgain {
	return &resumeAgain{on: on, again: map[string]map[profiler.Status]int{}}
}

// take says whether row's spec runs again here, counting the row when
// another backend or device wrote it.
func (a *resumeAgain) take(row sink.DoneRow) bool {
	if !a.on.RunsAgain(row) {
		return false
	}
	if !sink.RanElsewhere(row.Status) {
		return true // cancelled: runs again, as ever, unsaid
	}
	where := row.Backend
	if where == a.on.Backend {
		where = row.Device
	}
	if a.again[where] == nil {
		a.again[where] = map[profiler.Status]int{}
		a.order = append(a.order, where)
	}
	a.again[where][row.Status]++
	return true
}

// note says on w, before anything runs, how many rows of file run again
// and where they were recorded; nothing when none does.
func (a *resumeAgain) note(w io.Writer, file string, dryRun bool) {
	if len(a.order) == 0 {
		return
	}
	order := slices.Sorted(slices.Values(a.order))
	here := a.on.Backend
	if a.on.Device != "" {
		here += " (" + a.on.Device + ")"
	}
	verb := "run again"
	if dryRun {
		verb = "would run again"
	}
	var parts []string
	for _, where := range order {
		n, kinds := 0, []string{}
		for _, st := range []profiler.Status{profiler.StatusInvalid, profiler.StatusError, profiler.StatusCompileError} {
			if c := a.again[where][st]; c > 0 {
				n += c
				kinds = append(kinds, fmt.Sprintf("%d %s", c, st))
			}
		}
		parts = append(parts, fmt.Sprintf("%s recorded on %s (%s)", profiler.Plural(n, "row", "rows"), where, strings.Join(kinds, ", ")))
	}
	fmt.Fprintf(w, "mltop: --resume %s: %s %s on %s: the backend or device that wrote them could not run them, this one may; each new row replaces its old one (to keep them instead, resume on %s)\n",
		file, strings.Join(parts, ", "), verb, here, strings.Join(order, " or "))
}

// announce is run.Sweep's Announce: the banner and the --yes guard.
func (sr *sweepRun) announce(p run.SweepPlan) error {
	if p.Exact {
		if err := sr.resume.err(); err != nil {
			return err
		}
	}
	// Counted by the plan's walk of the sweep, or estimated from its sample.
	fmt.Fprint(sr.stderr, sr.st.DuplicatesNote())
	if err := announce(p, sr.path, sr.o.yes || sr.o.dryRun, sr.stderr); err != nil {
		return err
	}
	sr.noteNoWatchdog()
	if sr.o.dryRun {
		if err := nothingRunnable(p, sr.path); err != nil {
			return err
		}
		noteSomeInvalid(sr.stderr, p, sr.path)
		return errDryRun
	}
	return nil
}

// nothingRunnable is --dry-run's error for a sweep none of whose specs can
// run (each one invalid on the device it was checked against), naming the
// reasons; nil when one can, or when nothing was checked.
func nothingRunnable(p run.SweepPlan, path string) error {
	if p.Specs > 0 || p.Invalid == 0 || p.Skipped > 0 {
		return nil
	}
	which := "all " + profiler.Plural(p.Invalid, "spec", "specs") + " of " + path + " are invalid"
	if p.Invalid == 1 {
		which = "the one spec of " + path + " is invalid"
	}
	if !p.Exact {
		which = fmt.Sprintf("all %d combinations of %s drawn at random are invalid", p.Sampled, path)
	}
	return badInput("--dry-run: nothing would run: %s; by reason:\n%s\nchange what they name (the sweep's values or where: rules, the backend, the kernel) so that a spec runs",
		which, invalidByReason(p))
}

// noteSomeInvalid is --dry-run's list of the reasons when only some specs
// are invalid (nothingRunnable's when all are).
func noteSomeInvalid(w io.Writer, p run.SweepPlan, path string) {
	if p.Specs == 0 || p.Invalid == 0 {
		return
	}
	of := fmt.Sprintf("%s of %s", profiler.Plural(p.Invalid, "spec", "specs"), path)
	if !p.Exact {
		of = fmt.Sprintf("about %s of %s (counted in %d combinations drawn at random)", profiler.Plural(p.Invalid, "spec", "specs"), path, p.Sampled)
	}
	fmt.Fprintf(w, "mltop: --dry-run: %s would be invalid rows, by reason (change what a reason names, or leave those specs out with where: rules):\n%s\n", of, invalidByReason(p))
}

// invalidByReason lists p's invalid specs grouped by reason: "  N × why"
// and, under it, the first specs; the specs of further reasons in one
// line. Counts are of the sample when p is not Exact.
func invalidByReason(p run.SweepPlan) string {
	var b strings.Builder
	for i, g := range p.InvalidGroups {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %d × %s\n      %s", g.Count, g.Why, strings.Join(g.Specs, "\n      "))
		if more := g.Count - len(g.Specs); more > 0 {
			fmt.Fprintf(&b, "\n      and %d more", more)
		}
	}
	if p.InvalidOther > 0 {
		fmt.Fprintf(&b, "\n  %s for other reasons (their rows say why)", profiler.Plural(p.InvalidOther, "more spec", "more specs"))
	}
	return b.String()
}

// noteNoWatchdog warns that the sweep asked for a watchdog timeout (flag
// or file) that specs run in this process do not have.
func (sr *sweepRun) noteNoWatchdog() {
	warnNoWatchdog(sr.stderr, sr.exec, time.Duration(sr.timeout.Load()), sr.o.set["timeout"], sr.path)
}

// startOutputs is run.Sweep's Start: the rows of --resume are checked,
// then the outputs open (a refused sweep creates no file) and, on one
// device, the progress bar.
func (sr *sweepRun) startOutputs(p run.SweepPlan) (run.Hooks, error) {
	if err := sr.resume.err(); err != nil {
		return run.Hooks{}, err
	}
	if p.Deal.Parts > 0 {
		fmt.Fprintln(sr.stderr, "mltop:", shardLine(p))
	}
	c, err := openCSV(sr.o, sr.cols, sr.resumeAt)
	if err != nil {
		return run.Hooks{}, err
	}
	sr.csv = c
	if sr.o.phases {
		sr.phases = &phaseSink{w: sr.stderr}
	}
	sr.out.open = true
	total := p.Specs + p.Invalid
	sr.total, sr.settles = total, p.Estimate.Settle
	sr.count = profiler.Plural(total, "spec", "specs")
	if !p.Exact {
		sr.count = "about " + sr.count
	}
	if p.Device != nil {
		dev := p.Device
		fmt.Fprintf(sr.stderr, "mltop: %s on %s (%s), %s from %s\n", dev.Backend, dev.Name, dev.Timer, sr.count, sr.path)
		sr.start(total)
	}
	// On several devices the bar starts once they are open (sweepDevices).
	return lateHooks(&sr.bar), nil
}

// shardLine says which part of the sweep this shard runs and how the
// sweep was dealt: "shard 1/4: 25 specs, 3 of the sweep's 12 shapes (…)".
func shardLine(p run.SweepPlan) string {
	d := p.Deal
	count := profiler.Plural(p.Specs+p.Invalid+p.Skipped, "spec", "specs")
	if !p.Exact {
		count = "about " + count
	}
	if !d.ByShape {
		return fmt.Sprintf("shard %d/%d: %s (the sweep's specs are dealt to the %d shards in turn)", d.Part, d.Parts, count, d.Parts)
	}
	split := ""
	if d.Split > 0 {
		verb := map[bool]string{true: "is", false: "are"}[d.Split == 1]
		split = fmt.Sprintf("; %s dearer than a shard's share %s cut over several shards", profiler.Plural(d.Split, "shape", "shapes"), verb)
	}
	return fmt.Sprintf("shard %d/%d: %s, %d of the sweep's %s (whole shapes are dealt to the %d shards, balanced by cost%s)",
		d.Part, d.Parts, count, d.Mine, profiler.Plural(d.Shapes, "shape", "shapes"), d.Parts, split)
}

// start draws the progress bar for total specs and sends the results to
// the table above it, the CSV and the phase summary.
func (sr *sweepRun) start(total int) {
	sr.bar = newProgress(sr.stdout, sr.stderr, sr.o.quiet, total)
	if sr.bar.rows == sr.stdout { // not a terminal: whatever reads it may go away
		sr.bar.rows = &stdoutGuard{w: sr.stdout, gone: stdoutGone(sr.stderr, sr.o.csv, sr.cancel)}
	}
	out := stdoutSink(sr.o, sr.bar, sr.sample)
	sr.table, _ = out.(*sink.Table)
	sr.out.sinks = []profiler.Sink{out}
	if sr.csv != nil {
		sr.out.sinks = append(sr.out.sinks, sr.csv)
	}
	if sr.phases != nil {
		sr.out.sinks = append(sr.out.sinks, sr.phases)
	}
}

// close closes the CSV (the other sinks need no closing).
func (sr *sweepRun) close() {
	if sr.csv != nil {
		sr.csv.Close()
	}
	if sr.claims != nil {
		sr.claims.Close()
	}
}

// report prints the summary and turns the outcome into the exit code.
func (sr *sweepRun) report(sum run.Summary, err error) error {
	o, stderr := sr.o, sr.stderr
	var ee *exitError
	if errors.As(err, &ee) || profiler.IsInputError(err) {
		return err
	}
	if sr.table != nil {
		sr.table.Close()
	}
	if sr.phases != nil {
		sr.phases.Close()
		sr.phases.devices(sum)
	}
	fmt.Fprintln(stderr, "mltop:", sum.String())
	if note := sum.RaceNote(); note != "" {
		fmt.Fprintln(stderr, "mltop:", note)
	}
	if note := sum.ClockNote(); note != "" && !sr.settles {
		fmt.Fprintln(stderr, "mltop:", note)
	}
	if o.csv != "" {
		fmt.Fprintf(stderr, "mltop: CSV in %s\n", o.csv)
	}
	if errors.Is(context.Cause(sr.ctx), errStdoutClosed) {
		left := sum.NotRun + sum.ByStatus[profiler.StatusCancelled]
		if ee := stdoutClosedEnd(stderr, left, sum.Total, err); ee != nil {
			return ee
		}
	}
	if errors.Is(err, context.Canceled) {
		left := sum.NotRun + sum.ByStatus[profiler.StatusCancelled]
		msg := fmt.Sprintf("interrupted: %d of %d specs still to measure (%d not run, %d cancelled)", left, sum.Total, sum.NotRun, sum.ByStatus[profiler.StatusCancelled])
		if o.csv != "" {
			msg += fmt.Sprintf("; the rows written so far are in %s: run the same command with --resume %s to measure only those", o.csv, o.csv)
		} else {
			msg += "; the finished rows are only in the table above: run again with --csv FILE, so that --resume FILE can go on after an interruption"
		}
		return &exitError{code: exitFailed, msg: msg}
	}
	if err != nil {
		return &exitError{code: exitFailed, msg: err.Error()}
	}
	if code := sum.ExitCode(); code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// fanout is the sweep's sinks, set once it starts: run.Sweep gets it
// before the announcement decides which sinks there are.
type fanout struct {
	open  bool // the announcement let the sweep start
	sinks []profiler.Sink
}

func (f *fanout) Write(r profiler.Result) error {
	for _, s := range f.sinks {
		if err := s.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *fanout) Close() error { return nil }

// lateHooks calls the hooks of the bar *bar once there is one.
func lateHooks(bar **progress) run.Hooks {
	h := func() run.Hooks {
		if *bar == nil {
			return run.Hooks{}
		}
		return (*bar).hooks()
	}
	return run.Hooks{
		Start: func(i, n int, s profiler.Spec) {
			if f := h().Start; f != nil {
				f(i, n, s)
			}
		},
		Progress: func(i, n int, s profiler.Spec, p profiler.Progress) {
			if f := h().Progress; f != nil {
				f(i, n, s, p)
			}
		},
		Done: func(i, n int, r profiler.Result) {
			if f := h().Done; f != nil {
				f(i, n, r)
			}
		},
		Devices: func(c []run.DeviceCount) {
			if f := h().Devices; f != nil {
				f(c)
			}
		},
	}
}

// firstSpecs are the first n specs of st (fewer when it has fewer), to
// fit the result table to without walking the whole sweep.
func firstSpecs(ctx context.Context, st *sweep.Stream, n int) []profiler.Spec {
	var specs []profiler.Spec
	st.Each(ctx, func(_ int, j profiler.Job) bool {
		specs = append(specs, j.Spec)
		return len(specs) < n
	})
	return specs
}

// kernelSpecs is one spec of each kernel of st, for the CSV's columns.
func kernelSpecs(st *sweep.Stream) []profiler.Spec {
	var specs []profiler.Spec
	for _, k := range st.Kernels() {
		specs = append(specs, profiler.Spec{Kernel: k})
	}
	return specs
}

// openCSV opens --csv (nil without it) before anything runs: a bad path
// is bad input, found before the backend starts. With --resume it appends,
// after dropping the rows that run again on on (sink.OpenCSVResuming).
// Sweeps and searches (tune, search:) share it.
func openCSV(o *options, cols sink.Columns, on sink.ResumeOn) (profiler.Sink, error) {
	var c *sink.CSV
	var err error
	switch {
	case o.csv == "":
		return nil, nil
	case o.resume != "":
		c, err = sink.OpenCSVResuming(o.csv, cols, on)
	default:
		c, err = sink.OpenCSV(o.csv, cols, false)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// stdoutSink is --json, --bench or the table (fitted to stdout's terminal,
// its rows above the progress bar).
func stdoutSink(o *options, bar *progress, specs []profiler.Spec) profiler.Sink {
	switch {
	case o.json:
		return sink.NewJSON(bar.rows)
	case o.bench:
		return sink.NewBench(bar.rows)
	}
	return bar.table(specs)
}

// bigSweep is the spec count above which a sweep started from a terminal
// needs --yes.
const bigSweep = run.BigSweep

// stdinIsTerminal says whether someone could answer; tests replace it.
var stdinIsTerminal = func() bool { return isTerminal(os.Stdin) }

// announce prints how many specs will run and how long measuring takes at
// least and at most, before anything runs. A sweep of more than bigSweep
// specs started from a terminal needs --yes (without a terminal, e.g. in
// CI, it proceeds: the count is in the log).
func announce(p run.SweepPlan, path string, yes bool, stderr io.Writer) error {
	if p.Specs == 0 && p.Invalid == 0 && p.Skipped > 0 {
		// Everything is in the --resume file: no time range of nothing.
		fmt.Fprintf(stderr, "mltop: nothing to run from %s: all its %s are already in the --resume file\n", path, profiler.Plural(p.Skipped, "spec", "specs"))
		return nil
	}
	est := p.Estimate
	bad := ""
	if p.Invalid > 0 {
		bad = fmt.Sprintf(", and %d invalid (the family's rules, the device's limits, a user kernel without a source for the backend or on the CPU backend): they become invalid rows at once", p.Invalid)
	}
	each := "warmup + min_time to warmup + time_limit each"
	if est.SettleOverWarmup {
		each = "settle (or warmup) + min_time to settle + time_limit each"
	}
	if est.Slow > 0 {
		each += fmt.Sprintf(", at least %d kernel runs of the slow specs", run.MinRuns)
	}
	count, builds := profiler.Plural(p.Specs, "spec", "specs"), profiler.Plural(est.Builds, "kernel build", "kernel builds")
	if !p.Exact {
		count = "about " + count
		builds = fmt.Sprintf("estimated from %d combinations drawn at random: the sweep is too large to count in a moment", p.Sampled)
	}
	measuring := fmt.Sprintf("; measuring takes %s (%s), plus the builds", durationRange(est.Lo, est.Hi), each)
	if p.Specs == 0 {
		measuring = "" // nothing is measured: no time range of nothing
	}
	fmt.Fprintf(stderr, "mltop: %s to run from %s (%s)%s%s\n", count, path, builds, bad, measuring)
	if est.Slow > 0 && p.Device != nil {
		fmt.Fprintf(stderr, "mltop: slow kernels in %d of %s (%s or more per kernel run); the slowest, %s: %s; time_limit bounds only the sampling; ctrl-C stops the sweep (with --csv FILE, --resume FILE goes on)\n",
			est.Slow, profiler.Plural(p.Specs, "spec", "specs"), units.Span(run.SlowRun), est.Slowest, kernelRunNote(*p.Device, est.Slowest))
	}
	if p.Specs > bigSweep && !yes && stdinIsTerminal() {
		return badInput("%d specs is more than %d: add --yes to start it, or narrow the sweep (fewer values, `where:` rules); with --csv FILE an interrupted sweep goes on with --resume FILE", p.Specs, bigSweep)
	}
	return nil
}
