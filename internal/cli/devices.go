package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mltop/mltop/backends"
	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// fakeDevicesEnv lets the CPU backend take --devices (a test hook; see
// backends.FakeDevicesEnv).
const fakeDevicesEnv = backends.FakeDevicesEnv

// repeatDevicesEnv lets --devices name one device more than once (two
// workers on one GPU): their timings disturb each other, so it is only for
// testing the multi-device mechanics on a one-GPU machine.
const repeatDevicesEnv = "MLTOP_DEVICES_REPEAT"

// deviceOrdinalEnv tells a worker which of the parent's devices it drives.
const deviceOrdinalEnv = "MLTOP_DEVICE_ORDINAL"

// deviceCounter counts the devices of a backend: cuda.DeviceCount, or a
// test double.
type deviceCounter func(backend string) (int, error)

// countDevices is the real deviceCounter: the registry's count.
func countDevices(backend string) (int, error) {
	b, ok := backends.Lookup(backend)
	if !ok {
		return 0, fmt.Errorf("unknown backend %q", backend)
	}
	return b.Devices()
}

// resolveDevices reads --devices: "all" or a comma-separated list of
// ordinals as the process sees them (after any CUDA_VISIBLE_DEVICES of its
// own). It returns the ordinals in the order given, each once unless repeat.
func resolveDevices(v, backend string, count deviceCounter, repeat bool) ([]int, error) {
	n, err := count(backend)
	if err != nil {
		return nil, badInput("--devices %s: %v", v, err)
	}
	if strings.TrimSpace(v) == "all" {
		if n < 1 {
			return nil, badInput("--devices all: the %s backend sees no device", backend)
		}
		ords := make([]int, n)
		for i := range ords {
			ords[i] = i
		}
		return ords, nil
	}
	var ords []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		o, err := strconv.Atoi(f)
		if err != nil || o < 0 {
			return nil, badInput("--devices %q: %q is not a device ordinal: write all, or ordinals such as 0,2,3", v, f)
		}
		if o >= n {
			return nil, badInput("--devices %q: device %d asked for, but the %s backend sees %d device(s) (0 to %d)", v, o, backend, n, n-1)
		}
		if slices.Contains(ords, o) && !repeat {
			return nil, badInput("--devices %q: device %d is listed twice (two workers on one GPU disturb each other's timings; %s=1 allows it for tests)", v, o, repeatDevicesEnv)
		}
		ords = append(ords, o)
	}
	if len(ords) == 0 {
		return nil, badInput("--devices %q: no device: write all, or ordinals such as 0,2,3", v)
	}
	return ords, nil
}

// workerEnv pins a worker to the parent's device ord: the ordinal, and
// what the backend needs to see that device alone (backends.Backend.PinEnv).
func workerEnv(backend string, ord int, parentVisible string) []string {
	env := []string{fmt.Sprintf("%s=%d", deviceOrdinalEnv, ord)}
	if b, ok := backends.Lookup(backend); ok && b.PinEnv != nil {
		env = append(env, b.PinEnv(ord, parentVisible)...)
	}
	return env
}

// openDevices starts one worker pool per ordinal, in turn (see
// run.WorkerStartsEnv), and returns once one of them is ready: the sweep
// sets each device to work as its worker says hello. When none starts,
// it is an error naming each device's reason; a device whose worker fails
// after the first was ready is left out by the sweep, with a message.
// ctx ends the workers' starts: ctrl-C kills the workers still starting,
// and when none had started the error is a run.StartStopped.
func (s *session) openDevices(ctx context.Context, backend string, ords []int, shared []string, log io.Writer) ([]run.Device, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the mltop binary to start a worker: %w", err)
	}
	devs := make([]run.Device, len(ords))
	started := make(chan error, len(ords))
	for i, o := range ords {
		p := run.StartWorkerPoolContext(ctx, s.workerArgv(self, backend), append(workerEnv(backend, o, os.Getenv("CUDA_VISIBLE_DEVICES")), shared...))
		devs[i] = run.Device{Ordinal: o, Exec: p}
		go func() { started <- p.Wait(context.Background()) }()
	}
	for range ords {
		if <-started == nil {
			return devs, nil
		}
	}
	if ctx.Err() != nil { // ctrl-C: no device is to blame
		closeDevices(devs)
		return nil, &run.StartStopped{Cause: context.Cause(ctx)}
	}
	var why []string
	for _, d := range devs {
		err := d.Exec.(*run.WorkerPool).Wait(context.Background())
		sayLeftOut(log, d.Ordinal, err)
		why = append(why, fmt.Sprintf("device %d: %v", d.Ordinal, err))
	}
	return nil, badInput("no device could start a worker (%s); see `mltop list`", strings.Join(why, "; "))
}

// allStarted waits for every device's worker (the interactive session
// shows each device from the start) and returns those that started,
// saying on log which did not; none once ctx ends (ctrl-C: the workers
// still starting are not waited for).
func allStarted(ctx context.Context, devs []run.Device, log io.Writer) []run.Device {
	var ok []run.Device
	for _, d := range devs {
		if p, isPool := d.Exec.(*run.WorkerPool); isPool {
			if err := p.Wait(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				sayLeftOut(log, d.Ordinal, err)
				continue
			}
		}
		ok = append(ok, d)
	}
	return ok
}

// sayLeftOut is the line of a device whose worker did not start.
func sayLeftOut(log io.Writer, ord int, err error) {
	fmt.Fprintf(log, "mltop: device %d left out: its worker did not start: %v\n", ord, err)
}

func closeDevices(devs []run.Device) {
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Add(1)
		go func() { defer wg.Done(); d.Exec.Close() }()
	}
	wg.Wait()
}

