package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/tune"
	"github.com/mltop/mltop/profiler/units"
)

// tuneDate is the date written into tables and headers; tests replace it.
var tuneDate = time.Now

// runSearches runs each search on one executor, every measurement a row of
// --csv (with its search_step), prints each shape's winner and comparison,
// then the tuning table, and writes the table and headers asked for.
// Shared by `mltop tune` and sweep files with a search: block (sweepFile:
// the file's path, "" for tune).
func (s *session) runSearches(ctx context.Context, o *options, backend string, cfgs []tune.Config, out tuneOutputs, sweepFile string) error {
	stdout, stderr := s.stdout, s.stderr
	if err := out.check(); err != nil {
		return err
	}
	specs := make([]profiler.Spec, len(cfgs))
	raced := false
	for i, c := range cfgs {
		specs[i] = c.Base
		raced = raced || c.Options.Race > 0
	}
	if raced {
		fmt.Fprintln(stderr, "mltop: --race (race:) does not apply to a search: a search compares its candidates measured in full; it races only the specs of a sweep without a search: block")
	}
	cols := sink.ColumnsFor(specs)
	cols.Search = true
	var done []profiler.Result
	if o.resume != "" {
		if _, err := os.Stat(o.resume); err == nil {
			if done, err = sink.ReadCSV(o.resume); err != nil {
				return badInput("--resume: %v", err)
			}
		}
	}
	if o.csv != "" {
		if err := sink.CheckCSVPath(o.csv, o.resume != ""); err != nil {
			return err
		}
	}
	if o.resume != "" {
		noteNewResumeFile(stderr, o.resume, "search", false)
	}
	exec, err := s.openExecutor(ctx, backend, o.isolate)
	if err != nil {
		return err
	}
	defer exec.Close()
	dev := exec.Device()
	// As a sweep's: a row another backend or device could not run is
	// measured again here, and replaced in the file.
	on := sink.ResumeOn{Backend: dev.Backend, Device: dev.Name}
	if o.resume != "" {
		again := newResumeAgain(on)
		done = slices.DeleteFunc(done, func(r profiler.Result) bool { return again.take(sink.DoneRowOf(r)) })
		again.note(stderr, o.resume, false)
	}
	sinks := []profiler.Sink{&stepLog{w: stderr, quiet: o.quiet}}
	c, err := openCSV(o, cols, on)
	if err != nil {
		return err
	}
	if c != nil {
		defer c.Close()
		sinks = append(sinks, c)
	}
	fmt.Fprintf(stderr, "mltop: %s on %s (%s), %s to tune\n", dev.Backend, dev.Name, dev.Timer, profiler.Plural(len(cfgs), "shape", "shapes"))
	if dev.Backend == "cpu" {
		fmt.Fprintln(stderr, "mltop: the candidates' times are "+cpuTimingCaveat+": the winner checks the tool, not a kernel (docs/measuring.md)")
	}
	warnNoWatchdog(stderr, exec, searchTimeout(cfgs), o.set["timeout"], sweepFile)
	tables := map[string]*tune.Table{}
	var order []string
	for _, cfg := range cfgs {
		cfg.Resume, cfg.Log = done, stderr
		sinks[0].(*stepLog).knobs = cfg.Knobs
		res, err := tune.Search(ctx, exec, cfg, sinks)
		if err != nil {
			return searchError(err, o)
		}
		reportSearch(stdout, cfg, res)
		t := tables[cfg.Base.Kernel]
		if t == nil {
			if t, err = tune.NewTable(cfg.Base.Kernel, cfg.Objective, dev, mltopVersion(), tuneDate()); err != nil {
				return err
			}
			tables[cfg.Base.Kernel] = t
			order = append(order, cfg.Base.Kernel)
		}
		t.Add(res)
	}
	for _, k := range order {
		fmt.Fprintf(stdout, "\ntuning table of %s (%s, on %s):\n", k, cfgs[0].Objective, dev.Name)
		printTable(stdout, tables[k])
	}
	if o.csv != "" {
		fmt.Fprintf(stderr, "mltop: CSV in %s (every measurement, with its search_step)\n", o.csv)
	}
	return out.write(tables, order, stderr)
}

// searchTimeout is the watchdog timeout the searches ask for: the first
// shape's that has one.
func searchTimeout(cfgs []tune.Config) time.Duration {
	for _, c := range cfgs {
		if t := c.Options.Timeout; t > 0 {
			return t
		}
	}
	return 0
}

