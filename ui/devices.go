package ui

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The session over several GPUs (mltop --devices): a sweep (s, L) runs
// through run.JobsOnDevices, one worker per device, as a headless
// --devices sweep does; a single run and a search (T) use the first
// device. The header shows each device: ordinal, name, busy or idle, and
// how many specs of the latest sweep it has measured.

// deviceCounts are the devices of opts as the header first shows them.
func deviceCounts(devs []run.Device) []run.DeviceCount {
	out := make([]run.DeviceCount, len(devs))
	for i, d := range devs {
		out[i] = run.DeviceCount{Ordinal: d.Ordinal, Name: d.Exec.Device().Name}
	}
	return out
}

// devicesText is "GPU 0 H100 busy 3 done · GPU 1 H100 idle 2 done", or ""
// with one device.
func (m Model) devicesText() string {
	var parts []string
	for i, d := range m.devCounts {
		state := "idle"
		switch {
		case d.Dropped:
			state = "✗ dropped"
		case d.Busy, i == 0 && m.running() && !m.batch.multi: // a run or a search is on the first
			state = "▶ busy"
		}
		if d.Name == "" && !d.Dropped { // its worker is still starting: no name yet
			state = "starting"
		}
		s := strings.Join(strings.Fields(fmt.Sprintf("GPU %d %s %s", d.Ordinal, d.Name, state)), " ")
		if d.Done > 0 {
			s += fmt.Sprintf(" %d done", d.Done)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// startIndex maps the start order of run.JobsOnDevices (which reorders
// the jobs, and runs a crashed spec again on another device) back to the
// batch's spec index. Its hooks are called one at a time: no lock.
type startIndex struct {
	keys    map[string][]int // spec key → the indices of the specs with it
	claimed []bool           // started at least once
	done    []bool
	byStart map[int]int
}

func newStartIndex(specs []profiler.Spec) *startIndex {
	x := &startIndex{keys: map[string][]int{}, claimed: make([]bool, len(specs)), done: make([]bool, len(specs)), byStart: map[int]int{}}
	for i, s := range specs {
		x.keys[s.Key()] = append(x.keys[s.Key()], i)
	}
	return x
}

// start is the index of the spec s started as the i-th: the first one
// with its key not started yet, else (a retry on another device) the
// first started but not done.
func (x *startIndex) start(i int, s profiler.Spec) int {
	pick := -1
	for _, j := range x.keys[s.Key()] {
		if !x.claimed[j] {
			pick = j
			break
		}
	}
	if pick < 0 {
		for _, j := range x.keys[s.Key()] {
			if !x.done[j] {
				pick = j
				break
			}
		}
	}
	if pick < 0 {
		return -1
	}
	x.claimed[pick] = true
	x.byStart[i] = pick
	return pick
}

// finish is the index of the spec started as the i-th, now done.
func (x *startIndex) finish(i int) (int, bool) {
	j, ok := x.byStart[i]
	if ok {
		x.done[j] = true
	}
	return j, ok
}

// deviceHooks are h over JobsOnDevices: its indices mapped to specs', its
// device counts handed to devices.
func deviceHooks(specs []profiler.Spec, h run.Hooks, devices func([]run.DeviceCount)) run.Hooks {
	x := newStartIndex(specs)
	return run.Hooks{
		Start: func(i, n int, s profiler.Spec) {
			if j := x.start(i, s); j >= 0 {
				h.Start(j, n, s)
			}
		},
		Progress: func(i, n int, s profiler.Spec, p profiler.Progress) {
			if j, ok := x.byStart[i]; ok {
				h.Progress(j, n, s, p)
			}
		},
		Done: func(i, n int, r profiler.Result) {
			if j, ok := x.finish(i); ok {
				h.Done(j, n, r)
			}
		},
		Devices: devices,
	}
}

// lineWriter hands each line written to it to a function (the lines of
// JobsOnDevices: a device dropped).
type lineWriter func(string)

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if l != "" {
			w(l)
		}
	}
	return len(p), nil
}
