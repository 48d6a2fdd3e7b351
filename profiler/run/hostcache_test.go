package run_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Two workers of a sweep (two Runners) sharing a directory: the first
// makes the inputs and the reference of a shape, the second reads both
// (references computed once per host), and both give the same verdict.
// A shape the second has not seen is made there. Without a directory
// nothing is shared.
func TestShareHostWorkMakesEachShapeOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := run.NewRunner(&enginetest.MemBackend{}), run.NewRunner(&enginetest.MemBackend{})
	a.ShareHostWork(dir, 2)
	b.ShareHostWork(dir, 2)
	opt := enginetest.QuickOptions()
	spec := scaleSpec(5000, 32)
	ra := a.Run(context.Background(), spec, opt, nil)
	rb := b.Run(context.Background(), scaleSpec(5000, 64), opt, nil) // another knob, the same shape
	if ra.Status != profiler.StatusOK || rb.Status != profiler.StatusOK {
		t.Fatalf("statuses %s %s: %s %s", ra.Status, rb.Status, ra.Error, rb.Error)
	}
	if made, loaded := a.SharedCounts(); made != 1 || loaded != 0 {
		t.Errorf("first worker: made %d, read %d; want the reference made (inputs are not shared), nothing read", made, loaded)
	}
	if made, loaded := b.SharedCounts(); made != 0 || loaded != 1 {
		t.Errorf("second worker: made %d, read %d; want the reference read", made, loaded)
	}
	if !reflect.DeepEqual(ra.Verdict, rb.Verdict) {
		t.Errorf("verdicts differ:\n%+v\n%+v", ra.Verdict, rb.Verdict)
	}
	b.Run(context.Background(), scaleSpec(6000, 64), opt, nil)
	if made, loaded := b.SharedCounts(); made != 1 || loaded != 1 {
		t.Errorf("second worker after a new shape: made %d, read %d; want 1 and 1", made, loaded)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 {
		t.Errorf("shared files %v, want 2 (one reference per shape), no lock or temporary left", files)
	}

	solo := run.NewRunner(&enginetest.MemBackend{})
	solo.ShareHostWork("", 0)
	solo.Run(context.Background(), spec, opt, nil)
	if made, loaded := solo.SharedCounts(); made != 0 || loaded != 0 {
		t.Errorf("no directory: made %d, read %d", made, loaded)
	}
}

// A shared file that is torn or corrupt is made again, not trusted.
func TestShareHostWorkRemakesACorruptFile(t *testing.T) {
	dir := t.TempDir()
	a := run.NewRunner(&enginetest.MemBackend{})
	a.ShareHostWork(dir, 0)
	opt := enginetest.QuickOptions()
	want := a.Run(context.Background(), scaleSpec(3000, 32), opt, nil)
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		os.WriteFile(f, []byte("torn"), 0o644)
	}
	b := run.NewRunner(&enginetest.MemBackend{})
	b.ShareHostWork(dir, 0)
	got := b.Run(context.Background(), scaleSpec(3000, 32), opt, nil)
	if made, loaded := b.SharedCounts(); made != 1 || loaded != 0 {
		t.Errorf("after corrupting the file: made %d, read %d; want the reference made again", made, loaded)
	}
	if got.Status != profiler.StatusOK || !reflect.DeepEqual(got.Verdict, want.Verdict) {
		t.Errorf("status %s, verdict %+v; want %+v", got.Status, got.Verdict, want.Verdict)
	}
}

// A sweep of 3 shapes × 3 knobs on two devices (two Runners sharing a
// directory, as two workers do): each shape's input and reference are
// made once on the host, whichever device runs its specs.
func TestSweepOnDevicesMakesEachShapeOnce(t *testing.T) {
	dir := t.TempDir()
	var runners []*run.Runner
	var devs []run.Device
	for i := range 2 {
		r := run.NewRunner(&enginetest.MemBackend{})
		r.ShareHostWork(dir, 1)
		runners = append(runners, r)
		devs = append(devs, run.Device{Ordinal: i, Exec: r})
	}
	var jobs []profiler.Job
	for _, wg := range []int{32, 64, 128} {
		for _, n := range []int{2000, 4000, 8000} {
			jobs = append(jobs, profiler.Job{Spec: scaleSpec(n, wg), Options: enginetest.QuickOptions()})
		}
	}
	sink := &memSink{}
	sum, err := run.JobsOnDevices(context.Background(), devs, jobs, nil, []profiler.Sink{sink}, run.Hooks{}, io.Discard)
	if err != nil || sum.ByStatus[profiler.StatusOK] != len(jobs) {
		t.Fatalf("%+v %v", sum, err)
	}
	made, loaded := int64(0), int64(0)
	for _, r := range runners {
		m, l := r.SharedCounts()
		made, loaded = made+m, loaded+l
	}
	if made != 3 {
		t.Errorf("made %d shared files (read %d), want 3: one reference per shape, once each", made, loaded)
	}
}
