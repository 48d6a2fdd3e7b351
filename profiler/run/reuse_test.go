package run_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// countingBackend counts device allocations and frees.
type countingBackend struct {
	enginetest.MemBackend
	allocs, frees int
	live          map[profiler.Buffer]bool
}

func (b *countingBackend) Alloc(n int64) (profiler.Buffer, error) {
	buf, err := b.MemBackend.Alloc(n)
	b.allocs++
	if b.live == nil {
		b.live = map[profiler.Buffer]bool{}
	}
	b.live[buf] = true
	return buf, err
}

func (b *countingBackend) Free(buf profiler.Buffer) {
	if !b.live[buf] {
		panic("free of a buffer that is not live")
	}
	delete(b.live, buf)
	b.frees++
}

func scaleSpec(n, wg int, flags ...string) profiler.Spec {
	s := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}
	for _, f := range flags {
		if s.Flags == nil {
			s.Flags = map[string]bool{}
		}
		s.Flags[f] = true
	}
	return s
}

// Specs of one shape reuse the previous spec's device buffers; a new
// shape frees the old ones first; Close frees what is left.
func TestRunnerReusesBuffers(t *testing.T) {
	b := &countingBackend{}
	r := run.NewRunner(b)
	o := enginetest.QuickOptions()
	for _, wg := range []int{32, 64, 128} {
		if res := r.Run(context.Background(), scaleSpec(256, wg), o, nil); res.Status != profiler.StatusOK {
			t.Fatalf("WG=%d: %s %s", wg, res.Status, res.Error)
		}
	}
	if b.allocs != 2 || b.frees != 0 {
		t.Errorf("3 specs of one shape: %d allocs, %d frees; want 2 (x, out) and 0", b.allocs, b.frees)
	}
	r.Run(context.Background(), scaleSpec(512, 32), o, nil)
	if b.allocs != 4 || b.frees != 2 {
		t.Errorf("a new shape: %d allocs, %d frees; want 4 and 2 (the old pair freed)", b.allocs, b.frees)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(b.live) != 0 {
		t.Errorf("%d buffers live after Close", len(b.live))
	}
}

// A reused output buffer is poisoned again: a kernel that skips an element
// is caught even when the previous spec wrote the right value there.
func TestReusedOutputIsPoisonedAgain(t *testing.T) {
	b := &countingBackend{}
	r := run.NewRunner(b)
	defer r.Close()
	o := enginetest.QuickOptions()
	if res := r.Run(context.Background(), scaleSpec(256, 32), o, nil); res.Status != profiler.StatusOK {
		t.Fatalf("%s %s", res.Status, res.Error)
	}
	res := r.Run(context.Background(), scaleSpec(256, 32, "broken"), o, nil)
	if res.Status != profiler.StatusMismatch {
		t.Errorf("broken kernel on a reused buffer: %s, want mismatch (the last element must still be poison)", res.Status)
	}
	if b.allocs != 2 {
		t.Errorf("%d allocs: the buffers were not reused, so the test proves nothing", b.allocs)
	}
}

// Inputs of a few shapes stay cached: a sweep alternating two shapes
// generates each once.
func TestInputCacheKeepsSeveralShapes(t *testing.T) {
	r := run.NewRunner(&enginetest.MemBackend{})
	defer r.Close()
	o := enginetest.QuickOptions()
	for i, n := range []int{256, 512, 256, 512, 256} {
		res := r.Run(context.Background(), scaleSpec(n, 32), o, nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("%s %s", res.Status, res.Error)
		}
		if gen := res.Phases.Inputs > 0; gen != (i < 2) {
			t.Errorf("spec %d (N=%d): inputs generated %v, want %v", i, n, gen, i < 2)
		}
	}
}

// placementBackend records the device buffers each timed launch got.
type placementBackend struct {
	countingBackend
	args [][]profiler.Buffer
}

func (b *placementBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	for _, l := range ls {
		b.args = append(b.args, l.Args)
	}
	return b.countingBackend.Time(ls, reps, mode)
}

// A spec's buffers keep their device memory from spec to spec: a kernel's
// time depends on where its buffers lie, so the same names must get the
// same buffers (x and out are the same size, which Go's map order used to
// swap at random).
func TestRunnerKeepsBufferPlacement(t *testing.T) {
	b := &placementBackend{}
	r := run.NewRunner(b)
	defer r.Close()
	o := enginetest.QuickOptions()
	for i := range 12 {
		wg := []int{32, 64, 128}[i%3]
		if res := r.Run(context.Background(), scaleSpec(256, wg), o, nil); res.Status != profiler.StatusOK {
			t.Fatalf("WG=%d: %s %s", wg, res.Status, res.Error)
		}
	}
	if len(b.args) == 0 {
		t.Fatal("no timed launches recorded")
	}
	first := b.args[0]
	for i, args := range b.args {
		for j := range args {
			if args[j] != first[j] {
				t.Fatalf("timed launch %d: argument %d is another device buffer than in the first spec's launch: the placement moved", i, j)
			}
		}
	}
}
