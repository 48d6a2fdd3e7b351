package run_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// fakeDevice is an Executor that stands for one GPU. crash(key) says
// whether a spec crashes on it; gate, when set, holds its first Run until
// the gate is closed; ensureErr makes its fresh workers fail to start.
type fakeDevice struct {
	name      string
	crash     func(key string) bool
	gate      chan struct{}
	ensureErr error
	delay     time.Duration // each Run takes this long

	mu     sync.Mutex
	ran    []string
	pre    []string // prefetched
	events []string // "p KEY" for a prefetch, "r KEY" for a run, in order
}

func (f *fakeDevice) Prefetch(j profiler.Job) {
	s := j.Spec
	f.mu.Lock()
	f.pre = append(f.pre, s.Key())
	f.events = append(f.events, "p "+s.Key())
	f.mu.Unlock()
}

func (f *fakeDevice) Device() profiler.DeviceInfo {
	return profiler.DeviceInfo{Name: f.name, Backend: "fake"}
}
func (f *fakeDevice) Close() error  { return nil }
func (f *fakeDevice) Ensure() error { return f.ensureErr }
func (f *fakeDevice) Run(ctx context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	f.mu.Lock()
	first := len(f.ran) == 0
	f.ran = append(f.ran, s.Key())
	f.events = append(f.events, "r "+s.Key())
	f.mu.Unlock()
	if first && f.gate != nil {
		<-f.gate
	}
	time.Sleep(f.delay)
	r := profiler.Result{Spec: s, Device: f.name, Backend: "fake", Status: profiler.StatusOK}
	if f.crash != nil && f.crash(s.Key()) {
		r.Status, r.Error = profiler.StatusCrashed, "worker died: "+f.name+" lost"
	}
	return r
}

func (f *fakeDevice) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ran)
}

type memSink struct{ rows []profiler.Result }

func (m *memSink) Write(r profiler.Result) error { m.rows = append(m.rows, r); return nil }
func (m *memSink) Close() error                  { return nil }

func scaleJobs(n int) []profiler.Job {
	var jobs []profiler.Job
	for i := range n {
		jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32,
			Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"N": 100 + i}}})
	}
	return jobs
}

// byKey checks that every job has exactly one row and returns them by key.
func byKey(t *testing.T, jobs []profiler.Job, rows []profiler.Result) map[string]profiler.Result {
	t.Helper()
	m := map[string]profiler.Result{}
	for _, r := range rows {
		if _, dup := m[r.Spec.Key()]; dup {
			t.Errorf("%s has two rows", r.Spec.Key())
		}
		m[r.Spec.Key()] = r
	}
	for _, j := range jobs {
		if _, ok := m[j.Spec.Key()]; !ok {
			t.Errorf("%s has no row", j.Spec.Key())
		}
	}
	return m
}

