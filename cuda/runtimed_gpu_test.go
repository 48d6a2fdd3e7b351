//go:build linux

package cuda

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The runner's verification run goes through RunTimed: a build without
// it fails here, on a machine without a GPU too.
var _ profiler.RunTimer = (*backend)(nil)

// RunTimed runs its launches as Run does and returns the span of the
// events around them; the runner puts it in Phases.VerifyGPU, inside
// verify; the events it shares with Time still time a loop after it.
func TestRunTimedOnGPU(t *testing.T) {
	b := openOrSkip(t)
	buf, err := b.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(buf)
	ones := make([]byte, 1<<20)
	for i := range ones {
		ones[i] = 1
	}
	if err := b.Upload(buf, ones); err != nil {
		t.Fatal(err)
	}
	zero := []profiler.Launch{{Dispatch: &profiler.Dispatch{Name: "zero", Zero: "X"}, Zero: buf}}
	sec, err := b.RunTimed(zero)
	if err != nil || sec <= 0 {
		t.Fatalf("RunTimed: %g s, %v; want a positive span", sec, err)
	}
	got := make([]byte, 1<<20)
	if err := b.Download(buf, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("byte %d = %d after the zero fill RunTimed ran", i, v)
		}
	}
	if tm, err := b.Time(zero, 3, profiler.CacheHot); err != nil || len(tm.Samples) != 3 {
		t.Fatalf("Time after RunTimed: %v, %d samples", err, len(tm.Samples))
	}

	r := run.NewRunner(b)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 1024, "cols": 4096}}
	res := r.Run(context.Background(), s, quick(), nil)
	if res.Status != profiler.StatusOK || res.Phases == nil {
		t.Fatalf("%s: %s (%s)", s, res.Status, res.Error)
	}
	p := res.Phases
	t.Logf("verify %.3f ms, of it the kernel's run %.3f ms; median %.3f ms", 1e3*p.Verify, 1e3*p.VerifyGPU, res.Stats.Median/1e6)
	if p.VerifyGPU <= 0 || p.VerifyGPU > p.Verify {
		t.Errorf("verify_gpu %g s with verify %g s: want a part of verify", p.VerifyGPU, p.Verify)
	}
}
