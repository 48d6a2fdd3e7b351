package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
)

var errHelp = errors.New("help shown")

// options are the flags shared by the interactive session, sweeps and run.
type options struct {
	backend    string
	csv        string
	resume     string
	json       bool
	bench      bool
	noise      float64
	timeLimit  float64
	minTime    float64
	minSamples int
	maxSamples int
	warmup     float64
	settle     float64
	hot        bool
	cache      string
	phases     bool
	seed       uint64
	maxRows    int
	timeout    float64
	isolate    string
	noColor    bool
	quiet      bool
	devices    string // --devices (sweeps): "" for one device
	shard      string // --shard (sweeps)
	yes        bool
	set        map[string]bool // flags given explicitly on the command line
	kernels    kernelPaths     // --kernel PATH: user manifests
}

func (o *options) register(fs *flag.FlagSet) {
	d := profiler.DefaultOptions()
	fs.StringVar(&o.backend, "backend", "auto", "backend: auto (Metal on macOS, else CUDA where libcuda.so.1 loads, else CPU), metal, cuda or cpu")
	fs.StringVar(&o.csv, "csv", "", "write one CSV row per spec to `file`, flushed as each spec finishes")
	fs.StringVar(&o.resume, "resume", "", "append to CSV `file` and skip specs already in it (implies --csv file)")
	fs.BoolVar(&o.json, "json", false, "print results as JSON lines on stdout instead of the table")
	fs.BoolVar(&o.bench, "bench", false, "print results in Go benchmark format on stdout (for benchstat)")
	fs.Float64Var(&o.noise, "noise", d.Stop.Noise, "stop sampling when the 95% confidence interval of the median is within ± this `fraction` of it")
	fs.Float64Var(&o.timeLimit, "time-limit", d.Stop.MaxTime, "stop sampling a spec after this many `seconds` whatever the noise")
	fs.Float64Var(&o.minTime, "min-time", d.Stop.MinTime, "measure at least this many `seconds` of kernel time")
	fs.IntVar(&o.minSamples, "min-samples", d.Stop.MinSamples, "take at least this many samples")
	fs.IntVar(&o.maxSamples, "max-samples", d.Stop.MaxSamples, "take at most this many samples")
	fs.Float64Var(&o.warmup, "warmup", d.Warmup, "warm up for this many `seconds` (at least one run)")
	fs.Float64Var(&o.settle, "settle", 0, "run each spec this many `seconds` before sampling, every spec in full, so the GPU's boost clock reaches the level the spec sustains (1: on an H100, 99% of the rows repeat within 2% from run to run, for 1 s more per spec; 0: off)")
	fs.BoolVar(&o.hot, "hot", false, "same as --cache hot")
	fs.StringVar(&o.cache, "cache", "cold", "last-level cache before each sample: cold (flushed, holding only clean lines, as ncu --cache-control all), hot (not flushed) or dirty (flushed by writing, full of dirty lines the kernel must write back)")
	fs.BoolVar(&o.phases, "phases", false, "print where each spec's wall time went (plan, compile, inputs, reference, verify, warm-up, measure, …) on stderr")
	fs.Uint64Var(&o.seed, "seed", d.Seed, "seed of the input generator")
	fs.IntVar(&o.maxRows, "max-rows", d.MaxRows, "check at most this many rows against the float64 reference")
	fs.Float64Var(&o.timeout, "timeout", 0, "worker watchdog per spec in `seconds` (0: 2×time-limit + settle + 60)")
	fs.StringVar(&o.isolate, "isolate", "auto", "run specs in a worker subprocess: auto (on for GPU backends and the interactive session), on, off")
	fs.BoolVar(&o.noColor, "no-color", false, "plain output without colour (also NO_COLOR=1)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	fs.Var(&o.kernels, "kernel", "add the user kernel(s) of `PATH` (a kernel.yaml or a folder of them; repeatable)")
	fs.BoolVar(&o.yes, "yes", false, fmt.Sprintf("start a sweep of more than %d specs without asking (in a terminal)", bigSweep))
}

// validate checks flag values.
func (o *options) validate() error {
	if err := loadUserKernels(o.kernels); err != nil {
		return err
	}
	if !slices.Contains(sweep.KnownBackends, o.backend) {
		return badInput("unknown backend %q: use one of %s", o.backend, strings.Join(sweep.KnownBackends, ", "))
	}
	if !slices.Contains([]string{"auto", "on", "off"}, o.isolate) {
		return badInput("--isolate=%q: use auto, on or off", o.isolate)
	}
	// Every float flag: finite first (NaN passes every comparison), then in range.
	for _, f := range []struct {
		name string
		v    float64
		ok   func(float64) bool
		want string
	}{
		{"noise", o.noise, func(v float64) bool { return v > 0 && v < 1 }, "a fraction between 0 and 1 (0.01 is 1%)"},
		{"time-limit", o.timeLimit, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"min-time", o.minTime, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"warmup", o.warmup, func(v float64) bool { return v > 0 }, "a positive number of seconds"},
		{"settle", o.settle, func(v float64) bool { return v >= 0 }, "0 (off) or a positive number of seconds, e.g. 1"},
		{"timeout", o.timeout, func(v float64) bool { return v >= 0 }, "a positive number of seconds (or 0 for the default)"},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || !f.ok(f.v) {
			return badInput("--%s=%g: use %s", f.name, f.v, f.want)
		}
	}
	if _, err := profiler.ParseCacheMode(o.cache); err != nil {
		return badInput("--%s", err)
	}
	if o.hot && o.set["cache"] && o.cache != string(profiler.CacheHot) {
		return badInput("--hot and --cache=%s contradict each other: use --cache alone", o.cache)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"min-samples", o.minSamples}, {"max-samples", o.maxSamples}, {"max-rows", o.maxRows}} {
		if f.v < 1 {
			return badInput("--%s=%d: use a whole number of at least 1", f.name, f.v)
		}
	}
	if o.json && o.bench {
		return badInput("--json and --bench both write to stdout: choose one")
	}
	for _, f := range []struct{ name, path string }{{"csv", o.csv}, {"resume", o.resume}} {
		switch strings.ToLower(filepath.Ext(f.path)) {
		case ".yaml", ".yml":
			return badInput("--%s %s: --%s takes the CSV file to write (e.g. results.csv); the sweep file goes in --config %s", f.name, f.path, f.name, f.path)
		}
	}
	if o.resume != "" {
		if o.csv != "" && o.csv != o.resume {
			return badInput("--resume %s and --csv %s name different files: --resume appends to its file, drop --csv", o.resume, o.csv)
		}
		o.csv = o.resume
	}
	return nil
}