func TestJobsOnDevicesShareOneQueue(t *testing.T) {
	jobs := scaleJobs(12)
	// Each device's first spec waits until the other has started one, so
	// both take part whatever the scheduler does.
	var both sync.WaitGroup
	both.Add(2)
	gate := make(chan struct{})
	go func() { both.Wait(); close(gate) }()
	a := &fakeDevice{name: "gpu A", gate: gate}
	b := &fakeDevice{name: "gpu B", gate: gate}
	devs := []run.Device{{Ordinal: 2, Exec: startCounter{a, &both}}, {Ordinal: 5, Exec: startCounter{b, &both}}}
	sink := &memSink{}
	var last []run.DeviceCount
	skip := map[string]bool{jobs[0].Spec.Key(): true}
	var log bytes.Buffer
	sum, err := run.JobsOnDevices(context.Background(), devs, jobs, skip, []profiler.Sink{sink}, run.Hooks{Devices: func(c []run.DeviceCount) { last = c }}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != 12 || sum.Skipped != 1 || sum.ByStatus[profiler.StatusOK] != 11 || sum.ExitCode() != 0 {
		t.Errorf("summary %+v", sum)
	}
	rows := byKey(t, jobs[1:], sink.rows)
	if len(sink.rows) != 11 {
		t.Errorf("%d rows, want 11", len(sink.rows))
	}
	for _, r := range rows {
		if (r.Device == "gpu A") != (r.DeviceOrdinal == 2) || (r.Device == "gpu B") != (r.DeviceOrdinal == 5) {
			t.Errorf("%s ran on %s but is stamped device %d", r.Spec.Key(), r.Device, r.DeviceOrdinal)
		}
	}
	if a.count() == 0 || b.count() == 0 || a.count()+b.count() != 11 {
		t.Errorf("A ran %d, B %d", a.count(), b.count())
	}
	if len(last) != 2 || last[0].Done != a.count() || last[1].Done != b.count() || last[0].Ordinal != 2 || last[1].Name != "gpu B" || last[0].Busy || last[1].Dropped {
		t.Errorf("device counts %+v", last)
	}
	if log.Len() != 0 {
		t.Errorf("log: %s", log.String())
	}
	// A spec prefetched on a device runs there, after the one it
	// overlapped, or (every spec here is a shape of its own, and a device
	// reserves the next shape ahead) on the other device.
	ranThere := 0
	for _, f := range []*fakeDevice{a, b} {
		if len(f.pre) == 0 {
			t.Errorf("%s prefetched nothing", f.name)
		}
		for _, k := range f.pre {
			switch i := slices.Index(f.ran, k); {
			case i >= 1:
				ranThere++
			case i == 0:
				t.Errorf("%s prefetched %s, its first spec, before running it", f.name, k)
			case slices.Index(a.ran, k) < 0 && slices.Index(b.ran, k) < 0:
				t.Errorf("%s prefetched %s, which never ran", f.name, k)
			}
		}
	}
	if ranThere == 0 {
		t.Error("no prefetched spec ran on the device that prefetched it")
	}
}

// startCounter marks Done on wg at its executor's first Run.
type startCounter struct {
	*fakeDevice
	wg *sync.WaitGroup
}

func (s startCounter) Run(ctx context.Context, sp profiler.Spec, o profiler.Options, p func(profiler.Progress)) profiler.Result {
	if s.count() == 0 {
		s.wg.Done()
	}
	return s.fakeDevice.Run(ctx, sp, o, p)
}

// A device on which everything crashes is dropped after three specs that
// then run on the other device: the rows are those of a healthy sweep.
func TestJobsOnDevicesDropsAFailingDevice(t *testing.T) {
	jobs := scaleJobs(10)
	gate := make(chan struct{})
	bad := &fakeDevice{name: "bad", crash: func(string) bool { return true }}
	good := &fakeDevice{name: "good", gate: gate}
	// the good device holds its first spec until the bad one has failed three times
	badEx := &crashCounter{fakeDevice: bad, after: run.MaxDeviceFailures, then: func() { close(gate) }}
	sink := &memSink{}
	var log bytes.Buffer
	var last []run.DeviceCount
	sum, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: good}, {Ordinal: 1, Exec: badEx}}, jobs, nil, []profiler.Sink{sink},
		run.Hooks{Devices: func(c []run.DeviceCount) { last = c }}, &log)
	if err != nil {
		t.Fatal(err)
	}
	rows := byKey(t, jobs, sink.rows)
	for _, r := range rows {
		if r.Status != profiler.StatusOK || r.DeviceOrdinal != 0 {
			t.Errorf("%s: %s on device %d", r.Spec.Key(), r.Status, r.DeviceOrdinal)
		}
	}
	if sum.ByStatus[profiler.StatusOK] != 10 || sum.Failed != 0 {
		t.Errorf("summary %+v", sum)
	}
	if bad.count() < run.MaxDeviceFailures {
		t.Errorf("the bad device ran %d specs, want at least %d", bad.count(), run.MaxDeviceFailures)
	}
	if !strings.Contains(log.String(), "device 1 (bad) dropped after 3 failures in a row (last: worker died: bad lost); the sweep goes on") {
		t.Errorf("log: %q", log.String())
	}
	if !last[1].Dropped || last[0].Dropped {
		t.Errorf("counts %+v", last)
	}
}

type crashCounter struct {
	*fakeDevice
	n     int
	after int
	then  func()
}

