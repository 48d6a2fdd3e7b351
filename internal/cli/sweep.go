package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
)

// resumeSameSettings refuses a --resume whose file timed the sweep's specs
// in another cache mode or with another --settle: the specs in it would be
// skipped, and the file would end up with rows of two settings while the
// user believes it holds one.
func resumeSameSettings(path string, done map[string]sink.DoneRow, jobs []profiler.Job) error {
	n, first := 0, ""
	for _, j := range jobs {
		had, ok := done[j.Spec.Key()]
		if !ok || had.Cache == "" { // not in the file, or not measured there
			continue
		}
		why := ""
		if want := profiler.EffectiveCache(j.Options.Cache, j.Options.Hot); had.Cache != want {
			why = fmt.Sprintf("cache %s, this sweep times it with cache %s", had.Cache, want)
		} else if had.Settle != j.Options.Settle {
			why = fmt.Sprintf("--settle %g, this sweep times it with --settle %g", had.Settle, j.Options.Settle)
		}
		if why == "" {
			continue
		}
		if n == 0 {
			first = fmt.Sprintf("%s was timed with %s", j.Spec, why)
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return badInput("--resume %s: %d rows of this sweep were timed with other settings (%s): resume with the settings that wrote the file (--cache and --settle, or cache: and settle: in the sweep file), or write a new --csv", path, n, first)
}

func runSweep(ctx context.Context, s *session, path string, o *options, stdout, stderr io.Writer) error {
	sw, err := sweep.LoadWith(path, profiler.DefaultOptions(), s.sweepOptions())
	if err != nil {
		return err
	}
	for i := range sw.Jobs {
		opt := o.measureOptions(&sw.Jobs[i].Options)
		sw.Jobs[i].Options = opt
	}
	backend := o.backend
	if !o.set["backend"] && sw.Backend != "" {
		backend = sw.Backend
	}
	if sw.Search != nil { // a search: block picks which specs to measure (search_sweep.go)
		return s.runSweepSearch(ctx, o, backend, sw)
	}
	specs := make([]profiler.Spec, len(sw.Jobs))
	for i, j := range sw.Jobs {
		specs[i] = j.Spec
	}
	cols := sink.ColumnsFor(specs) // from the whole sweep: every shard writes the same header
	if o.shard != "" {
		if sw.Jobs, err = shardJobs(o.shard, sw.Jobs, stderr); err != nil {
			return err
		}
	}
	// Check the output before anything runs: bad paths are bad input.
	skip := map[string]bool{}
	if o.resume != "" {
		done, err := sink.ReadDoneRows(o.resume, cols)
		if err != nil {
			return err
		}
		if err := resumeSameSettings(o.resume, done, sw.Jobs); err != nil {
			return err
		}
		for k := range done {
			skip[k] = true
		}
	}
	// Every input is checked before the announcement: --devices against
	// the backend, the CSV path, then the backend itself.
	if o.devices != "" {
		if _, err := resolveDevices(o.devices, resolveBackend(backend), countDevices, os.Getenv(repeatDevicesEnv) == "1"); err != nil {
			return err
		}
	}
	if o.csv != "" {
		if err := sink.CheckCSVPath(o.csv, o.resume != ""); err != nil {
			return err
		}
	}
	// openCSV comes after the announcement (a refused big sweep creates no file).
	var csvSink profiler.Sink
	openOut := func() error {
		c, err := openCSV(o, cols)
		if err != nil {
			return err
		}
		csvSink = c
		return nil
	}
	defer func() {
		if csvSink != nil {
			csvSink.Close()
		}
	}()
	todo := 0
	for _, j := range sw.Jobs {
		if !skip[j.Spec.Key()] {
			todo++
		}
	}
	var phases *phaseSink
	if o.phases {
		phases = &phaseSink{w: stderr}
	}
	// sinksFor: the table (above the bar), the CSV, the phase summary.
	sinksFor := func(bar *progress) []profiler.Sink {
		sinks := []profiler.Sink{stdoutSink(o, bar, specs)}
		if csvSink != nil {
			sinks = append(sinks, csvSink)
		}
		if phases != nil {
			sinks = append(sinks, phases)
		}
		return sinks
	}
	var sum run.Summary
	if o.devices != "" {
		if err := announce(sw.Jobs, skip, path, o.yes, nil, stderr); err != nil {
			return err
		}
		if err := openOut(); err != nil {
			return err
		}
		sum, err = s.sweepOnDevices(ctx, o, backend, sw.Jobs, skip, path, stdout, stderr, todo, sinksFor)
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
	} else {
		exec, oerr := s.openExecutor(backend, o.isolate)
		if oerr != nil {
			return oerr
		}
		defer exec.Close()
		dev := exec.Device()
		if err := announce(sw.Jobs, skip, path, o.yes, &dev, stderr); err != nil {
			return err
		}
		if err := openOut(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "mltop: %s on %s (%s), %s from %s\n", dev.Backend, dev.Name, dev.Timer, profiler.Plural(len(sw.Jobs), "spec", "specs"), path)
		bar := newProgress(stdout, stderr, o.quiet, todo)
		defer bar.finish()
		sum, err = run.Jobs(ctx, exec, sw.Jobs, skip, sinksFor(bar), bar.hooks())
		bar.finish()
	}
	if phases != nil {
		phases.Close()
	}
	fmt.Fprintln(stderr, "mltop:", sum.String())
	if note := sum.ClockNote(); note != "" && !slices.ContainsFunc(sw.Jobs, func(j profiler.Job) bool { return j.Options.Settle > 0 }) {
		fmt.Fprintln(stderr, "mltop:", note)
	}
	if o.csv != "" {
		fmt.Fprintf(stderr, "mltop: CSV in %s\n", o.csv)
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

// openCSV opens --csv (nil without it) before anything runs: a bad path
// is bad input, found before the backend starts.
func openCSV(o *options, cols sink.Columns) (profiler.Sink, error) {
	if o.csv == "" {
		return nil, nil
	}
	c, err := sink.OpenCSV(o.csv, cols, o.resume != "")
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
const bigSweep = 2000

// stdinIsTerminal says whether someone could answer; tests replace it.
var stdinIsTerminal = func() bool { return isTerminal(os.Stdin) }

// announce prints how many specs will run and how long measuring takes at
// least and at most, before anything runs. A sweep of more than bigSweep
// specs started from a terminal needs --yes (without a terminal, e.g. in
// CI, it proceeds: the count is in the log).
func announce(jobs []profiler.Job, skip map[string]bool, path string, yes bool, dev *profiler.DeviceInfo, stderr io.Writer) error {
	var todo []profiler.Job
	invalid := 0
	for _, j := range jobs {
		if skip[j.Spec.Key()] {
			continue
		}
		if dev != nil && !runnable(j, *dev) {
			invalid++
			continue
		}
		todo = append(todo, j)
	}
	if len(todo) == 0 && invalid == 0 && len(skip) > 0 {
		// Everything is in the --resume file: no time range of nothing.
		fmt.Fprintf(stderr, "mltop: nothing to run from %s: all its %s are already in the --resume file\n", path, profiler.Plural(len(jobs), "spec", "specs"))
		return nil
	}
	est := run.Estimate(todo, dev)
	bad := ""
	if invalid > 0 {
		bad = fmt.Sprintf(", and %d invalid (the family's rules, the device's limits, or a user kernel on the CPU backend): they become invalid rows at once", invalid)
	}
	each := "warmup + min_time to warmup + time_limit each"
	if slices.ContainsFunc(todo, func(j profiler.Job) bool { return j.Options.Settle > j.Options.Warmup }) {
		each = "settle (or warmup) + min_time to settle + time_limit each"
	}
	if est.Slow > 0 {
		each += fmt.Sprintf(", at least %d kernel runs of the slow specs", run.MinRuns)
	}
	fmt.Fprintf(stderr, "mltop: %s to run from %s (%s)%s; measuring takes %s to %s (%s), plus the builds\n",
		profiler.Plural(len(todo), "spec", "specs"), path, profiler.Plural(est.Builds, "kernel build", "kernel builds"), bad, run.FormatDuration(est.Lo), run.FormatDuration(est.Hi), each)
	if est.Slow > 0 {
		fmt.Fprintf(stderr, "mltop: slow kernels in %d of %s (%s or more per kernel run); the slowest, %s: %s; time_limit bounds only the sampling; ctrl-C stops the sweep (with --csv FILE, --resume FILE goes on)\n",
			est.Slow, profiler.Plural(len(todo), "spec", "specs"), run.FormatDuration(run.SlowRun), est.Slowest, kernelRunNote(*dev, est.Slowest))
	}
	if len(todo) > bigSweep && !yes && stdinIsTerminal() {
		return badInput("%d specs is more than %d: add --yes to start it, or narrow the sweep (fewer values, `where:` rules); with --csv FILE an interrupted sweep goes on with --resume FILE", len(todo), bigSweep)
	}
	return nil
}

// runnable says, cheaply and without the backend, whether j's spec can run
// on dev: the family's rules, its plan, the device's memory, and whether
// the CPU backend would refuse a user kernel.
func runnable(j profiler.Job, dev profiler.DeviceInfo) bool {
	f, full, err := profiler.Resolve(j.Spec, dev)
	if err != nil {
		return false
	}
	plan, err := f.Plan(full, dev)
	if err != nil {
		return false
	}
	if run.CheckFit(plan, dev, full, j.Options.Hot) != nil {
		return false
	}
	if dev.Backend == "cpu" {
		for _, d := range plan.Dispatches {
			if d.Program.Code != "" {
				return false
			}
		}
	}
	return true
}
