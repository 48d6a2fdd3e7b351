package run

import (
	"context"
	"fmt"
	"io"
	"slices"
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

// starting is a WorkerPool from StartWorkerPool: its first worker may
// still be starting, and the device takes no spec before it is ready.
type starting interface {
	Wait(ctx context.Context) error
	Started() (bool, error)
}

// JobsOnDevices is Jobs over several devices: one goroutine per device pulls
// specs from one queue (each device takes the next when it is done), in
// the order orderJobs gives (the dearest shapes first, a shape's specs
// together), and every Result is stamped with its device's ordinal. Sinks and hooks are called one at a time, so they need no lock.
//
// Failures. A crashed worker is replaced on its device for the next spec.
// A spec that crashes or times out on one device runs once more on another
// (when another is left): if it fails there too, it is the spec's fault and
// that result is recorded, as a one-device sweep records it; if it runs
// there, the first device is to blame. A device to blame MaxDeviceFailures
// times in a row (a success on it resets the count), or whose fresh worker
// fails to start that many times, is dropped with a line on log and the
// sweep goes on on the others. When every device is dropped, the specs not
// run are left for --resume and the error says how many.
func JobsOnDevices(ctx context.Context, devs []Device, jobs []profiler.Job, skip map[string]bool, sinks []profiler.Sink, h Hooks, log io.Writer) (Summary, error) {
	n := 0
	for _, j := range jobs {
		if !skip[j.Spec.Key()] {
			n++
		}
	}
	src := sliceSource(jobs)
	if len(jobs) <= OrderLimit && len(devs) > 0 {
		src = orderedSource(src, ReadyDevice(devs), len(devs))
	}
	return onDevices(ctx, devs, startFeed(ctx, src, skip), n, sinks, h, log, nil)
}

// ReadyDevice is the DeviceInfo of the first of devs that is ready (a
// device still starting has none yet).
func ReadyDevice(devs []Device) profiler.DeviceInfo {
	for _, d := range devs {
		if info := d.Exec.Device(); info.Name != "" || info.Backend != "" {
			return info
		}
	}
	return profiler.DeviceInfo{}
}

// onDevices is JobsOnDevices over a feed of about n jobs, each spec
// bounded by race (nil: none races): the parent holds the best of each
// shape, whichever device measured it, and sends the bound with the spec.
func onDevices(ctx context.Context, devs []Device, f *feed, n int, sinks []profiler.Sink, h Hooks, log io.Writer, race *raceBoard) (Summary, error) {
	st := &devSweep{
		sum:   Summary{ByStatus: map[profiler.Status]int{}},
		sinks: sinks, h: h, log: log,
		fails:    make([]int, len(devs)),
		shapes:   make([]string, len(devs)),
		reserved: make([][]string, len(devs)),
		early:    make([][]profiler.Job, len(devs)),
		live:     len(devs),
		feed:     f,
		race:     race,
		n:        n,
		clock:    newDeviceClock(devs),
		drained:  make(chan struct{}),
		leftOut:  make([]bool, len(devs)),
	}
	st.cond = sync.NewCond(&st.mu)
	st.counts = make([]DeviceCount, len(devs))
	for i, d := range devs {
		st.counts[i] = DeviceCount{Ordinal: d.Ordinal, Name: d.Exec.Device().Name}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st.cancel = cancel
	stop := context.AfterFunc(ctx, func() { // wake the waiting devices
		st.mu.Lock()
		st.cond.Broadcast()
		st.mu.Unlock()
	})
	defer stop()

	var wg sync.WaitGroup
	for di, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.device(ctx, di, d)
		}()
	}
	wg.Wait()
	for di, d := range devs { // a device that never got to run is said
		s, ok := d.Exec.(starting)
		if !ok || st.counts[di].Dropped || ctx.Err() != nil {
			continue
		}
		switch done, err := s.Started(); {
		case done && err != nil: // failed as the sweep ran out of specs: nothing goes on
			st.mu.Lock()
			st.leaveOut(di, err, true)
			st.mu.Unlock()
		case !done && n > 0: // (with nothing to run, every device ran nothing)
			fmt.Fprintf(log, "mltop: device %d ran no spec: its worker was still starting when the sweep ended\n", d.Ordinal)
		}
	}
	times, wall := st.clock.finish(devs)
	st.sum.WallSeconds = wall
	st.sum.Race = race.raced()
	for di, t := range times {
		if !st.leftOut[di] {
			st.sum.Devices = append(st.sum.Devices, t)
		}
	}
	left := len(st.items)
	if ctx.Err() != nil {
		// Interrupted: what has no result yet was not run (as runFeed
		// counts it), specs taken from the feed and waiting included;
		// with --claims, not those another shard runs.
		ran := 0
		for _, k := range st.sum.ByStatus {
			ran += k
		}
		waiting := make([]profiler.Job, len(st.items))
		for k, it := range st.items {
			waiting[k] = it.job
		}
		st.sum.NotRun = max(st.feed.claims.toRun(n)-ran, st.feed.claims.left(waiting))
	}
	if ctx.Err() == nil && st.sinkErr == nil {
		for _, ok := f.next(); ok; _, ok = f.next() { // every device was dropped: count what is left
			left++
		}
	}
	f.stop()
	st.sum.Skipped, st.sum.Total = f.skipped, f.total
	if !f.finished(ctx) {
		st.sum.Total = max(f.total, f.skipped+n)
	}
	if st.sinkErr != nil {
		return st.sum, st.sinkErr
	}
	if err := ctx.Err(); err != nil {
		return st.sum, err
	}
	if f.err != nil {
		return st.sum, f.err
	}
	if left > 0 {
		return st.sum, fmt.Errorf("every device was dropped; %d specs did not run: fix the devices and add --resume to run them", left)
	}
	return st.sum, nil
}