func (c *crashCounter) Run(ctx context.Context, s profiler.Spec, o profiler.Options, p func(profiler.Progress)) profiler.Result {
	r := c.fakeDevice.Run(ctx, s, o, p)
	c.n++
	if c.n == c.after {
		c.then()
	}
	return r
}

// A spec that crashes everywhere is the spec's fault: it is recorded as
// crashed once, and no device is dropped however many such specs there are.
func TestJobsOnDevicesRecordsASpecThatCrashesEverywhere(t *testing.T) {
	jobs := scaleJobs(9)
	bad := map[string]bool{}
	for _, j := range jobs[:6] { // six in a row, more than MaxDeviceFailures
		bad[j.Spec.Key()] = true
	}
	crash := func(k string) bool { return bad[k] }
	a := &fakeDevice{name: "A", crash: crash}
	b := &fakeDevice{name: "B", crash: crash}
	sink := &memSink{}
	var log bytes.Buffer
	sum, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: a}, {Ordinal: 1, Exec: b}}, jobs, nil, []profiler.Sink{sink}, run.Hooks{}, &log)
	if err != nil {
		t.Fatal(err)
	}
	rows := byKey(t, jobs, sink.rows)
	for k, r := range rows {
		want := profiler.StatusOK
		if bad[k] {
			want = profiler.StatusCrashed
		}
		if r.Status != want {
			t.Errorf("%s: %s, want %s", k, r.Status, want)
		}
	}
	if sum.ByStatus[profiler.StatusCrashed] != 6 || sum.ExitCode() != 1 || log.Len() != 0 {
		t.Errorf("summary %+v, log %q", sum, log.String())
	}
	// each bad spec ran on both devices: once to fail, once to confirm
	if a.count()+b.count() != 9+6 {
		t.Errorf("runs: A %d, B %d", a.count(), b.count())
	}
}

// With one device a crash is recorded at once (nobody can confirm it);
// a device whose workers no longer start is dropped, and with none left
// the error counts the specs that did not run.
func TestJobsOnDevicesNoDeviceLeft(t *testing.T) {
	jobs := scaleJobs(4)
	dead := &fakeDevice{name: "dead", ensureErr: errors.New("CUDA_ERROR_NO_DEVICE")}
	var log bytes.Buffer
	sink := &memSink{}
	_, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 3, Exec: dead}}, jobs, nil, []profiler.Sink{sink}, run.Hooks{}, &log)
	if err == nil || !strings.Contains(err.Error(), "every device was dropped; 4 specs did not run") {
		t.Errorf("err %v", err)
	}
	if len(sink.rows) != 0 || dead.count() != 0 {
		t.Errorf("%d rows, %d runs", len(sink.rows), dead.count())
	}
	if !strings.Contains(log.String(), "device 3 (dead) dropped after 3 failures in a row (last: a fresh worker did not start: CUDA_ERROR_NO_DEVICE); no device is left") {
		t.Errorf("log %q", log.String())
	}

	one := &fakeDevice{name: "one", crash: func(k string) bool { return k == jobs[1].Spec.Key() }}
	sink = &memSink{}
	sum, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: one}}, jobs, nil, []profiler.Sink{sink}, run.Hooks{}, &log)
	if err != nil || sum.ByStatus[profiler.StatusCrashed] != 1 || sum.ByStatus[profiler.StatusOK] != 3 || one.count() != 4 {
		t.Errorf("one device: %+v %v, %d runs", sum, err, one.count())
	}
	got := make([]string, len(sink.rows))
	for i, r := range sink.rows {
		got[i] = fmt.Sprintf("%d %s", r.Spec.Dims["N"], r.Status)
	}
	// in the devices' order: the lead shape (the least host work per
	// second of device work: the smallest N, the fixed sampling time being
	// the same) first, then the dearest (largest N) first, but for N=102,
	// whose host work would get ahead of the device work (spreadHostWork)
	if !slices.Equal(got, []string{"100 ok", "103 ok", "101 crashed", "102 ok"}) {
		t.Errorf("rows %v", got)
	}
}

