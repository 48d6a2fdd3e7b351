package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/watch"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/compare"
	"github.com/mltop/mltop/profiler/units"
)

const (
	watchSummary = "rerun a user kernel on each save of its files"
	watchHelp    = `  mltop watch ./dir [--set K=V,...] [--dtype D] [--count N]
                                        run a user kernel, then again on each save of its
                                        manifest, sources, includes or ref.py: one line per run
                                        with the change and the time from save to result
`
)

// watchArgs are run's flags and --count.
type watchArgs struct {
	specArgs
	count int
}

func (a *watchArgs) declare(fs *flag.FlagSet) {
	a.specArgs.declare(fs)
	fs.IntVar(&a.count, "count", 0, "")
}

// runWatch is `mltop watch KERNEL [--set K=V,...] [--dtype D] [--count N]`:
// the live reload of the interactive session without the TUI, for people
// who live in their editor. It runs the spec once, then again each time
// the manifest, a source, an include or ref.py is saved, and prints one
// line per run: the outcome, the change against the previous run, and the
// time from the save (the newest modification time of the changed files)
// to the result.
func runWatch(ctx context.Context, s *session, wa *watchArgs, pos []string) error {
	stdout, stderr, a, count := s.stdout, s.stderr, &wa.specArgs, &wa.count
	target, err := a.target(s, pos, "watch", "one user kernel (its kernel.yaml or folder)", "mltop watch ./examples/softmax --set WG=256")
	if err != nil {
		return err
	}
	o, sets, dtype := &a.o, a.sets, a.dtype
	if *count < 0 {
		return badInput("--count=%d: give how many reruns to wait for (0: until ctrl-c)", *count)
	}
	if o.csv != "" || o.json || o.bench {
		return badInput("watch prints one line per run: --csv, --json and --bench are for run and sweeps")
	}
	if !user.IsPath(target) {
		return badInput("watch %s: built-in kernels do not change while mltop runs; give a user kernel's kernel.yaml or folder (e.g. ./examples/softmax)", target)
	}
	ms, err := user.Manifests(target)
	if err != nil {
		return badInput("%v", err)
	}
	if len(ms) != 1 {
		return badInput("%s holds %d kernels: name one kernel.yaml", target, len(ms))
	}
	name, err := s.resolveKernelArg(ms[0])
	if err != nil {
		return err
	}
	spec, err := parseSpec(name, dtype, sets)
	if err != nil {
		return err
	}
	exec, err := s.openExecutor(ctx, o.backend, o.isolate)
	if err != nil {
		return err
	}
	defer exec.Close()
	w, _, err := watch.Start(ctx, ms[0], watch.Options{})
	if err != nil {
		return badInput("%v", err)
	}
	// Its lines are its only output: once whatever reads them is gone
	// (| head), watch stops, as SIGPIPE (caught in Main) no longer ends it.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	stdout = &stdoutGuard{w: stdout, gone: func() {
		fmt.Fprintf(stderr, "mltop: %v: watch stops\n", errStdoutClosed)
		stop()
	}}
	dev := exec.Device()
	fmt.Fprintf(stderr, "mltop: watching %s (%s) for %s on %s (%s); save one to rerun, ctrl-c stops\n",
		ms[0], profiler.Plural(len(w.Files()), "file", "files"), name, dev.Name, dev.Backend)
	opt := o.measureOptions(nil)
	var prev *profiler.Result
	n := 0
	var said reasonOnce
	runOnce := func(why string, since time.Time, label string) profiler.Result {
		n++
		res := exec.Run(ctx, spec, opt, nil)
		fmt.Fprintln(stdout, watchLine(n, why, res, prev, label, time.Since(since), said.sameAs(n, res)))
		if res.Stats.N > 0 {
			prev = &res
		}
		return res
	}
	if first := runOnce("start", time.Now(), "after_start"); first.CannotRun() && ctx.Err() == nil {
		// No save makes it runnable here; what a save still checks is the
		// manifest, the plan and the budget.
		fmt.Fprintf(stderr, "mltop: %s cannot run %s's source, so every run here is invalid; each save still re-checks the manifest, the plan and the TGM budget. To measure, watch with %s\n", dev.Backend, name, profiler.UserBackendFlag(spec.Kernel))
	}
	reruns := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case r, ok := <-w.Events():
			if !ok {
				return nil
			}
			saved, why := savedAt(r.Changed)
			if r.Err != nil {
				n++
				fmt.Fprintf(stdout, "#%d  %s  reload error  %s  after_save=%.3fs\n", n, why, profiler.FirstLine(r.Err.Error()), time.Since(saved).Seconds())
				fmt.Fprintf(stderr, "mltop: %v\nmltop: the kernel as loaded before stays: fix and save to rerun\n", r.Err)
			} else {
				if r.Renamed != "" { // the old name is gone from the registry: follow the new one
					name = r.Family.Name()
					why += fmt.Sprintf(" (renamed %s → %s)", r.Renamed, name)
				}
				if s, err := parseSpec(name, dtype, sets); err != nil {
					n++
					fmt.Fprintf(stdout, "#%d  %s  spec error  %s\n", n, why, profiler.FirstLine(err.Error()))
				} else {
					spec = s
					runOnce(why, saved, "after_save")
				}
			}
			reruns++
			if *count > 0 && reruns >= *count {
				return nil
			}
		}
	}
}

