package run

import (
	"fmt"
	"time"

	"github.com/mltop/mltop/profiler"
)

// DeviceTime is where one device's share of a multi-device sweep's wall
// time went, in seconds. Busy is what the GPU measured (warm-up and timed
// samples); CheckRuns the device time of the checks' runs (the kernels
// run once before timing, Phases.VerifyGPU; 0 where the backend does not
// time them); Host is the rest of its specs' wall time (plan, compile,
// inputs, reference, the host's part of verify, the worker's pipes);
// Startup its workers' start-ups (CUDA, the first calibration, a fresh
// worker after a crash); Idle the time from its last result to the
// sweep's end.
type DeviceTime struct {
	Ordinal   int
	Name      string
	Specs     int
	Wall      float64 // from the sweep's start to the device's last result
	Startup   float64
	Busy      float64
	CheckRuns float64
	Host      float64
	Idle      float64
}

// Running is the time the device ran kernels: measuring and the checks'
// runs.
func (d DeviceTime) Running() float64 { return d.Busy + d.CheckRuns }

// startupTimer is an executor that knows how long its workers took to
// start (a WorkerPool), and since when it has been starting them.
type startupTimer interface {
	StartupSeconds() float64
	Opened() time.Time
}

// deviceClock keeps the DeviceTime of each device of a sweep; the caller
// holds the sweep's lock.
type deviceClock struct {
	start time.Time   // the sweep's start: the earliest worker start or the first spec
	last  []time.Time // each device's last result
	times []DeviceTime
}

func newDeviceClock(devs []Device) *deviceClock {
	c := &deviceClock{start: time.Now(), last: make([]time.Time, len(devs)), times: make([]DeviceTime, len(devs))}
	for i, d := range devs {
		if st, ok := d.Exec.(startupTimer); ok && !st.Opened().IsZero() && st.Opened().Before(c.start) {
			c.start = st.Opened()
		}
		c.times[i] = DeviceTime{Ordinal: d.Ordinal, Name: d.Exec.Device().Name}
	}
	for i := range c.last {
		c.last[i] = c.start
	}
	return c
}

// done counts device di's result res.
func (c *deviceClock) done(di int, res profiler.Result) {
	t := &c.times[di]
	t.Specs++
	busy, checks := 0.0, 0.0
	if p := res.Phases; p != nil {
		busy = p.Warmup + p.Measure
		checks = min(p.VerifyGPU, p.Verify) // a part of verify, never more
		t.Host += p.Worker
	}
	t.Busy += busy
	t.CheckRuns += checks
	t.Host += max(0, res.WallSeconds-busy-checks)
	c.last[di] = time.Now()
}

// finish closes the clock at the sweep's end and returns the times and
// the sweep's wall time.
func (c *deviceClock) finish(devs []Device) ([]DeviceTime, float64) {
	end := time.Now()
	out := append([]DeviceTime(nil), c.times...)
	for i := range out {
		out[i].Wall = c.last[i].Sub(c.start).Seconds()
		out[i].Idle = end.Sub(c.last[i]).Seconds()
		if st, ok := devs[i].Exec.(startupTimer); ok {
			out[i].Startup = st.StartupSeconds()
		}
	}
	return out, end.Sub(c.start).Seconds()
}

// BusyShare is the share of the devices' time the GPUs measured: the sum
// of Busy over the number of devices times the sweep's wall time; 0
// without devices.
func (s Summary) BusyShare() float64 {
	return s.share(func(d DeviceTime) float64 { return d.Busy })
}

// RunningShare is the share of the devices' time the GPUs ran kernels:
// as BusyShare, with the checks' runs counted too.
func (s Summary) RunningShare() float64 {
	return s.share(DeviceTime.Running)
}

// CheckRuns is the devices' time in the checks' runs, summed.
func (s Summary) CheckRuns() float64 {
	sum := 0.0
	for _, d := range s.Devices {
		sum += d.CheckRuns
	}
	return sum
}

// share sums part over the devices, over the number of devices times the
// sweep's wall time; 0 without devices.
func (s Summary) share(part func(DeviceTime) float64) float64 {
	if len(s.Devices) == 0 || s.WallSeconds <= 0 {
		return 0
	}
	sum := 0.0
	for _, d := range s.Devices {
		sum += part(d)
	}
	return sum / (float64(len(s.Devices)) * s.WallSeconds)
}

// DeviceLines says, one line per device and one for the sweep, where a
// multi-device sweep's wall time went (--phases); for one device, only the
// share of the sweep's wall time its GPU was busy measuring and, where
// the backend timed the checks' runs, the share it ran kernels.
func (s Summary) DeviceLines() []string {
	if len(s.Devices) == 0 {
		return nil
	}
	timed := s.CheckRuns() > 0 // else the backend does not time them: the line says nothing of them
	if len(s.Devices) == 1 {
		d := s.Devices[0]
		if !timed {
			return []string{fmt.Sprintf("1 device in %.2f s: the device was busy measuring %.0f%% of it (%.2f s; host work of the specs %.2f s, start-up %.2f s)",
				s.WallSeconds, 100*s.BusyShare(), d.Busy, d.Host, d.Startup)}
		}
		return []string{fmt.Sprintf("1 device in %.2f s: the device was busy measuring %.0f%% of it (%.2f s), running kernels %.0f%% (with the checks' runs %.2f s; host work of the specs %.2f s, start-up %.2f s)",
			s.WallSeconds, 100*s.BusyShare(), d.Busy, 100*s.RunningShare(), d.CheckRuns, d.Host, d.Startup)}
	}
	var lines []string
	for _, d := range s.Devices {
		busy, running := 0.0, 0.0
		if s.WallSeconds > 0 {
			busy, running = d.Busy/s.WallSeconds, d.Running()/s.WallSeconds
		}
		checks := ""
		if timed {
			checks = fmt.Sprintf(", checks' runs %.2f s (running kernels %.0f%%)", d.CheckRuns, 100*running)
		}
		lines = append(lines, fmt.Sprintf("device %d (%s): %s, wall %.2f s: start-up %.2f s, GPU busy %.2f s (%.0f%% of the sweep)%s, host %.2f s, idle at the end %.2f s",
			d.Ordinal, d.Name, profiler.Plural(d.Specs, "spec", "specs"), d.Wall, d.Startup, d.Busy, 100*busy, checks, d.Host, d.Idle))
	}
	last := fmt.Sprintf("%s in %.2f s: the GPUs were busy measuring %.0f%% of it", profiler.Plural(len(s.Devices), "device", "devices"), s.WallSeconds, 100*s.BusyShare())
	if timed {
		last += fmt.Sprintf(", running kernels %.0f%% (with the checks' runs %.2f s)", 100*s.RunningShare(), s.CheckRuns())
	}
	return append(lines, last)
}
