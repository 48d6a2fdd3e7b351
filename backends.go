package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
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
		return nil, name, badInput("the %s backend is not available here: %v (see `mltop list`; --backend cpu runs anywhere)", name, err)
	}
	return b, name, nil
}

// openExecutor runs specs in process or in a worker subprocess. GPU
// backends are isolated by default: a fault or hang kills only the worker.
func openExecutor(name, isolate string) (profiler.Executor, error) {
	name = resolveBackend(name)
	useWorker := isolate == "on" || (isolate == "auto" && name != "cpu")
	if !useWorker {
		b, _, err := openBackend(name)
		if err != nil {
			return nil, err
		}
		return profiler.NewRunner(b), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the mltop binary to start a worker: %w (use --isolate off)", err)
	}
	pool, err := profiler.NewWorkerPool([]string{self, "worker", "--backend", name}, nil)
	if err != nil {
		return nil, badInput("the %s backend is not available here: %v (see `mltop list`; --backend cpu runs anywhere)", name, err)
	}
	return pool, nil
}
