package cli

import (
	"context"
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/units"
)

const (
	runSummary  = "run one spec from the command line"
	runHelpText = `  mltop run KERNEL [--set K=V,...] [--dtype D] [flags]
                                        one spec from the command line; unset knobs and dims
                                        take the family's defaults; flags are set as causal=1;
                                        KERNEL may be a user kernel's ./dir/kernel.yaml
`
)

// runRun is `mltop run KERNEL --set K=V,... --dtype D`.
func runRun(ctx context.Context, s *session, a *specArgs, pos []string) error {
	stdout, stderr := s.stdout, s.stderr
	kernel, err := a.target(s, pos, "run", "one kernel name", "mltop run attn_fwd --set BQ=32,D=64")
	if err != nil {
		return err
	}
	o := &a.o
	if o.resume != "" {
		return badInput("--resume is for sweeps (--config); use --csv with run")
	}
	if kernel, err = s.resolveKernelArg(kernel); err != nil {
		return err
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
	exec, err := s.openExecutor(ctx, o.backend, o.isolate)
	if err != nil {
		return err
	}
	defer exec.Close()
	warnNoWatchdog(stderr, exec, o.measureOptions(nil).Timeout, true, "")
	if msg := runNotice(exec.Device(), profiler.Job{Spec: spec, Options: o.measureOptions(nil)}); msg != "" {
		fmt.Fprintln(stderr, "mltop:", msg)
	}
	if o.measureOptions(nil).Race > 0 {
		fmt.Fprintln(stderr, "mltop: --race races the specs of a sweep's shape against each other: one spec has nothing to race against and is measured to the --noise target")
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
	invalid := fmt.Sprintf("invalid spec: %s", res.Reason())
	if !o.json && !o.bench {
		shown := res
		if res.Status == profiler.StatusInvalid {
			// The reason once, on stderr, and before the block (which
			// still shows the plan's budget), so it is read first.
			fmt.Fprintln(stderr, "mltop:", invalid)
			shown.Error = ""
			invalid = ""
		}
		fmt.Fprint(stdout, sink.FormatResult(shown))
	}
	switch {
	case res.Status == profiler.StatusOK, res.Status == profiler.StatusUnchecked:
		return nil
	case res.Status == profiler.StatusInvalid:
		return &exitError{code: exitBadInput, msg: invalid}
	case res.Status == profiler.StatusCancelled:
		return &exitError{code: exitFailed, msg: res.Error + ": nothing was measured"}
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

// runNotice is what `mltop run` says before it runs: runEstimate, but
// nothing for a spec the device refuses (memory, limits): the run refuses
// it at once, and an estimate of a run that will not happen misleads.
func runNotice(dev profiler.DeviceInfo, j profiler.Job) string {
	if _, ok := run.Runnable(j, dev, nil); !ok {
		return ""
	}
	return runEstimate(dev, j.Spec)
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
		units.Span(d), dev.Backend, units.SI(plan.FLOPs), units.SI(plan.Bytes), run.MinRuns)
}
