package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mltop/mltop/backends"
	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// backendStatus says whether a backend can run here, and why not.
type backendStatus struct {
	name      string
	available bool
	reason    string
}

// probeBackends asks every backend of the registry whether it can run here.
func probeBackends() []backendStatus {
	var out []backendStatus
	for _, b := range backends.All() {
		ok, why := b.Available()
		out = append(out, backendStatus{b.Name, ok, why})
	}
	return out
}

// resolveBackend turns "auto" into the best backend found.
func resolveBackend(name string) string { return backends.Resolve(name) }

// openBackend opens a backend by name ("auto" picks the best found).
func openBackend(name string) (profiler.Backend, string, error) {
	name = resolveBackend(name)
	entry, ok := backends.Lookup(name)
	if !ok {
		return nil, name, badInput("unknown backend %q: use auto, metal, cuda or cpu", name)
	}
	b, err := entry.Open()
	if err != nil {
		return nil, name, unavailable(name, err)
	}
	return b, name, nil
}

// openExecutor runs specs in process or in a worker subprocess. GPU
// backends are isolated by default: a fault or hang kills only the worker.
// The worker is handed the session's user kernels on its command line.
// ctx ends the worker's starts (ctrl-C while it starts kills it): the
// error is then a run.StartStopped, context.Canceled to errors.Is.
func (s *session) openExecutor(ctx context.Context, name, isolate string) (profiler.Executor, error) {
	name = resolveBackend(name)
	entry, _ := backends.Lookup(name)
	useWorker := isolate == "on" || (isolate == "auto" && entry.Isolate)
	run.CompileWorkers() // says a bad MLTOP_COMPILE_THREADS here, where it is seen, not in a worker's log
	cuda.WarnSettings(os.Stderr)
	if !useWorker {
		return openRunner(name, os.Stderr, true)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the mltop binary to start a worker: %w (use --isolate off)", err)
	}
	pool, err := run.NewWorkerPoolContext(ctx, s.workerArgv(self, name), entry.WorkerEnv)
	if errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err != nil {
		return nil, unavailable(name, err)
	}
	return pool, nil
}

// openRunner opens a backend in this process. GPU backends are calibrated
// on first use (cached per device afterwards), so Results can give % of the
// measured ceilings; the CPU is calibrated only by `mltop calibrate`.
func openRunner(name string, log io.Writer, calibrate bool) (*run.Runner, error) {
	t0 := time.Now()
	b, name, err := openBackend(name)
	if err != nil {
		return nil, err
	}
	r := run.NewRunner(b)
	entry, _ := backends.Lookup(name)
	t1 := time.Now()
	if calibrate && entry.Calibrate && os.Getenv("MLTOP_NO_CALIBRATE") == "" {
		if _, err := r.Calibrate(false); err != nil {
			fmt.Fprintf(log, "mltop: calibration failed, only spec peaks will be shown: %v\n", err)
		}
	}
	if os.Getenv(cuda.StartupTraceEnv) != "" {
		fmt.Fprintf(log, "mltop start-up: backend %s open %.1f ms, calibration %.1f ms\n", name, float64(t1.Sub(t0).Microseconds())/1e3, float64(time.Since(t1).Microseconds())/1e3)
	}
	return r, nil
}

// unavailableMarker starts every "backend not available" message; a worker
// that could not open its backend already said it in full, so the parent
// passes its words on instead of wrapping them a second time.
const unavailableMarker = "backend is not available here: "

// unavailable says that a backend cannot be opened, once: an error that
// already carries the explanation (from a worker's fatal line, or an inner
// open) is passed on as it is.
func unavailable(name string, err error) error {
	var fatal *run.WorkerFatal
	if errors.As(err, &fatal) {
		err = errors.New(fatal.Msg)
	}
	var ee *exitError
	if errors.As(err, &ee) && strings.Contains(ee.msg, unavailableMarker) {
		return badInput("%s", ee.msg)
	}
	if strings.Contains(err.Error(), unavailableMarker) {
		return badInput("%s", err.Error())
	}
	return badInput("the %s %s%v (see `mltop list`; --backend cpu runs anywhere)", name, unavailableMarker, err)
}

// warnNoWatchdog says on w, when a watchdog timeout was asked for, that
// exec runs specs in this process, where nothing can stop one midway: the
// timeout is a worker's watchdog and has no effect there. Nothing when
// exec is a worker pool or no timeout was asked for. byFlag and file say
// where it was asked for: --timeout, or a sweep file's timeout: (file ""
// for commands without one).
func warnNoWatchdog(w io.Writer, exec profiler.Executor, timeout time.Duration, byFlag bool, file string) {
	if _, inProcess := exec.(*run.Runner); !inProcess || timeout <= 0 {
		return
	}
	given := fmt.Sprintf("--timeout %g", timeout.Seconds())
	if !byFlag && file != "" {
		given = fmt.Sprintf("timeout: %g in %s", timeout.Seconds(), file)
	}
	fmt.Fprintf(w, "mltop: %s has no effect: the %s backend runs specs in this process, where no watchdog can stop one; add --isolate on to run them in a worker subprocess, which the watchdog ends after %g s\n",
		given, exec.Device().Backend, timeout.Seconds())
}
