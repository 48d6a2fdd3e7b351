//go:build linux

package cuda

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The cold flush reads its buffer and writes nothing (so the L2 is left
// clean); the dirty flush writes it; each Result names its mode.
func TestFlushModesOnGPU(t *testing.T) {
	b := openOrSkip(t)
	if b.flush == nil {
		t.Skip("the driver reports no L2 size: no flush buffer")
	}
	r := run.NewRunner(b)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 1024, "cols": 4096}}
	head := func() []byte {
		got := make([]byte, 1<<16)
		if err := b.Download(b.flush, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, mode := range []profiler.CacheMode{profiler.CacheCold, profiler.CacheDirty, profiler.CacheHot} {
		if mode == profiler.CacheCold {
			// zero the buffer again after any earlier dirty run
			if err := b.do(func() error {
				if err := b.check(b.drv.call("cuMemsetD8Async", b.drv.cuMemsetD8Async, uintptr(b.flush.ptr), 0, uintptr(b.flush.size), b.stream)); err != nil {
					return err
				}
				return b.check(b.drv.call("cuStreamSynchronize", b.drv.cuStreamSynchronize, b.stream))
			}); err != nil {
				t.Fatal(err)
			}
		}
		o := quick()
		o.Cache = mode
		res := r.Run(context.Background(), s, o, nil)
		if res.Status != profiler.StatusOK || res.Cache != mode || res.Stats.N == 0 {
			t.Fatalf("%s: status %s cache %q n %d: %s", mode, res.Status, res.Cache, res.Stats.N, res.Error)
		}
		t.Logf("softmax_bwd f32 1024×4096, cache %s: median %.1f µs", mode, res.Stats.Median/1e3)
		h := head()
		nonzero := 0
		for _, v := range h {
			if v != 0 {
				nonzero++
			}
		}
		switch mode {
		case profiler.CacheCold:
			if nonzero != 0 {
				t.Errorf("the cold flush wrote %d of the first %d bytes of its buffer: it must only read", nonzero, len(h))
			}
		case profiler.CacheDirty:
			if nonzero != len(h) {
				t.Errorf("the dirty flush left %d of the first %d bytes zero", len(h)-nonzero, len(h))
			}
		}
	}
}