// earlyDevices is the workers of a sweep's devices, started before the
// sweep is counted and announced (each worker's start, CUDA and its first
// calibration, takes seconds: they overlap the count and the banner
// instead of following them). A refused sweep closes them unused.
type earlyDevices struct {
	done   chan struct{}
	devs   []run.Device
	err    error
	shared string       // the directory the workers share float64 references in
	log    bytes.Buffer // the lines of devices left out, said when the sweep opens them
}

// startDevices starts one worker per device of --devices in the
// background (o.devices was checked by checkInputs); ctx ends their
// starts.
func (s *session) startDevices(ctx context.Context, o *options, backend string) *earlyDevices {
	e := &earlyDevices{done: make(chan struct{})}
	run.CompileWorkers() // says a bad MLTOP_COMPILE_THREADS here, where it is seen, not in the workers' logs
	cuda.WarnSettings(os.Stderr)
	go func() {
		defer close(e.done)
		backend := resolveBackend(backend)
		ords, err := resolveDevices(o.devices, backend, countDevices, os.Getenv(repeatDevicesEnv) == "1")
		if err != nil {
			e.err = err
			return
		}
		traceStep(fmt.Sprintf("%d devices counted", len(ords)))
		e.devs, e.err = s.openDevices(ctx, backend, ords, e.share(len(ords)), &e.log)
		traceStep("the first worker said hello (the others join as they start)")
	}()
	return e
}

// share makes the directory n workers share host work in and returns
// their environment: the directory (run.SharedCacheEnv), and the
// goroutines each may generate inputs on (see fillThreadsFor). Without a
// directory (the temp directory is not writable) each worker makes its
// own.
func (e *earlyDevices) share(n int) []string {
	count, warning := fillThreadsFor(runtime.NumCPU(), n, os.Getenv(run.FillThreadsEnv))
	e.log.WriteString(warning)
	env := []string{fmt.Sprintf("%s=%d", run.FillThreadsEnv, count), fmt.Sprintf("%s=%d", run.HostWorkersEnv, n)}
	dir, err := os.MkdirTemp("", "mltop-shared-")
	if err != nil {
		fmt.Fprintf(&e.log, "mltop: the workers will not share float64 references: %v\n", err)
		return env
	}
	e.shared = dir
	return append(env, run.SharedCacheEnv+"="+dir)
}

// open waits for the workers, announces the devices for sr's sweep and
// starts its progress bar.
func (e *earlyDevices) open(sr *sweepRun) ([]run.Device, error) {
	<-e.done
	sr.stderr.Write(e.log.Bytes())
	if e.err != nil {
		return nil, e.err
	}
	var names []string
	for _, d := range e.devs {
		name := d.Exec.Device().Name
		if name == "" {
			name = "starting"
			if p, ok := d.Exec.(*run.WorkerPool); ok {
				if done, err := p.Started(); done && err != nil {
					name = "left out" // the sweep says why
				}
			}
		}
		names = append(names, fmt.Sprintf("%d %s", d.Ordinal, name))
	}
	dev := run.ReadyDevice(e.devs)
	fmt.Fprintf(sr.stderr, "mltop: %s on %s (%s), %s from %s\n", dev.Backend, profiler.Plural(len(e.devs), "device", "devices"), strings.Join(names, ", "), sr.count, sr.path)
	sr.start(sr.total)
	return e.devs, nil
}

// close waits for the workers to have started, stops them and removes
// their shared directory.
func (e *earlyDevices) close() {
	<-e.done
	closeDevices(e.devs)
	if e.shared != "" {
		// A worker killed while writing a reference may add a file as the
		// directory goes: try again briefly.
		for try := 0; try < 5 && os.RemoveAll(e.shared) != nil; try++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// registerSweepFlags adds the flags only a sweep takes.
func registerSweepFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.devices, "devices", "", "(sweeps) run on several GPUs, one worker each: all, or a `list` of ordinals such as 0,2,3 (CUDA)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "(sweeps) print how many specs the sweep has and how long measuring takes, and run nothing")
	fs.StringVar(&o.shard, "shard", "", "(sweeps) run only part `i/n` of the sweep (0 ≤ i < n), or auto / auto/n from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX; join the CSVs with mltop merge")
	fs.StringVar(&o.claims, "claims", "", "(sweeps, with --shard) a `directory` shards of one sweep share: a shard that finishes its own units takes the others' unstarted ones (for shards that start apart or run on unequal GPUs)")
}

// fillThreadsFor is the goroutines each of workers workers on a host of
// cores cores may generate inputs on: cores − (workers − 1), at least 1.
// Once a sweep's shapes are spread over the devices, the workers make
// their shapes' inputs at different times, usually one at a time: a
// static cores/workers split would leave most cores idle then (a quarter
// of them with 4 GPUs, while that GPU waits). Each worker may use almost
// every core, and leaves one to each other worker, whose measuring thread
// launches kernels and must not wait for a core mid-measurement. When
// several generate at once, the OS shares the cores among them.
// override (the parent's own FillThreadsEnv) wins when it is a positive
// whole number; anything else is said in warning and ignored.
func fillThreadsFor(cores, workers int, override string) (threads int, warning string) {
	threads = max(1, cores-(workers-1))
	if override == "" {
		return threads, ""
	}
	if n, err := strconv.Atoi(override); err == nil && n > 0 {
		return n, ""
	}
	return threads, fmt.Sprintf("mltop: %s=%q is not a positive whole number of goroutines: each worker generates inputs on %d; set it to a count such as 8, or unset it\n", run.FillThreadsEnv, override, threads)
}
