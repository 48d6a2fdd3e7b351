package run

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func shapeJob(n, wg int) profiler.Job {
	return profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32,
		Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}}
}

// A spec that crashed on one device is the next spec another device takes,
// whatever shape either is on: until it runs elsewhere nobody knows whether
// the device or the spec is at fault, and a broken device keeps crashing
// the specs of its shape (none of them counted against it) meanwhile.
func TestTryTakeRunsACrashedSpecElsewhereFirst(t *testing.T) {
	f := startFeed(context.Background(), sliceSource(nil), nil)
	defer f.stop()
	onA, onB := shapeJob(1000, 32), shapeJob(2000, 32)
	st := &devSweep{
		feed:     f,
		live:     2,
		shapes:   []string{jobShape(onA), jobShape(onB)},
		reserved: []string{"", ""},
		early:    make([]*profiler.Job, 2),
		counts:   make([]DeviceCount, 2),
		fails:    make([]int, 2),
		items:    []queued{failedQueued(onB, 1), newQueued(shapeJob(1000, 64)), newQueued(shapeJob(2000, 64))},
	}
	it, ok := st.tryTake(0)
	if !ok || it.failedOn != 1 || it.job.Spec.Key() != onB.Spec.Key() {
		t.Fatalf("device 0 took %s (failed on %d): want the spec that crashed on device 1", it.job.Spec.Key(), it.failedOn)
	}
	// the device that crashed it does not take it back while another is live
	st.items = append([]queued{failedQueued(onB, 1)}, st.items...)
	if it, _ := st.tryTake(1); it.failedOn == 1 {
		t.Error("device 1 took back the spec that crashed on it")
	}
}

// failedQueued is j queued again after it crashed on device di.
func failedQueued(j profiler.Job, di int) queued {
	q := newQueued(j)
	q.failedOn = di
	return q
}
