package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// backendStatus says whether a backend can run here, and why not.
type backendStatus struct {
	name      string
	available bool
	reason    string
}

func probeBackends() []backendStatus {
	mOK, mWhy := metal.Available()
	cOK, cWhy := cuda.Available()
	return []backendStatus{
		{"metal", mOK, mWhy},
		{"cuda", cOK, cWhy},
		{"cpu", true, fmt.Sprintf("pure Go on %d %s cores", runtime.NumCPU(), runtime.GOARCH)},
	}
}

// resolveBackend turns "auto" into the best backend found.
func resolveBackend(name string) string {
	if name != "auto" {
		return name
	}
	for _, b := range probeBackends() {
		if b.available {
			return b.name
		}
	}
	return "cpu"
}

// openBackend opens a backend by name ("auto" picks the best found).
func openBackend(name string) (profiler.Backend, string, error) {
	name = resolveBackend(name)
	var b profiler.Backend
	var err error
	switch name {
	case "metal":
		b, err = metal.Open()
	case "cuda":
		b, err = cuda.Open()
	case "cpu":
		b, err = cpu.New()
	default:
		return nil, name, badInput("unknown backend %q: use auto, metal, cuda or cpu", name)
	}
	if err != nil {
		return nil, name, unavailable(name, err)
	}
	return b, name, nil
}

// openExecutor runs specs in process or in a worker subprocess. GPU
// backends are isolated by default: a fault or hang kills only the worker.
func openExecutor(name, isolate string) (profiler.Executor, error) {
	name = resolveBackend(name)
	useWorker := isolate == "on" || (isolate == "auto" && name != "cpu")
	if !useWorker {
		return openRunner(name, os.Stderr, true)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the mltop binary to start a worker: %w (use --isolate off)", err)
	}
	var env []string
	if name == "cuda" {
		// An illegal address poisons a CUDA context for good: the worker
		// exits on it, the pool records `crashed` and starts a fresh one.
		env = append(env, cuda.ExitOnFaultEnv+"=1")
	}
	pool, err := run.NewWorkerPool([]string{self, "worker", "--backend", name}, env)
	if err != nil {
		return nil, unavailable(name, err)
	}
	return pool, nil
}

// openRunner opens a backend in this process. GPU backends are calibrated
// on first use (cached per device afterwards), so Results can give % of the
// measured ceilings; the CPU is calibrated only by `mltop calibrate`.
func openRunner(name string, log io.Writer, calibrate bool) (*run.Runner, error) {
	b, name, err := openBackend(name)
	if err != nil {
		return nil, err
	}
	r := run.NewRunner(b)
	if calibrate && name != "cpu" && os.Getenv("MLTOP_NO_CALIBRATE") == "" {
		if _, err := r.Calibrate(false); err != nil {
			fmt.Fprintf(log, "mltop: calibration failed, only spec peaks will be shown: %v\n", err)
		}
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
