package run

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// Device is one GPU of a multi-device sweep: the ordinal the parent knows
// it by and the executor pinned to it (a WorkerPool whose workers see only
// that GPU).
type Device struct {
	Ordinal int
	Exec    profiler.Executor
}

// DeviceCount is one device's share of a running sweep, for progress.
type DeviceCount struct {
	Ordinal int
	Name    string
	Done    int  // specs finished on it
	Busy    bool // a spec is running on it
	Dropped bool // it failed MaxDeviceFailures times in a row
}

// MaxDeviceFailures is how many failures in a row (a worker that will not
// start, a spec that crashes or times out) drop a device from a sweep.
const MaxDeviceFailures = 3

// ensurer is a WorkerPool: it can say whether a fresh worker starts.
type ensurer interface{ Ensure() error }

// JobsOnDevices is Jobs over several devices: one goroutine per device pulls
// specs from one queue, and every Result is stamped with its device's
// ordinal. Sinks and hooks are called one at a time, so they need no lock.
//
// Failures: a crashed worker is replaced on its device by the next spec. A
// device that fails MaxDeviceFailures times in a row is dropped with a line
// on log, and the specs that failed on it run again on the others (once: a
// spec that fails again is recorded as it failed). A spec whose crash is
// followed by a success on the same device is recorded as crashed, as a
// one-device sweep records it. When every device is dropped, the specs not
// run are left for --resume and the error says how many.
func JobsOnDevices(ctx context.Context, devs []Device, jobs []profiler.Job, skip map[string]bool, sinks []profiler.Sink, h Hooks, log io.Writer) (Summary, error) {
	sum := Summary{ByStatus: map[profiler.Status]int{}, Total: len(jobs)}
	q := &jobQueue{}
	q.cond = sync.NewCond(&q.mu)
	for _, j := range jobs {
		if skip[j.Spec.Key()] {
			sum.Skipped++
			continue
		}
		q.items = append(q.items, queued{job: j})
	}
	n := len(q.items)
	counts := make([]DeviceCount, len(devs))
	for i, d := range devs {
		counts[i] = DeviceCount{Ordinal: d.Ordinal, Name: d.Exec.Device().Name}
	}

	var (
		mu      sync.Mutex // sinks, hooks, sum, counts
		started int
		sinkErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	showDevices := func() {
		if h.Devices != nil {
			h.Devices(append([]DeviceCount(nil), counts...))
		}
	}
	record := func(res profiler.Result, i int) {
		sum.ByStatus[res.Status]++
		if res.Status == profiler.StatusInvalid {
			sum.Invalid++
		} else if res.Status.Failed() {
			sum.Failed++
		}
		for _, s := range sinks {
			if err := s.Write(res); err != nil && sinkErr == nil {
				sinkErr = fmt.Errorf("writing result: %w", err)
				cancel()
			}
		}
		if h.Done != nil {
			h.Done(i, n, res)
		}
	}

	var wg sync.WaitGroup
	for di, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []queued // failed here, not yet known whether spec or device is to blame
			var heldRes []profiler.Result
			fails := 0
			release := func() { // the device works: its failures were the specs'
				mu.Lock()
				for _, r := range heldRes {
					record(r, started)
				}
				mu.Unlock()
				for range held {
					q.done()
				}
				held, heldRes = nil, nil
			}
			drop := func(why string) {
				mu.Lock()
				counts[di].Dropped, counts[di].Busy = true, false
				fmt.Fprintf(log, "mltop: device %d (%s) dropped after %d failures in a row (last: %s); the sweep goes on on the other devices\n", d.Ordinal, counts[di].Name, fails, oneLine(why))
				showDevices()
				mu.Unlock()
				var retry []queued
				for k, it := range held {
					if it.retried {
						mu.Lock()
						record(heldRes[k], started)
						mu.Unlock()
						continue
					}
					it.retried = true
					retry = append(retry, it)
				}
				q.giveUp(retry, len(held))
			}
			for {
				it, ok := q.take(len(held))
				if !ok || ctx.Err() != nil {
					if ok {
						q.putBack(it)
					}
					release()
					return
				}
				if e, ok := d.Exec.(ensurer); ok {
					if err := e.Ensure(); err != nil {
						fails++
						q.putBack(it)
						if fails >= MaxDeviceFailures {
							drop("a fresh worker did not start: " + err.Error())
							return
						}
						continue
					}
				}
				mu.Lock()
				i := started
				started++
				counts[di].Busy = true
				if h.Start != nil {
					h.Start(i, n, it.job.Spec)
				}
				showDevices()
				mu.Unlock()
				res := d.Exec.Run(ctx, it.job.Spec, it.job.Options, func(p profiler.Progress) {
					if h.Progress != nil {
						mu.Lock()
						h.Progress(i, n, it.job.Spec, p)
						mu.Unlock()
					}
				})
				res.DeviceOrdinal = d.Ordinal
				deviceFault := (res.Status == profiler.StatusCrashed || res.Status == profiler.StatusTimeout) && ctx.Err() == nil
				mu.Lock()
				counts[di].Busy = false
				counts[di].Done++
				mu.Unlock()
				if deviceFault && !it.retried {
					fails++
					// Still out: a device waiting for the queue must not end
					// while these may come back.
					held, heldRes = append(held, it), append(heldRes, res)
					if fails >= MaxDeviceFailures {
						drop(res.Error)
						return
					}
					continue
				}
				if !deviceFault {
					fails = 0
					release()
				}
				mu.Lock()
				record(res, i)
				showDevices()
				mu.Unlock()
				q.done()
			}
		}()
	}
	wg.Wait()
	if sinkErr != nil {
		return sum, sinkErr
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if left := q.left(); left > 0 {
		return sum, fmt.Errorf("every device was dropped; %d specs did not run: fix the devices and add --resume to run them", left)
	}
	return sum, nil
}

type queued struct {
	job     profiler.Job
	retried bool // it failed on a device that was then dropped
}

// jobQueue hands out specs to devices. A device that takes a spec and cannot
// run it puts it back; take waits while specs are out that may come back.
type jobQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []queued
	out   int // taken, not yet done or put back
}

// take waits while the queue is empty and specs other than the caller's own
// mine are out.
func (q *jobQueue) take(mine int) (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && q.out > mine {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return queued{}, false
	}
	it := q.items[0]
	q.items = q.items[1:]
	q.out++
	return it, true
}

func (q *jobQueue) done() {
	q.mu.Lock()
	q.out--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// putBack returns a taken spec to the front of the queue.
func (q *jobQueue) putBack(it queued) {
	q.mu.Lock()
	q.items = append([]queued{it}, q.items...)
	q.out--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// giveUp ends out specs a dropped device had taken and queues items (those
// of them to run again) at the end.
func (q *jobQueue) giveUp(items []queued, out int) {
	q.mu.Lock()
	q.items = append(q.items, items...)
	q.out -= out
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *jobQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", " | ")
}