type queued struct {
	job      profiler.Job
	shape    string          // jobShape(job), kept: tryTake reads it for every spec of the window
	failedOn int             // index of the device it crashed on, -1 if none
	first    profiler.Result // that first result
}

func newQueued(j profiler.Job) queued { return queued{job: j, shape: jobShape(j), failedOn: -1} }

// devSweep is the state the devices of JobsOnDevices share, under mu.
type devSweep struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []queued // specs taken from feed, and specs to run again
	feed    *feed
	race    *raceBoard // the best of each shape (nil: none races)
	out     int        // specs running
	n       int        // specs to run
	started int
	fails   []int
	shapes  []string // the shape each device is on (jobShape of its last spec)
	// reserved is the shapes each device moves to next, in order (see
	// reserve), and early the first spec of each not yet handed to the
	// device's worker to prepare ahead.
	reserved [][]string
	early    [][]profiler.Job
	live     int
	counts   []DeviceCount
	sum      Summary
	sinks    []profiler.Sink
	sinkErr  error
	cancel   func()
	h        Hooks
	log      io.Writer
	clock    *deviceClock
	// drained is closed when nothing is left to run: a device still
	// starting then stops waiting for its worker.
	drained   chan struct{}
	drainOnce sync.Once
	// leftOut marks the devices whose worker never started: they are not
	// in the summary's per-device times (nor in the GPUs' busy share).
	leftOut []bool
}

// waitWorker waits for device di's worker when it is still starting: false
// when it did not start (the device is left out) or nothing is left to
// run by the time it would.
func (st *devSweep) waitWorker(ctx context.Context, di int, d Device) bool {
	s, ok := d.Exec.(starting)
	if !ok {
		return true
	}
	// The devices that are ready measure meanwhile; the shapes reserve
	// leaves to a device that has taken nothing yet wait for it only as
	// long as the others have work of their own.
	wctx, stop := context.WithCancel(ctx)
	go func() { // nothing left to run: stop waiting
		select {
		case <-st.drained:
			stop()
		case <-wctx.Done():
		}
	}()
	err := s.Wait(wctx)
	stop()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		if wctx.Err() == nil {
			st.leaveOut(di, err, false)
		}
		return false
	}
	name := d.Exec.Device().Name
	st.counts[di].Name, st.clock.times[di].Name = name, name
	st.showDevices()
	return true
}

