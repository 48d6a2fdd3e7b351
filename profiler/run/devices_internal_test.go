package run

import (
	"context"
	"slices"
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
		reserved: make([][]string, 2),
		early:    make([][]profiler.Job, 2),
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

// A device reserves the ReserveAhead shapes after the other devices'
// leads, not the next free ones: the order puts one light lead shape per
// device first, and a device that started later would otherwise begin on
// a dear shape whose host work nothing hides. Moving on to a reserved
// shape tops the reservations up, and only the new one is handed to the
// worker to prepare.
func TestReserveLeavesTheLeadsToDevicesNotStarted(t *testing.T) {
	if ReserveAhead != 2 {
		t.Fatalf("the cases below are for ReserveAhead 2, not %d", ReserveAhead)
	}
	shape := func(i, wg int) profiler.Job { return shapeJob(1000*(i+1), wg) }
	shapesOf := func(is ...int) (out []string) {
		for _, i := range is {
			out = append(out, jobShape(shape(i, 32)))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		started []bool // which of 3 devices have taken a spec before device 0 moves
		want    []int  // the shapes device 0 reserves (0: lead of device 0, 1 and 2 the others', 3… the rest)
	}{
		{"the other two not started", []bool{false, false, false}, []int{3, 4}},
		{"one other started", []bool{false, true, false}, []int{2, 3}},
		{"all started", []bool{false, true, true}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFeed(context.Background(), sliceSource(nil), nil)
			defer f.stop()
			st := &devSweep{feed: f, live: 3, shapes: make([]string, 3), reserved: make([][]string, 3),
				early: make([][]profiler.Job, 3), counts: make([]DeviceCount, 3), fails: make([]int, 3)}
			for i := range 6 {
				st.items = append(st.items, newQueued(shape(i, 32)), newQueued(shape(i, 64)))
			}
			// devices already started are on shapes of their own
			for dj, on := range tc.started {
				if on {
					st.shapes[dj] = jobShape(shapeJob(99000+dj, 32))
				}
			}
			if _, ok := st.tryTake(0); !ok {
				t.Fatal("device 0 took nothing")
			}
			if got, want := st.reserved[0], shapesOf(tc.want...); !slices.Equal(got, want) {
				t.Errorf("device 0 reserved %q, want %q", got, want)
			}
			var early []string
			for _, j := range st.early[0] {
				early = append(early, jobShape(j))
			}
			if !slices.Equal(early, st.reserved[0]) {
				t.Errorf("specs to prepare ahead of shapes %q, want the reserved %q", early, st.reserved[0])
			}
		})
	}
	t.Run("taking a shape another device only reserved", func(t *testing.T) {
		f := startFeed(context.Background(), sliceSource(nil), nil)
		defer f.stop()
		st := &devSweep{feed: f, live: 2, shapes: []string{jobShape(shape(0, 32)), jobShape(shape(9, 32))},
			reserved: [][]string{nil, shapesOf(1, 2)}, early: [][]profiler.Job{nil, {shape(1, 32), shape(2, 32)}},
			counts: make([]DeviceCount, 2), fails: make([]int, 2)}
		st.items = []queued{newQueued(shape(1, 32)), newQueued(shape(2, 32))}
		it, ok := st.tryTake(0)
		if !ok || jobShape(it.job) != shapesOf(1)[0] {
			t.Fatalf("device 0 took %v", it.job.Spec)
		}
		if got := st.reserved[1]; !slices.Equal(got, shapesOf(2)) {
			t.Errorf("device 1 still reserves %q", got)
		}
		if len(st.early[1]) != 1 || jobShape(st.early[1][0]) != shapesOf(2)[0] {
			t.Errorf("device 1's worker would still prepare the taken shape: %d specs", len(st.early[1]))
		}
	})
	t.Run("moving to a reserved shape", func(t *testing.T) {
		f := startFeed(context.Background(), sliceSource(nil), nil)
		defer f.stop()
		st := &devSweep{feed: f, live: 1, shapes: make([]string, 1), reserved: make([][]string, 1),
			early: make([][]profiler.Job, 1), counts: make([]DeviceCount, 1), fails: make([]int, 1)}
		for i := range 5 {
			st.items = append(st.items, newQueued(shape(i, 32)))
		}
		st.tryTake(0) // shape 0; reserves 1 and 2
		st.early[0] = nil
		st.tryTake(0) // shape 1
		if got, want := st.reserved[0], shapesOf(2, 3); !slices.Equal(got, want) {
			t.Errorf("reserved %q, want %q", got, want)
		}
		if len(st.early[0]) != 1 || jobShape(st.early[0][0]) != shapesOf(3)[0] {
			t.Errorf("handed %d specs to prepare, want the one of the newly reserved shape", len(st.early[0]))
		}
	})
}
