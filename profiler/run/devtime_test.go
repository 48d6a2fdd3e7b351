package run_test

import (
	"context"
	"io"
	"math"
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
		Phases: &profiler.Phases{Warmup: d.warmup, Measure: d.measure, Worker: 0.01}}
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

func TestBusyShareAndDeviceLines(t *testing.T) {
	sum := run.Summary{WallSeconds: 10, Devices: []run.DeviceTime{
		{Ordinal: 0, Name: "H200", Specs: 3, Wall: 9, Startup: 2, Busy: 6, Host: 1, Idle: 1},
		{Ordinal: 1, Name: "H200", Specs: 2, Wall: 10, Startup: 2, Busy: 4, Host: 4, Idle: 0},
	}}
	if got := sum.BusyShare(); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("busy share %g, want 0.5 (10 busy seconds of 2×10)", got)
	}
	lines := sum.DeviceLines()
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for i, want := range []string{"device 0 (H200): 3 specs, wall 9.00 s: start-up 2.00 s, GPU busy 6.00 s (60% of the sweep), host 1.00 s, idle at the end 1.00 s",
		"device 1 (H200): 2 specs", "2 devices in 10.00 s: the GPUs were busy measuring 50%"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d %q, want it to start %q", i, lines[i], want)
		}
	}
	if (run.Summary{}).DeviceLines() != nil || (run.Summary{}).BusyShare() != 0 {
		t.Error("a one-device sweep has device lines")
	}
}