// measureOptions makes profiler.Options from the flags. With base, only the
// flags given explicitly override base (a sweep file's settings).
func (o *options) measureOptions(base *profiler.Options) profiler.Options {
	var m profiler.Options
	if base != nil {
		m = *base
	} else {
		m = profiler.DefaultOptions()
	}
	use := func(name string) bool { return base == nil || o.set[name] }
	if use("noise") {
		m.Stop.Noise = o.noise
	}
	if use("time-limit") {
		m.Stop.MaxTime = o.timeLimit
	}
	if use("min-time") {
		m.Stop.MinTime = o.minTime
	}
	if use("min-samples") {
		m.Stop.MinSamples = o.minSamples
	}
	if use("max-samples") {
		m.Stop.MaxSamples = o.maxSamples
	}
	if use("warmup") {
		m.Warmup = o.warmup
	}
	if use("settle") {
		m.Settle = o.settle
	}
	if use("hot") {
		m.Hot = o.hot
		if o.hot {
			m.Cache = profiler.CacheHot
		}
	}
	if use("cache") && (o.set["cache"] || !o.hot) {
		m.Cache, _ = profiler.ParseCacheMode(o.cache)
		// --cache wins over the file's hot: (the memory check counts the
		// flush buffer by Hot).
		m.Hot = m.Cache == profiler.CacheHot
	}
	if use("seed") {
		m.Seed = o.seed
	}
	if use("max-rows") {
		m.MaxRows = o.maxRows
	}
	if use("timeout") && o.timeout > 0 {
		m.Timeout = time.Duration(o.timeout * float64(time.Second))
	}
	return m
}

func newFlagSet(name string, stderr io.Writer, usageFn func(io.Writer)) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Errors become one line (flagError); only -h prints the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if flagProbe.on {
		flagProbe.fs = fs
	} else {
		helpFor.Store(fs, func() { usageFn(stderr) })
	}
	return fs
}