func (st *devSweep) device(ctx context.Context, di int, d Device) {
	if !st.waitWorker(ctx, di, d) {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var ahead *queued // taken and prefetched: this device runs it next
	defer func() {
		if ahead != nil { // dropped or cancelled: the others may run it
			st.out--
			st.items = append([]queued{*ahead}, st.items...)
			st.cond.Broadcast()
		}
	}()
	for {
		var it queued
		if ahead != nil && !st.counts[di].Dropped && ctx.Err() == nil {
			it, ahead = *ahead, nil
		} else {
			var ok bool
			if it, ok = st.take(ctx, di); !ok {
				return
			}
		}
		if e, ok := d.Exec.(ensurer); ok {
			st.mu.Unlock()
			err := e.Ensure()
			st.mu.Lock()
			if err != nil {
				st.out--
				st.items = append([]queued{it}, st.items...)
				st.blame(di, "a fresh worker did not start: "+err.Error())
				st.cond.Broadcast()
				continue
			}
		}
		// A spec to run again (it crashed on another device) was claimed
		// when it first ran: claiming it again would count it twice.
		mine := it.failedOn >= 0
		if !mine {
			st.mu.Unlock()
			mine = st.feed.claim(it.job)
			st.mu.Lock()
		}
		if !mine { // another shard runs it
			st.out--
			st.cond.Broadcast()
			continue
		}
		i := st.started
		st.started++
		st.counts[di].Busy = true
		if st.h.Start != nil {
			st.h.Start(i, st.feed.claims.toRun(st.n), it.job.Spec)
		}
		st.showDevices()
		// Take the next spec now and let the worker compile it while this
		// one is measured — unless the queue is nearly empty, where a spec
		// held here could have run at once on an idle device.
		var next *profiler.Job
		if _, ok := d.Exec.(Prefetcher); ok && len(st.items) > st.live {
			if nx, ok := st.tryTake(di); ok {
				ahead, next = &nx, &nx.job
			}
		}
		early := st.early[di] // the first specs of the shapes it reserved
		st.early[di] = nil
		st.mu.Unlock()
		if pf, ok := d.Exec.(Prefetcher); ok {
			// Another shard's spec is prepared only once claimed (when it
			// runs): most of them its owner runs.
			if next != nil && !st.feed.claims.other(*next) {
				pf.Prefetch(*next)
			}
			for _, j := range early {
				if !st.feed.claims.other(j) {
					pf.Prefetch(j)
				}
			}
		}
		bound := st.race.bound(it.job)
		res := d.Exec.Run(ctx, bound.Spec, bound.Options, func(p profiler.Progress) {
			if st.h.Progress != nil {
				st.mu.Lock()
				st.h.Progress(i, st.feed.claims.toRun(st.n), it.job.Spec, p)
				st.mu.Unlock()
			}
		})
		st.race.note(it.job, res)
		st.mu.Lock()
		res.DeviceOrdinal = d.Ordinal
		st.out--
		st.counts[di].Busy = false
		st.counts[di].Done++
		st.clock.done(di, res)
		failed := (res.Status == profiler.StatusCrashed || res.Status == profiler.StatusTimeout) && ctx.Err() == nil
		if !failed {
			st.fails[di] = 0
		}
		switch {
		case failed && it.failedOn < 0 && (st.live > 1 || st.counts[di].Dropped):
			// Spec or device? Another device tells (this one may have
			// been dropped while the spec ran).
			it.failedOn, it.first = di, res
			st.items = append([]queued{it}, st.items...)
		case it.failedOn >= 0 && it.failedOn != di && !failed:
			st.blame(it.failedOn, it.first.Error)
			st.record(res, i)
		default:
			st.record(res, i)
		}
		st.showDevices()
		st.cond.Broadcast()
	}
}

// take waits for a spec this device may run: any spec but one that failed
// on it, unless it is the only device left. It returns false when the
// device was dropped, the sweep is cancelled, or nothing is left to run.
func (st *devSweep) take(ctx context.Context, di int) (queued, bool) {
	for {
		if st.counts[di].Dropped || ctx.Err() != nil {
			return queued{}, false
		}
		if it, ok := st.tryTake(di); ok {
			return it, true
		}
		if len(st.items) == 0 && st.out == 0 {
			st.drainOnce.Do(func() { close(st.drained) })
			return queued{}, false
		}
		st.cond.Wait()
	}
}

// tryTake is take without waiting (but for the feed to make a job).
//
// A spec that crashed on another device comes first, whatever its shape:
// until it runs elsewhere the failure is counted against nobody, and a
// broken device would go on crashing its shape's specs meanwhile.
//
// Shape affinity: a device takes the next spec of the shape it is on
// (its worker has the inputs, their device copy and the reference), else
// one of the shapes it reserved, else the first spec of a shape no other
// device is on or has reserved, else of a shape another device only
// reserved (it becomes this one's), else any spec (the end of the sweep,
// or fewer shapes than devices). Without it the devices take a shape's specs
// in turn and every worker makes every shape's inputs: N times the host
// work of one device. On moving to a shape, a device reserves the next
// free ones (ReserveAhead) and its worker makes their inputs and
// references, in order, while it measures (see early).
func (st *devSweep) tryTake(di int) (queued, bool) {
	st.refill()
	pick := -1
	for pass := -1; pass < 5 && pick < 0; pass++ {
		for k, it := range st.items {
			if it.failedOn == di && st.live > 1 {
				continue
			}
			shape := it.shape
			if pass == -1 && it.failedOn >= 0 || pass == 0 && shape == st.shapes[di] || pass == 1 && slices.Contains(st.reserved[di], shape) ||
				pass == 2 && !st.claimed(di, shape) || pass == 3 && !st.running(di, shape) || pass == 4 {
				pick = k
				break
			}
		}
	}
	if pick < 0 {
		return queued{}, false
	}
	it := st.items[pick]
	st.items = append(st.items[:pick:pick], st.items[pick+1:]...)
	st.out++
	if shape := it.shape; shape != st.shapes[di] {
		// A shape another device only reserved is now this one's (and
		// its spec is no longer for that device's worker to prepare).
		for dj := range st.reserved {
			if dj != di {
				st.reserved[dj] = slices.DeleteFunc(st.reserved[dj], func(sh string) bool { return sh == shape })
				st.early[dj] = slices.DeleteFunc(st.early[dj], func(j profiler.Job) bool { return jobShape(j) == shape })
			}
		}
		st.shapes[di] = shape
		st.reserve(di)
	}
	return it, true
}

// running says whether a live device other than di is on shape.
func (st *devSweep) running(di int, shape string) bool {
	for dj := range st.shapes {
		if dj != di && !st.counts[dj].Dropped && st.shapes[dj] == shape {
			return true
		}
	}
	return false
}

// ReserveAhead is how many shapes a device reserves beyond the one it is
// on: its worker makes their host work (inputs, reference) one after the
// other while it measures, so a shape whose inputs take longer to make
// than the shape before it takes to measure still finds them made.
const ReserveAhead = 2

// reserve keeps device di's reservations to the ReserveAhead next shapes
// no other device is on or has reserved, and notes the first spec of each
// new one for the worker to prepare. The first free shapes are left to
// the devices that have not taken a spec yet, one each: they are the
// light lead shapes the order put first for them (orderJobs), and a
// device that reserved one would send a later starter to a dear shape
// whose host work nothing hides.
func (st *devSweep) reserve(di int) {
	st.reserved[di] = slices.DeleteFunc(st.reserved[di], func(sh string) bool { return sh == st.shapes[di] })
	leave := 0
	for dj := range st.shapes {
		if dj != di && st.shapes[dj] == "" && len(st.reserved[dj]) == 0 && !st.counts[dj].Dropped {
			leave++
		}
	}
	seen := map[string]bool{}
	for _, it := range st.items {
		if len(st.reserved[di]) >= ReserveAhead {
			return
		}
		shape := it.shape
		if shape == st.shapes[di] || slices.Contains(st.reserved[di], shape) || st.claimed(di, shape) || seen[shape] {
			continue
		}
		if seen[shape] = true; len(seen) <= leave {
			continue
		}
		st.reserved[di] = append(st.reserved[di], shape)
		st.early[di] = append(st.early[di], it.job)
	}
}

// jobShape is what the specs that share inputs and a reference have in
// common (orderJobs groups by it too).
func jobShape(j profiler.Job) string {
	return fmt.Sprintf("%s|seed=%d", j.Spec.ShapeKey(), j.Options.Seed)
}

// claimed says whether a live device other than di is on shape or has
// reserved it.
func (st *devSweep) claimed(di int, shape string) bool {
	for dj := range st.shapes {
		if dj != di && !st.counts[dj].Dropped && (st.shapes[dj] == shape || slices.Contains(st.reserved[dj], shape)) {
			return true
		}
	}
	return false
}

// leaveOut drops device di, whose worker did not start; ended: the sweep
// is over (its start failed as the specs ran out), so nothing goes on.
func (st *devSweep) leaveOut(di int, why error, ended bool) {
	st.counts[di].Dropped = true
	st.leftOut[di] = true
	st.live--
	more := "; the sweep goes on on the other devices"
	switch {
	case ended:
		more = ""
	case st.live == 0:
		more = "; no device is left"
	}
	fmt.Fprintf(st.log, "mltop: device %d left out: its worker did not start: %s%s\n", st.counts[di].Ordinal, profiler.OneLine(strings.TrimSpace(why.Error())), more)
	st.showDevices()
	st.cond.Broadcast()
}

// blame counts a failure against device di and drops it at the limit.
func (st *devSweep) blame(di int, why string) {
	st.fails[di]++
	if st.fails[di] < MaxDeviceFailures || st.counts[di].Dropped {
		return
	}
	st.counts[di].Dropped = true
	st.live--
	c := st.counts[di]
	more := "the sweep goes on on the other devices"
	if st.live == 0 {
		more = "no device is left"
	}
	fmt.Fprintf(st.log, "mltop: device %d (%s) dropped after %d failures in a row (last: %s); %s\n", c.Ordinal, c.Name, st.fails[di], profiler.OneLine(strings.TrimSpace(why)), more)
	st.showDevices()
	st.cond.Broadcast()
}

func (st *devSweep) record(res profiler.Result, i int) {
	st.sum.count(res)
	for _, s := range st.sinks {
		if err := s.Write(res); err != nil && st.sinkErr == nil {
			st.sinkErr = fmt.Errorf("writing result: %w", err)
			st.cancel()
		}
	}
	if st.h.Done != nil {
		st.h.Done(i, st.feed.claims.toRun(st.n), res)
	}
}

func (st *devSweep) showDevices() {
	if st.h.Devices != nil {
		st.h.Devices(append([]DeviceCount(nil), st.counts...))
	}
}

// affinityWindow is how many upcoming specs the devices choose from (see
// tryTake): enough to see the next shapes of a knob sweep.
const affinityWindow = 256

// refill moves jobs from the feed to items until there are enough for
// every live device and two more (so that a device may take one ahead,
// see device), and at least affinityWindow to choose a shape from. The
// feed's producer takes no lock of devSweep's, so waiting for it under mu
// is safe.
func (st *devSweep) refill() {
	for len(st.items) <= max(st.live+1, affinityWindow) {
		j, ok := st.feed.next()
		if !ok {
			return
		}
		st.items = append(st.items, newQueued(j))
	}
}
