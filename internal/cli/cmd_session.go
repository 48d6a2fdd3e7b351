package cli

import (
	"context"
	"flag"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/ui"
)

// runTUI starts the interactive session on the chosen backend. Without a
// terminal on stdin and stdout it starts nothing and says what runs
// headless instead (exit 2). With --devices it opens one worker per
// device, as a headless --devices sweep does: the session's sweeps run
// across them, single runs on the first.
func runTUI(ctx context.Context, s *session, o *options) error {
	stdout := s.stdout
	if err := checkTUIDevices(o); err != nil {
		return err
	}
	if err := needTerminal(isTerminal(os.Stdin), isTerminal(stdout)); err != nil {
		return err
	}
	var devs []run.Device
	var exec profiler.Executor
	if o.devices != "" {
		early := s.startDevices(ctx, o, o.backend)
		defer early.close()
		<-early.done
		s.stderr.Write(early.log.Bytes())
		if early.err != nil {
			return early.err
		}
		if devs = allStarted(ctx, early.devs, s.stderr); ctx.Err() != nil {
			return nil // ctrl-C while the workers started: no session, as ui.Run ends one
		}
		exec = devs[0].Exec
	} else {
		x, err := s.openExecutor(ctx, o.backend, tuiIsolate(o.isolate))
		if err != nil {
			return err
		}
		defer x.Close()
		exec = x
	}
	var lines []string
	for _, b := range probeBackends() {
		state := "missing"
		if b.available {
			state = "found"
		}
		lines = append(lines, b.name+" "+state)
	}
	base := o.measureOptions(nil)
	// Live reload: every --kernel manifest is watched; a save reloads the
	// family (workers catch up through the version in each request) and
	// reruns the spec in the editor.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var events <-chan ui.Event
	selected := "" // the session starts on the first user kernel
	if len(o.kernels) > 0 {
		var fams []profiler.Family
		var err error
		if events, fams, err = ui.WatchKernels(wctx, o.kernels, 0); err != nil {
			return badInput("--kernel: %v", err)
		}
		if len(fams) > 0 {
			selected = fams[0].Name()
		}
	}
	return ui.Run(ctx, exec, ui.Options{
		Devices:        devs,
		Events:         events,
		Select:         selected,
		NoColor:        o.noColor || os.Getenv("NO_COLOR") != "",
		DefaultOptions: base,
		Backends:       strings.Join(lines, ", "),
		LoadSweep: func(path string) ([]profiler.Spec, profiler.Options, error) {
			sw, err := sweep.LoadWith(path, base, s.sweepOptions())
			if err != nil {
				return nil, base, err
			}
			specs := make([]profiler.Spec, len(sw.Jobs))
			for i, j := range sw.Jobs {
				specs[i] = j.Spec
			}
			return specs, sw.Jobs[0].Options, nil
		},
		SweepSize: sweepSize(ctx, base, s.sweepOptions()),
		WriteCSV:  sink.WriteCSVFile,
	})
}

// checkTUIDevices refuses a --devices the session cannot use, before the
// terminal is taken: ordinals the backend does not have, or --isolate off
// (each device runs in its own worker).
func checkTUIDevices(o *options) error {
	if o.devices == "" {
		return nil
	}
	if o.isolate == "off" {
		return badInput("--devices runs one worker subprocess per device: drop --isolate off")
	}
	_, err := resolveDevices(o.devices, resolveBackend(o.backend), countDevices, os.Getenv(repeatDevicesEnv) == "1")
	return err
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// needTerminal explains why the interactive session cannot start when
// stdin or stdout is not a terminal, and what to run instead.
func needTerminal(stdinTTY, stdoutTTY bool) error {
	var not []string
	if !stdinTTY {
		not = append(not, "stdin")
	}
	if !stdoutTTY {
		not = append(not, "stdout")
	}
	if len(not) == 0 {
		return nil
	}
	verb := "is"
	if len(not) > 1 {
		verb = "are"
	}
	return badInput(`the interactive session needs a terminal, and %s %s not one here.
Without a terminal, run mltop headless:
  mltop --config FILE [--csv out.csv]   a YAML sweep (configs/quick.yaml runs in seconds on the CPU)
  mltop run KERNEL [--set K=V,...]      one spec from the command line
  mltop list                            backends found and kernel families`, strings.Join(not, " and "), verb)
}

// tuiIsolate runs the session's specs in a worker by default even on the
// CPU: a Go program out of memory dies with a fatal error that no recover
// and no deferred terminal restore can catch, so it must not be the
// process that holds the terminal in raw mode. --isolate off still runs in
// process.
func tuiIsolate(flag string) string {
	if flag == "auto" {
		return "on"
	}
	return flag
}

const (
	sessionSummary = "the interactive session, or a headless sweep with --config"
	sessionHelp    = `  mltop [flags]                         interactive session (TUI)
  mltop --config sweep.yaml [flags]     headless sweep: progress on stderr, table on stdout
`
)

// sessionArgs are the flags of mltop itself: the shared options, --config
// and the sweep-only flags.
type sessionArgs struct {
	o      options
	config string
}

func (a *sessionArgs) declare(fs *flag.FlagSet) {
	a.o.register(fs)
	fs.StringVar(&a.config, "config", "", "")
	registerSweepFlags(fs, &a.o)
}

// runSession is `mltop [--config file]`.
func runSession(ctx context.Context, s *session, a *sessionArgs, pos []string) error {
	o, config, stdout, stderr := a.o, &a.config, s.stdout, s.stderr
	if len(pos) > 0 {
		if _, err := profiler.Lookup(pos[0]); err == nil {
			return badInput("unexpected argument %q: use `mltop run %s` to run one kernel, or --config FILE for a sweep", pos[0], pos[0])
		}
		return badInput("unexpected argument %q: commands are %s; see mltop --help", pos[0], subcommandList(" and "))
	}
	o.set = s.given
	o.partialKernels = *config == "" // the interactive session
	if err := o.validate(s); err != nil {
		return err
	}
	if *config == "" {
		if o.shard != "" || o.claims != "" {
			return badInput("--shard and --claims are for sweeps: add --config FILE")
		}
		if o.csv != "" || o.json || o.bench {
			return badInput("--csv, --resume, --json and --bench need --config FILE (or `mltop run`); in the interactive session press e to export")
		}
		return runTUI(ctx, s, &o)
	}
	return runSweep(ctx, s, *config, &o, stdout, stderr)
}

// sweepSize is the session's ui.Options.SweepSize: the specs of a sweep
// file, counted (or estimated, for a huge one) without holding them, so
// that `L` asks before a large sweep and refuses one the session cannot
// hold.
func sweepSize(ctx context.Context, base profiler.Options, so sweep.Options) func(path string) (int, error) {
	return func(path string) (int, error) {
		st, err := sweep.LoadStream(path, base, so)
		if err != nil {
			return 0, err
		}
		p, err := run.PlanSweep(ctx, run.SweepConfig{Source: st}, nil, nil)
		return p.Specs, err
	}
}
