package run

import (
	"fmt"
	"time"

	"github.com/mltop/mltop/profiler"
)

// DeviceTime is where one device's share of a multi-device sweep's wall
// time went, in seconds. Busy is what the GPU measured (warm-up and timed
// samples); Host is the rest of its specs' wall time (plan, compile,
// inputs, reference, verify, the worker's pipes); Startup its workers'
// start-ups (CUDA, the first calibration, a fresh worker after a crash);
// Idle the time from its last result to the sweep's end.
type DeviceTime struct {
	Ordinal int
	Name    string
	Specs   int
	Wall    float64 // from the sweep's start to the device's last result
	Startup float64
	Busy    float64
	Host    float64
	Idle    float64
}

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
	busy := 0.0
	if p := res.Phases; p != nil {
		busy = p.Warmup + p.Measure
		t.Host += p.Worker
	}
	t.Busy += busy
	t.Host += max(0, res.WallSeconds-busy)
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
	if len(s.Devices) == 0 || s.WallSeconds <= 0 {
		return 0
	}
	busy := 0.0
	for _, d := range s.Devices {
		busy += d.Busy
	}
	return busy / (float64(len(s.Devices)) * s.WallSeconds)
}

// DeviceLines says, one line per device and one for the sweep, where a
// multi-device sweep's wall time went (--phases); for one device, only the
// share of the sweep's wall time its GPU was busy measuring.
func (s Summary) DeviceLines() []string {
	if len(s.Devices) == 0 {
		return nil
	}
	if len(s.Devices) == 1 {
		d := s.Devices[0]
		return []string{fmt.Sprintf("1 device in %.2f s: the device was busy measuring %.0f%% of it (%.2f s; host work of the specs %.2f s, start-up %.2f s)",
			s.WallSeconds, 100*s.BusyShare(), d.Busy, d.Host, d.Startup)}
	}
	var lines []string
	for _, d := range s.Devices {
		share := 0.0
		if s.WallSeconds > 0 {
			share = d.Busy / s.WallSeconds
		}
		lines = append(lines, fmt.Sprintf("device %d (%s): %s, wall %.2f s: start-up %.2f s, GPU busy %.2f s (%.0f%% of the sweep), host %.2f s, idle at the end %.2f s",
			d.Ordinal, d.Name, profiler.Plural(d.Specs, "spec", "specs"), d.Wall, d.Startup, d.Busy, 100*share, d.Host, d.Idle))
	}
	lines = append(lines, fmt.Sprintf("%s in %.2f s: the GPUs were busy measuring %.0f%% of it", profiler.Plural(len(s.Devices), "device", "devices"), s.WallSeconds, 100*s.BusyShare()))
	return lines
}