// searchError maps a search's error to an exit: bad input (nothing left to
// search, nothing valid measured) is 2; an interruption says how to go on.
func searchError(err error, o *options) error {
	kept := ""
	if o.csv != "" {
		kept = fmt.Sprintf("; the rows measured are in %s", o.csv)
	}
	switch {
	case errors.Is(err, search.ErrEmpty), errors.Is(err, tune.ErrNoValid):
		return badInput("%v%s", err, kept)
	case errors.Is(err, context.Canceled):
		msg := "interrupted: nothing measured was kept; add --csv FILE to keep every row, and --resume FILE after a ctrl-C to go on from them"
		if o.csv != "" {
			msg = fmt.Sprintf("interrupted%s: run the same command with --resume %s to go on without measuring them again", kept, o.csv)
		}
		return &exitError{code: exitFailed, msg: msg}
	}
	return &exitError{code: exitFailed, msg: err.Error() + kept}
}

// reportSearch prints one shape's outcome.
func reportSearch(w io.Writer, cfg tune.Config, res *tune.Outcome) {
	fmt.Fprintf(w, "%s\n", cfg.Label())
	resumed := ""
	if res.Resumed > 0 {
		resumed = fmt.Sprintf(" (+%d from --resume)", res.Resumed)
	}
	fmt.Fprintf(w, "  %d measured%s of %d configurations (%d refused before measuring); stopped: %s\n", res.Measured, resumed, res.Space, res.Excluded, res.Stop)
	names := make([]string, len(cfg.Knobs))
	for i, k := range cfg.Knobs {
		names[i] = k.Name
	}
	for i, f := range res.Finalists {
		v, _ := cfg.Objective.Value(f)
		fmt.Fprintf(w, "  #%d %s: %.4g %s", i+1, tune.KnobText(f.Spec.Knobs, names), v, cfg.Objective.Unit())
		if f.Stats.CIHi > 0 {
			fmt.Fprintf(w, " (median %s, 95%% CI %s–%s)", units.Nanos4(f.Stats.Median), units.Nanos4(f.Stats.CILo), units.Nanos4(f.Stats.CIHi))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %s\n", res.Compare.Text)
}

// write writes the table file and the headers.
func (t tuneOutputs) write(tables map[string]*tune.Table, order []string, stderr io.Writer) error {
	if len(order) > 1 && strings.HasSuffix(strings.ToLower(t.table), ".csv") {
		return badInput("--table %s: %d kernels were tuned and a CSV table holds one: name a .json file", t.table, len(order))
	}
	writeFile := func(path string, fill func(io.Writer) error) error {
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return &exitError{code: exitFailed, msg: err.Error()}
		}
		ferr := fill(f)
		if cerr := f.Close(); ferr == nil {
			ferr = cerr
		}
		if ferr != nil {
			return &exitError{code: exitFailed, msg: fmt.Sprintf("writing %s: %v", path, ferr)}
		}
		fmt.Fprintf(stderr, "mltop: wrote %s\n", path)
		return nil
	}
	each := func(write func(*tune.Table, io.Writer) error) func(io.Writer) error {
		return func(w io.Writer) error {
			for _, k := range order {
				if err := write(tables[k], w); err != nil {
					return err
				}
			}
			return nil
		}
	}
	tableWriter := (*tune.Table).WriteCSV
	if strings.HasSuffix(strings.ToLower(t.table), ".json") {
		tableWriter = (*tune.Table).WriteJSON
	}
	if err := writeFile(t.table, each(tableWriter)); err != nil {
		return err
	}
	if err := writeFile(t.header, each((*tune.Table).WriteC)); err != nil {
		return err
	}
	return writeFile(t.metalHeader, each((*tune.Table).WriteMetal))
}

// stepLog prints one line per measurement on stderr (not with --quiet).
type stepLog struct {
	w     io.Writer
	quiet bool
	knobs []search.Knob
}

func (l *stepLog) Write(r profiler.Result) error {
	if l.quiet || r.Search == nil {
		return nil
	}
	names := make([]string, len(l.knobs))
	for i, k := range l.knobs {
		names[i] = k.Name
	}
	step := sink.EncodeSearchMark(r.Search)
	fig := string(r.Status)
	if r.Stats.N > 0 {
		fig = fmt.Sprintf("%s %s", units.Nanos4(r.Stats.Median), r.Status)
	}
	_, err := fmt.Fprintf(l.w, "mltop: [%s] %s: %s\n", step, tune.KnobText(r.Spec.Knobs, names), fig)
	return err
}

func (l *stepLog) Close() error { return nil }
