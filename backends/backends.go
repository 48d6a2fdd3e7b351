// Package backends is the one list of the backends mltop can open: the CLI
// and the interactive session look a backend up here by name, and nothing
// else names them. Adding a backend: its folder (like cpu/) and one entry
// in registry; TestRegistry walks it.
package backends

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// Backend is one backend's entry.
type Backend struct {
	Name string
	// Available says whether the backend can run here and, either way,
	// why (`mltop list`, selftest).
	Available func() (bool, string)
	Open      func() (profiler.Backend, error)
	// Devices counts the devices --devices can name; its error says why
	// the backend takes no --devices.
	Devices func() (int, error)
	// Isolate runs specs in a worker subprocess under --isolate auto, so a
	// fault or hang kills only the worker (GPU backends).
	Isolate bool
	// Calibrate measures the device's ceilings when it is first opened
	// (cached per device); otherwise only `mltop calibrate` does.
	Calibrate bool
	// WorkerEnv is the environment of its isolated workers.
	WorkerEnv []string
	// PinEnv pins a worker to the parent's device ord (parentVisible: the
	// parent's CUDA_VISIBLE_DEVICES); nil where the ordinal alone does.
	PinEnv func(ord int, parentVisible string) []string
}

// Auto is the name that picks the first available backend.
const Auto = "auto"

// registry is every backend, in the order auto tries them.
var registry = []Backend{
	{Name: "metal", Available: metal.Available, Open: metal.Open, Devices: func() (int, error) { return 1, nil },
		Isolate: true, Calibrate: true},
	{Name: "cuda", Available: cuda.Available, Open: cuda.Open, Devices: cuda.DeviceCount,
		Isolate: true, Calibrate: true,
		// An illegal address poisons a CUDA context for good: the worker
		// exits on it, the pool records `crashed` and starts a fresh one.
		WorkerEnv: []string{cuda.ExitOnFaultEnv + "=1"},
		PinEnv:    cudaPin},
	{Name: "cpu", Available: cpuAvailable, Open: cpu.New, Devices: cpuDevices},
}

// All is every backend, in the order auto tries them.
func All() []Backend { return registry }

// Names are the backends' names, auto first: what --backend takes.
func Names() []string {
	names := []string{Auto}
	for _, b := range registry {
		names = append(names, b.Name)
	}
	return names
}

// Lookup is the backend called name (not auto).
func Lookup(name string) (Backend, bool) {
	for _, b := range registry {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Resolve turns auto into the first available backend (the last, which
// runs anywhere, when none says it is); other names are returned as
// they are.
func Resolve(name string) string {
	if name != Auto {
		return name
	}
	for _, b := range registry {
		if ok, _ := b.Available(); ok {
			return b.Name
		}
	}
	return registry[len(registry)-1].Name
}

func cpuAvailable() (bool, string) {
	return true, fmt.Sprintf("pure Go on %d %s cores", runtime.NumCPU(), runtime.GOARCH)
}

// FakeDevicesEnv is a test hook: with MLTOP_FAKE_DEVICES=N the CPU backend
// accepts --devices as if it had N devices (each worker is a CPU worker
// told its ordinal). It exists so that the multi-device mechanics are
// tested on machines without GPUs.
const FakeDevicesEnv = "MLTOP_FAKE_DEVICES"

func cpuDevices() (int, error) {
	if s := os.Getenv(FakeDevicesEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s=%q is not a count of devices", FakeDevicesEnv, s)
		}
		return n, nil
	}
	return 0, fmt.Errorf("the cpu backend is one device: --devices is for CUDA GPUs (drop --devices, or use --backend cuda)")
}

// cudaPin names the parent's GPU ord alone in CUDA_VISIBLE_DEVICES: the
// parent's own entry at ord when the parent runs under a
// CUDA_VISIBLE_DEVICES (as Slurm and Kubernetes set it), so that the
// worker's device 0 is the parent's device ord.
func cudaPin(ord int, parentVisible string) []string {
	vis := strconv.Itoa(ord)
	if parentVisible != "" {
		if list := strings.Split(parentVisible, ","); ord < len(list) {
			vis = strings.TrimSpace(list[ord])
		}
	}
	return []string{"CUDA_VISIBLE_DEVICES=" + vis, "MLTOP_CUDA_DEVICE=0", cuda.ExitOnFaultEnv + "=1"}
}