// helpFor holds what -h prints for each flag set of newFlagSet.
var helpFor sync.Map

// parseInterleaved parses flags that may come before and after positional
// arguments ("run attn_fwd --set BQ=32" and "run --set BQ=32 attn_fwd").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if help, ok := helpFor.Load(fs); ok {
					help.(func())()
				}
				return nil, errHelp
			}
			return nil, flagError(strings.TrimSpace(strings.TrimPrefix(fs.Name(), "mltop")), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

func usage(w io.Writer) {
	fmt.Fprint(w, `mltop — top for GPU compute kernels

Usage:
  mltop [flags]                         interactive session (TUI)
  mltop --config sweep.yaml [flags]     headless sweep: progress on stderr, table on stdout
  mltop run KERNEL [--set K=V,...] [--dtype D] [flags]
                                        one spec from the command line; unset knobs and dims
                                        take the family's defaults; flags are set as causal=1;
                                        KERNEL may be a user kernel's ./dir/kernel.yaml
  mltop watch ./dir [--set K=V,...] [--dtype D] [--count N]
                                        run a user kernel, then again on each save of its
                                        manifest, sources, includes or ref.py: one line per run
                                        with the change and the time from save to result
  mltop new NAME --from FILE.cu --entry FN [-o DIR]
                                        write a starting kernel.yaml for your own kernel
  mltop list                            backends found (and why a missing one is missing),
                                        kernel families with their knobs, dims and dtypes
  mltop report FILE.csv                 attention-backward tables (fused/unfused speed ratio,
                                        peak memory) from a sweep's CSV, in seed 001's layout
  mltop merge A.csv B.csv … -o ALL.csv [--config sweep.yaml]
                                        join the CSVs of a sweep's shards (--shard): checks the
                                        columns, drops duplicate specs, lists specs with no row
  mltop calibrate [--backend B]         measure copy bandwidth and FLOP/s per dtype with built-in
                                        micro-kernels; cached per device, Results then give % of
                                        both the datasheet and the measured peak
  mltop selftest [--backend B]          checks the device, its timer and two kernels against
                                        the reference; prints a report for bug reports

Flags go before or after the subcommand; each subcommand takes only the flags
that apply to it (README "Flags"); a second ctrl-C kills at once.

Exit codes: 0 all specs ran and verified (or are unchecked: check: none); 1 a spec
failed (mismatch, compile_error, crashed, timeout, error, cancelled); 2 bad input
(flags, YAML, an impossible spec), or a sweep whose only failures are invalid rows.

Flags:
`)
	fs := flag.NewFlagSet("mltop", flag.ContinueOnError)
	var o options
	o.register(fs)
	fs.String("config", "", "run the sweep in YAML `file` headless")
	fs.String("set", "", "(run) knob, dim or flag values: `K=V,K=V` (repeatable)")
	fs.String("dtype", "", "(run) f32, f16 or bf16 (default: the family's first)")
	registerSweepFlags(fs, &options{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// cmdMain is `mltop [--config file]`.
func cmdMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mltop", stderr, usage)
	var o options
	o.register(fs)
	config := fs.String("config", "", "")
	registerSweepFlags(fs, &o)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		if _, err := profiler.Lookup(pos[0]); err == nil {
			return badInput("unexpected argument %q: use `mltop run %s` to run one kernel, or --config FILE for a sweep", pos[0], pos[0])
		}
		return badInput("unexpected argument %q: commands are run, watch, list, new, report, merge, calibrate and selftest; see mltop --help", pos[0])
	}
	o.set = setFlags(fs)
	if err := o.validate(); err != nil {
		return err
	}
	if *config == "" {
		if o.devices != "" || o.shard != "" {
			return badInput("--devices and --shard are for sweeps: add --config FILE")
		}
		if o.csv != "" || o.json || o.bench {
			return badInput("--csv, --resume, --json and --bench need --config FILE (or `mltop run`); in the interactive session press e to export")
		}
		return runTUI(ctx, &o, stdout, stderr)
	}
	return runSweep(ctx, *config, &o, stdout, stderr)
}

// specArgs are the arguments of the commands that run one spec (run and
// watch): the shared flags, --set (repeatable), --dtype and one target.
type specArgs struct {
	o     options
	sets  []string
	dtype string
}

func (a *specArgs) register(fs *flag.FlagSet) {
	a.o.register(fs)
	fs.Func("set", "", func(s string) error { a.sets = append(a.sets, s); return nil })
	fs.StringVar(&a.dtype, "dtype", "", "")
}

// parse reads args into a and returns the one target: cmd takes what,
// and example shows a right call.
func (a *specArgs) parse(fs *flag.FlagSet, args []string, cmd, what, example string) (string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		hint := straySettings(pos, a.sets)
		if hint == "" {
			hint = "e.g. " + example
		}
		return "", badInput("%s takes %s, got %d arguments %q: %s", cmd, what, len(pos), pos, hint)
	}
	a.o.set = setFlags(fs)
	return pos[0], a.o.validate()
}

// straySettings says how to give the NAME=VALUE words among the
// arguments after the first: settings that lost their --set (often after a
// space: --set rows=64 cols=128). "" when there are none.
func straySettings(pos, sets []string) string {
	var kv []string
	for _, p := range pos[min(1, len(pos)):] {
		if name, _, ok := strings.Cut(p, "="); ok && name != "" && !strings.ContainsAny(name, "/\\.") {
			kv = append(kv, p)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is a setting: give settings to --set, joined by commas without spaces (--set %s)", kv[0], strings.Join(append(slices.Clone(sets), kv...), ","))
}

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

func runSweep(ctx context.Context, path string, o *options, stdout, stderr io.Writer) error {
	sw, err := sweep.LoadWith(path, profiler.DefaultOptions(), sweepOptions())
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
		sum, err = sweepOnDevices(ctx, o, backend, sw.Jobs, skip, path, stdout, stderr, todo, sinksFor)
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
	} else {
		exec, oerr := openExecutor(backend, o.isolate)
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

// cmdRun is `mltop run KERNEL --set K=V,... --dtype D`.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mltop run", stderr, usage)
	var a specArgs
	a.register(fs)
	kernel, err := a.parse(fs, args, "run", "one kernel name", "mltop run attn_fwd --set BQ=32,D=64")
	if err != nil {
		return err
	}
	o := &a.o
	if o.resume != "" {
		return badInput("--resume is for sweeps (--config); use --csv with run")
	}
	spec, err := parseSpec(kernel, a.dtype, a.sets)
	if err != nil {
		return err
	}
	cols := sink.ColumnsFor([]profiler.Spec{spec})
	var sinks []profiler.Sink
	if o.json {
		sinks = append(sinks, sink.NewJSON(stdout))
	} else if o.bench {
		sinks = append(sinks, sink.NewBench(stdout))
	}
	if o.csv != "" {
		c, err := sink.OpenCSV(o.csv, cols, false)
		if err != nil {
			return err
		}
		defer c.Close()
		sinks = append(sinks, c)
	}
	exec, err := openExecutor(o.backend, o.isolate)
	if err != nil {
		return err
	}
	defer exec.Close()
	if msg := runEstimate(exec.Device(), spec); msg != "" {
		fmt.Fprintln(stderr, "mltop:", msg)
	}
	bar := newProgress(stdout, stderr, o.quiet, 1)
	defer bar.finish()
	h := bar.hooks()
	if h.Start != nil {
		h.Start(0, 1, spec)
	}
	res := exec.Run(ctx, spec, o.measureOptions(nil), func(p profiler.Progress) {
		if h.Progress != nil {
			h.Progress(0, 1, spec, p)
		}
	})
	bar.finish()
	for _, s := range sinks {
		if err := s.Write(res); err != nil {
			return err
		}
	}
	if !o.json && !o.bench {
		fmt.Fprint(stdout, sink.FormatResult(res))
	}
	switch {
	case res.Status == profiler.StatusOK, res.Status == profiler.StatusUnchecked:
		return nil
	case res.Status == profiler.StatusInvalid:
		return &exitError{code: exitBadInput, msg: fmt.Sprintf("invalid spec: %s", res.Reason())}
	case res.Status == profiler.StatusCancelled:
		return &exitError{code: exitFailed, msg: "cancelled (ctrl-C or SIGTERM): nothing was measured"}
	}
	return &exitError{code: exitFailed}
}

// runEstimate says how long one run of spec takes when that is long (see
// kernelRunNote); "" when it is short or cannot be planned (the run
// reports why).
func runEstimate(dev profiler.DeviceInfo, spec profiler.Spec) string {
	note := kernelRunNote(dev, spec)
	if note == "" {
		return ""
	}
	return note + "; --time-limit bounds only the sampling; ctrl-C stops it"
}

// kernelRunNote is how long one kernel run of spec takes on dev and what
// that means, when it is run.SlowRun or more: `mltop run` and a sweep's
// banner both say it. "" when the run is short or cannot be planned.
func kernelRunNote(dev profiler.DeviceInfo, spec profiler.Spec) string {
	d, plan, err := run.KernelRunTime(dev, spec)
	if err != nil || d < run.SlowRun {
		return ""
	}
	return fmt.Sprintf("about %s per kernel run on the %s backend (%sFLOP, %sB); at least %d runs (verify, warm-up, one sample) plus the reference check",
		run.FormatDuration(d), dev.Backend, siPrefix(plan.FLOPs), siPrefix(plan.Bytes), run.MinRuns)
}

// siPrefix writes x with a decimal prefix: 2.2 T, 2.1 G, 512 .
func siPrefix(x float64) string {
	for _, p := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= p.v {
			return fmt.Sprintf("%.3g %s", x/p.v, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", x)
}

// parseSpec builds a Spec from --set pairs, checking every name and value
// against the family's schema.
func parseSpec(kernel, dtype string, sets []string) (profiler.Spec, error) {
	kernel, err := resolveKernelArg(kernel)
	if err != nil {
		return profiler.Spec{}, err
	}
	f, err := profiler.Lookup(kernel)
	if err != nil {
		return profiler.Spec{}, badInput("%v", err)
	}
	sc := f.Schema()
	spec := profiler.Spec{Kernel: kernel}
	if dtype != "" {
		dt, err := profiler.ParseDType(dtype)
		if err != nil {
			return spec, badInput("--dtype: %v", err)
		}
		spec.DType = dt
	}
	given := map[string]string{}
	for _, group := range sets {
		for _, kv := range strings.Split(group, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return spec, badInput("--set %q: write NAME=VALUE, e.g. BQ=32", kv)
			}
			k = strings.TrimSpace(k)
			if prev, dup := given[k]; dup {
				return spec, badInput("--set gives %s twice (%s=%s and %s=%s): give each name once; to try several values write a sweep file (--config)", k, k, prev, k, strings.TrimSpace(v))
			}
			given[k] = strings.TrimSpace(v)
			n, err := parseValue(strings.TrimSpace(v), isFlag(sc, k))
			if err != nil {
				return spec, badInput("--set %s=%s: %v", k, v, err)
			}
			if err := spec.Set(sc, k, n); err != nil {
				return spec, badInput("--set: %v", err)
			}
		}
	}
	spec = spec.WithDefaults(sc)
	if err := spec.CheckSchema(sc); err != nil {
		return spec, badInput("%v", err)
	}
	return spec, nil
}

// isFlag says whether name is one of the schema's boolean flags.
func isFlag(sc profiler.Schema, name string) bool {
	for _, f := range sc.Flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

// parseValue reads a flag's value as profiler.ParseBool (and so a sweep
// file) does — causal=maybe and causal=2 are refused — or else an integer.
func parseValue(v string, flag bool) (int, error) {
	if flag {
		b, err := profiler.ParseBool(v)
		if err != nil {
			return 0, err
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	return n, nil
}

// cmdWorker is the hidden `mltop worker --backend B`: JSON lines on
// stdin/stdout. Everything else the process prints goes to stderr.
func cmdWorker(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	backend := fs.String("backend", "cpu", "")
	if err := fs.Parse(args); err != nil {
		return badInput("worker: %v", err)
	}
	protocol := os.Stdout
	os.Stdout = os.Stderr // stray prints must not corrupt the protocol
	// A request for a user kernel the parent reloaded (another version)
	// registers the manifests again first: the worker runs the new kernel.
	err := run.ServeWorkerReload(os.Stdin, protocol, func() (profiler.Executor, error) {
		return openRunner(*backend, os.Stderr, true)
	}, user.RegisterFromEnv)
	if err != nil {
		return &exitError{code: exitFailed, msg: "worker: " + err.Error()}
	}
	return nil
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