// Each device stays on a shape while it has specs (its worker keeps the
// inputs and reference), starts a shape no other device is on, and only
// shares one at the end: 4 shapes of 6 specs on 2 devices cost at most 4
// + 1 (device, shape) pairs, where taking specs in turn costs 8.
func TestJobsOnDevicesKeepTheirShape(t *testing.T) {
	var jobs []profiler.Job
	for shape := range 4 {
		for _, wg := range []int{32, 64, 128, 256, 512, 1024} {
			jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32,
				Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": 1000 + shape}}})
		}
	}
	var both sync.WaitGroup
	both.Add(2)
	gate := make(chan struct{})
	go func() { both.Wait(); close(gate) }()
	a := &fakeDevice{name: "gpu A", gate: gate, delay: time.Millisecond}
	b := &fakeDevice{name: "gpu B", gate: gate, delay: time.Millisecond}
	devs := []run.Device{{Ordinal: 0, Exec: startCounter{a, &both}}, {Ordinal: 1, Exec: startCounter{b, &both}}}
	sink := &memSink{}
	if _, err := run.JobsOnDevices(context.Background(), devs, jobs, nil, []profiler.Sink{sink}, run.Hooks{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	byKey(t, jobs, sink.rows)
	shapeOf := map[string]int{}
	for _, j := range jobs {
		shapeOf[j.Spec.Key()] = j.Spec.Dims["N"]
	}
	pairs := 0
	for _, f := range []*fakeDevice{a, b} {
		var seen []int
		for _, k := range f.ran {
			n := shapeOf[k]
			if len(seen) > 0 && seen[len(seen)-1] == n {
				continue
			}
			if slices.Contains(seen, n) {
				t.Errorf("%s went back to shape N=%d: %v", f.name, n, seen)
			}
			seen = append(seen, n)
		}
		pairs += len(seen)
		t.Logf("%s ran shapes %v", f.name, seen)
	}
	if pairs > 5 {
		t.Errorf("%d (device, shape) pairs: want at most 5", pairs)
	}
	// A device moving to a new shape reserved it: its worker was asked to
	// prepare a spec of it while at least two specs of the shape before
	// ran (not only the one spec taken ahead).
	early := 0
	for _, f := range []*fakeDevice{a, b} {
		seen := map[int]bool{}
		for i, e := range f.events {
			kind, key, _ := strings.Cut(e, " ")
			n := shapeOf[key]
			if kind != "r" || seen[n] {
				continue
			}
			seen[n] = true
			runsSince := -1
			for _, before := range f.events[:i] {
				k, key, _ := strings.Cut(before, " ")
				switch {
				case k == "p" && shapeOf[key] == n && runsSince < 0:
					runsSince = 0
				case k == "r" && runsSince >= 0:
					runsSince++
				}
			}
			if runsSince >= 2 {
				early++
			}
		}
	}
	if early == 0 {
		t.Error("no device had its next shape prepared while it ran the shape before")
	}
}

// startingDevice is a fakeDevice whose worker is still starting until
// ready is closed (a WorkerPool from StartWorkerPool); err is how its
// start ended.
type startingDevice struct {
	*fakeDevice
	ready chan struct{}
	err   error
}

func (s *startingDevice) Wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *startingDevice) Started() (bool, error) {
	select {
	case <-s.ready:
		return true, s.err
	default:
		return false, nil
	}
}

func (s *startingDevice) Device() profiler.DeviceInfo {
	if done, err := s.Started(); !done || err != nil {
		return profiler.DeviceInfo{}
	}
	return s.fakeDevice.Device()
}

// Devices whose workers are still starting do not hold up the ones that
// are ready: a device joins when its worker is ready, one that never is
// runs nothing and is named at the end, one whose start fails is left out.
func TestJobsOnDevicesStartAsTheirWorkersAreReady(t *testing.T) {
	jobs := scaleJobs(12)
	a := &fakeDevice{name: "A", delay: 5 * time.Millisecond}
	late := &startingDevice{fakeDevice: &fakeDevice{name: "late", delay: 5 * time.Millisecond}, ready: make(chan struct{})}
	never := &startingDevice{fakeDevice: &fakeDevice{name: "never"}, ready: make(chan struct{})}
	broken := &startingDevice{fakeDevice: &fakeDevice{name: "broken"}, ready: make(chan struct{}), err: errors.New("no CUDA here")}
	close(broken.ready)
	// late becomes ready once A has run 3 specs
	gate := &readyAfter{fakeDevice: a, n: 3, open: late.ready}
	var log bytes.Buffer
	var sink memSink
	sum, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: gate}, {Ordinal: 1, Exec: late}, {Ordinal: 2, Exec: never}, {Ordinal: 3, Exec: broken}}, jobs, nil, []profiler.Sink{&sink}, run.Hooks{}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != 12 || sum.ByStatus[profiler.StatusOK] != 12 {
		t.Fatalf("%d rows, %v", len(sink.rows), sum.ByStatus)
	}
	if a.count() < 3 || late.count() == 0 || never.count() != 0 || broken.count() != 0 {
		t.Errorf("ran: A %d, late %d, never %d, broken %d", a.count(), late.count(), never.count(), broken.count())
	}
	for _, want := range []string{"device 2 ran no spec: its worker was still starting", "device 3 left out: its worker did not start: no CUDA here"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if names := []string{sum.Devices[0].Name, sum.Devices[1].Name}; names[0] != "A" || names[1] != "late" {
		t.Errorf("device names %v: a device that became ready is named", names)
	}
	// the device left out is not in the per-device times (nor the busy share)
	if len(sum.Devices) != 3 || sum.Devices[2].Ordinal != 2 {
		t.Errorf("per-device times of %d devices (%+v), want 0, 1 and 2", len(sum.Devices), sum.Devices)
	}
}

