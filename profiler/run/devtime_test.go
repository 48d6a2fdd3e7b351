package run_test

import (
	"context"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// phasedDevice is a device whose every result says it measured for
// warmup+measure of wall seconds, and whose workers took startup to start.
type phasedDevice struct {
	name                  string
	warmup, measure, wall float64
	verify, verifyGPU     float64 // the check before timing, and its kernels' device time
	startup               float64
	opened                time.Time
}

func (d *phasedDevice) Device() profiler.DeviceInfo {
	return profiler.DeviceInfo{Name: d.name, Backend: "fake"}
}
func (d *phasedDevice) Close() error            { return nil }
func (d *phasedDevice) StartupSeconds() float64 { return d.startup }
func (d *phasedDevice) Opened() time.Time       { return d.opened }
func (d *phasedDevice) Run(_ context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	return profiler.Result{Spec: s, Status: profiler.StatusOK, WallSeconds: d.wall,
		Phases: &profiler.Phases{Verify: d.verify, VerifyGPU: d.verifyGPU, Warmup: d.warmup, Measure: d.measure, Worker: 0.01}}
}

func TestJobsOnDevicesTimesEachDevice(t *testing.T) {
	opened := time.Now().Add(-time.Hour) // the workers started an hour before the sweep
	a := &phasedDevice{name: "A", warmup: 0.1, measure: 0.2, wall: 0.5, startup: 1.5, opened: opened}
	b := &phasedDevice{name: "B", warmup: 0.1, measure: 0.2, wall: 0.5, startup: 2.5}
	devs := []run.Device{{Ordinal: 0, Exec: a}, {Ordinal: 3, Exec: b}}
	sum, err := run.JobsOnDevices(context.Background(), devs, scaleJobs(10), nil, nil, run.Hooks{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Devices) != 2 {
		t.Fatalf("device times %+v", sum.Devices)
	}
	specs := 0
	for i, d := range sum.Devices {
		specs += d.Specs
		if d.Ordinal != devs[i].Ordinal || d.Name != devs[i].Exec.Device().Name {
			t.Errorf("device %d is %d %s", i, d.Ordinal, d.Name)
		}
		if math.Abs(d.Busy-0.3*float64(d.Specs)) > 1e-9 || math.Abs(d.Host-0.21*float64(d.Specs)) > 1e-9 {
			t.Errorf("device %d: %d specs, busy %g, host %g; want 0.3 and 0.21 per spec", d.Ordinal, d.Specs, d.Busy, d.Host)
		}
		if math.Abs(d.Wall+d.Idle-sum.WallSeconds) > 1e-6 {
			t.Errorf("device %d: wall %g + idle %g is not the sweep's %g", d.Ordinal, d.Wall, d.Idle, sum.WallSeconds)
		}
	}
	if specs != 10 {
		t.Errorf("the devices counted %d specs, want 10", specs)
	}
	if sum.Devices[0].Startup != 1.5 || sum.Devices[1].Startup != 2.5 {
		t.Errorf("start-ups %g %g, want 1.5 2.5", sum.Devices[0].Startup, sum.Devices[1].Startup)
	}
	// The sweep began when the first worker started.
	if sum.WallSeconds < 3600 {
		t.Errorf("sweep wall %g s: it should count from the first worker's start, an hour ago", sum.WallSeconds)
	}
}

// The checks' runs (Phases.VerifyGPU) count as the device running
// kernels and leave the host's time; never more than verify itself.
func TestJobsOnDevicesCountsCheckRuns(t *testing.T) {
	a := &phasedDevice{name: "A", warmup: 0.1, measure: 0.2, verify: 0.1, verifyGPU: 0.04, wall: 0.5}
	b := &phasedDevice{name: "B", warmup: 0.1, measure: 0.2, verify: 0.1, verifyGPU: 0.3, wall: 0.5} // more than verify: counted as verify
	devs := []run.Device{{Ordinal: 0, Exec: a}, {Ordinal: 1, Exec: b}}
	sum, err := run.JobsOnDevices(context.Background(), devs, scaleJobs(10), nil, nil, run.Hooks{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for i, perSpec := range [][2]float64{{0.04, 0.17}, {0.1, 0.11}} {
		d := sum.Devices[i]
		n := float64(d.Specs)
		if math.Abs(d.Busy-0.3*n) > 1e-9 || math.Abs(d.CheckRuns-perSpec[0]*n) > 1e-9 || math.Abs(d.Host-perSpec[1]*n) > 1e-9 {
			t.Errorf("device %d: %d specs, busy %g, checks' runs %g, host %g; want 0.3, %g and %g per spec", d.Ordinal, d.Specs, d.Busy, d.CheckRuns, d.Host, perSpec[0], perSpec[1])
		}
		if math.Abs(d.Running()-d.Busy-d.CheckRuns) > 1e-12 {
			t.Errorf("device %d: running %g is not busy %g + checks' runs %g", d.Ordinal, d.Running(), d.Busy, d.CheckRuns)
		}
	}
	if got, want := sum.CheckRuns(), sum.Devices[0].CheckRuns+sum.Devices[1].CheckRuns; got != want || got <= 0 {
		t.Errorf("summary's checks' runs %g, want %g", got, want)
	}
}

func TestBusyShareAndDeviceLines(t *testing.T) {
	devs := func(checks0, checks1 float64) []run.DeviceTime {
		return []run.DeviceTime{
			{Ordinal: 0, Name: "H200", Specs: 3, Wall: 9, Startup: 2, Busy: 6, CheckRuns: checks0, Host: 1 - checks0, Idle: 1},
			{Ordinal: 1, Name: "H200", Specs: 2, Wall: 10, Startup: 2, Busy: 4, CheckRuns: checks1, Host: 4 - checks1, Idle: 0},
		}
	}
	for _, c := range []struct {
		name             string
		sum              run.Summary
		busy, running    float64
		lines, notInLine []string
	}{
		{"checks' runs not timed", run.Summary{WallSeconds: 10, Devices: devs(0, 0)}, 0.5, 0.5, []string{
			"device 0 (H200): 3 specs, wall 9.00 s: start-up 2.00 s, GPU busy 6.00 s (60% of the sweep), host 1.00 s, idle at the end 1.00 s",
			"device 1 (H200): 2 specs, wall 10.00 s: start-up 2.00 s, GPU busy 4.00 s (40% of the sweep), host 4.00 s, idle at the end 0.00 s",
			"2 devices in 10.00 s: the GPUs were busy measuring 50% of it",
		}, []string{"running", "checks"}},
		{"checks' runs timed", run.Summary{WallSeconds: 10, Devices: devs(0.6, 1)}, 0.5, 0.58, []string{
			"device 0 (H200): 3 specs, wall 9.00 s: start-up 2.00 s, GPU busy 6.00 s (60% of the sweep), checks' runs 0.60 s (running kernels 66%), host 0.40 s, idle at the end 1.00 s",
			"device 1 (H200): 2 specs, wall 10.00 s: start-up 2.00 s, GPU busy 4.00 s (40% of the sweep), checks' runs 1.00 s (running kernels 50%), host 3.00 s, idle at the end 0.00 s",
			"2 devices in 10.00 s: the GPUs were busy measuring 50% of it, running kernels 58% (with the checks' runs 1.60 s)",
		}, nil},
		{"one device, not timed", run.Summary{WallSeconds: 1.72, Devices: []run.DeviceTime{{Specs: 99, Busy: 1.16, Host: 0.38, Startup: 0.16}}}, 1.16 / 1.72, 1.16 / 1.72, []string{
			"1 device in 1.72 s: the device was busy measuring 67% of it (1.16 s; host work of the specs 0.38 s, start-up 0.16 s)",
		}, []string{"running", "checks"}},
		{"one device, timed", run.Summary{WallSeconds: 1.72, Devices: []run.DeviceTime{{Specs: 99, Busy: 1.16, CheckRuns: 0.12, Host: 0.26, Startup: 0.16}}}, 1.16 / 1.72, 1.28 / 1.72, []string{
			"1 device in 1.72 s: the device was busy measuring 67% of it (1.16 s), running kernels 74% (with the checks' runs 0.12 s; host work of the specs 0.26 s, start-up 0.16 s)",
		}, nil},
	} {
		if got := c.sum.BusyShare(); math.Abs(got-c.busy) > 1e-12 {
			t.Errorf("%s: busy share %g, want %g", c.name, got, c.busy)
		}
		if got := c.sum.RunningShare(); math.Abs(got-c.running) > 1e-12 {
			t.Errorf("%s: running share %g, want %g", c.name, got, c.running)
		}
		lines := c.sum.DeviceLines()
		if !slices.Equal(lines, c.lines) {
			t.Errorf("%s: lines\n%q\nwant\n%q", c.name, lines, c.lines)
		}
		for _, l := range lines {
			for _, no := range c.notInLine {
				if strings.Contains(l, no) {
					t.Errorf("%s: %q says %q", c.name, l, no)
				}
			}
		}
	}
	if (run.Summary{}).DeviceLines() != nil || (run.Summary{}).BusyShare() != 0 || (run.Summary{}).RunningShare() != 0 {
		t.Error("a sweep without devices has device lines or shares")
	}
}