// savedAt is the newest modification time of the changed files and what
// to call the change ("softmax.cu saved").
func savedAt(changed []string) (time.Time, string) {
	var t time.Time
	var names []string
	for _, c := range changed {
		names = append(names, filepath.Base(c))
		if st, err := os.Stat(c); err == nil && st.ModTime().After(t) {
			t = st.ModTime()
		}
	}
	if t.IsZero() {
		t = time.Now()
	}
	return t, strings.Join(names, ",") + " saved"
}

// reasonOnce remembers the failure reason the last line gave, so that a
// reason every run repeats (the CPU backend cannot run the source) is
// said once and then referred to.
type reasonOnce struct {
	reason string
	at     int // the run that said it
}

// sameAs is the earlier run that gave r's failure reason when the run
// before n gave it too (0 when r has a new reason, or none); n remembers it.
func (s *reasonOnce) sameAs(n int, r profiler.Result) int {
	msg := ""
	if r.Status != profiler.StatusOK && r.Status != profiler.StatusUnchecked {
		msg = r.Reason()
	}
	if msg == "" || msg != s.reason {
		s.reason, s.at = msg, n
		return 0
	}
	return s.at
}

// watchLine is one run of `mltop watch`:
//
//	#2  softmax.cu saved  ok  median 41.3 µs (-4.2% [-5.0, -3.4] faster vs previous)  812 GB/s  ✓ max err 3.1e-07  after_save=1.432s
//
// sameAs > 0 names the earlier run whose failure reason this one repeats,
// instead of the reason.
func watchLine(n int, why string, r profiler.Result, prev *profiler.Result, label string, took time.Duration, sameAs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d  %s  %s", n, why, r.Status)
	if r.Stats.N > 0 {
		fmt.Fprintf(&b, "  median %s", units.Micros(r.Stats.Median))
		if prev != nil && prev.Stats.Median > 0 {
			fmt.Fprintf(&b, " (%s vs previous)", compare.Results(*prev, r, compare.DefaultOptions()))
		}
		switch {
		case r.TFLOPS >= 1:
			fmt.Fprintf(&b, "  %.2f TFLOP/s", r.TFLOPS)
		case r.GBps > 0:
			fmt.Fprintf(&b, "  %.0f GB/s", r.GBps)
		}
	}
	if v := r.Verdict; v != nil {
		if v.Pass {
			fmt.Fprintf(&b, "  ✓ max err %.1e", v.MaxAbsErr)
		} else {
			fmt.Fprintf(&b, "  ✗ %d mismatches, max err %.1e", v.Mismatches, v.MaxAbsErr)
		}
	}
	if sameAs > 0 && r.Error != "" {
		fmt.Fprintf(&b, "  (the same reason as #%d)", sameAs)
	} else if r.Status != profiler.StatusOK && r.Status != profiler.StatusUnchecked && r.Error != "" {
		msg := r.Reason()
		if f, line, text, ok := profiler.ErrorSite(msg); ok {
			fmt.Fprintf(&b, "  at %s:%d", filepath.Base(f), line)
			msg = text
		}
		fmt.Fprintf(&b, "  %s", profiler.FirstLine(msg))
	}
	fmt.Fprintf(&b, "  %s=%.3fs", label, took.Seconds())
	return b.String()
}