// readyAfter is a device that closes open after it has run n specs.
type readyAfter struct {
	*fakeDevice
	n    int
	open chan struct{}
	once sync.Once
}

func (r *readyAfter) Run(ctx context.Context, s profiler.Spec, o profiler.Options, p func(profiler.Progress)) profiler.Result {
	res := r.fakeDevice.Run(ctx, s, o, p)
	if r.fakeDevice.count() >= r.n {
		r.once.Do(func() { close(r.open) })
	}
	return res
}

// With nothing to run (a --resume of a finished sweep), a device still
// starting is not said to have run nothing.
func TestJobsOnDevicesNothingToRunSaysNothingOfStarting(t *testing.T) {
	jobs := scaleJobs(3)
	skip := map[string]bool{}
	for _, j := range jobs {
		skip[j.Spec.Key()] = true
	}
	never := &startingDevice{fakeDevice: &fakeDevice{name: "never"}, ready: make(chan struct{})}
	var log bytes.Buffer
	if _, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: &fakeDevice{name: "A"}}, {Ordinal: 1, Exec: never}}, jobs, skip, nil, run.Hooks{}, &log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "ran no spec") {
		t.Errorf("log: %s", log.String())
	}
}

// failsAtTheEnd is a device whose worker's start fails just as the sweep
// runs out of specs: its device stopped waiting (nothing was left), and
// the start is over, failed, when the sweep says which devices ran nothing.
type failsAtTheEnd struct{ *fakeDevice }

func (failsAtTheEnd) Wait(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (failsAtTheEnd) Started() (bool, error)         { return true, errors.New("no CUDA here") }
func (failsAtTheEnd) Device() profiler.DeviceInfo    { return profiler.DeviceInfo{} }

// A device whose start failed once the sweep was over is named, without
// saying that the sweep goes on without it: it has ended.
func TestJobsOnDevicesStartFailedAtTheEnd(t *testing.T) {
	for _, n := range []int{4, 0} { // 0: a --resume with nothing left
		jobs := scaleJobs(4)
		skip := map[string]bool{}
		if n == 0 {
			for _, j := range jobs {
				skip[j.Spec.Key()] = true
			}
		}
		var log bytes.Buffer
		late := failsAtTheEnd{&fakeDevice{name: "late"}}
		if _, err := run.JobsOnDevices(context.Background(), []run.Device{{Ordinal: 0, Exec: &fakeDevice{name: "A"}}, {Ordinal: 1, Exec: late}}, jobs, skip, nil, run.Hooks{}, &log); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "device 1 left out: its worker did not start: no CUDA here") || strings.Contains(log.String(), "goes on") {
			t.Errorf("%d specs to run: log:\n%s", n, log.String())
		}
	}
}
