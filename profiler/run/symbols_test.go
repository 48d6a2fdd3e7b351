package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// symScaleFamily is test_scale whose factor is a module global (a CUDA
// __constant__ float c_scale[1]) filled from the buffer "scale": the
// reference multiplies by the value it receives as an input.
type symScaleFamily struct{ enginetest.ScaleFamily }

func (symScaleFamily) Name() string { return "test_symscale" }
func (f symScaleFamily) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	p, err := f.ScaleFamily.Plan(s, dev)
	if err != nil {
		return nil, err
	}
	p.Buffers = append(p.Buffers, profiler.BufferSpec{Name: "scale", Role: profiler.In, Type: profiler.F32, Elems: 1,
		Init: profiler.InitUniform, Lo: 2.5, Hi: 3.5, Symbol: "c_scale"})
	return p, nil
}
func (symScaleFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	x, a := in["x"], float64(in["scale"][0])
	c := profiler.Check{Buffer: "out"}
	for i := range x {
		c.Index = append(c.Index, i)
		c.Want = append(c.Want, a*float64(x[i]))
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(x), RowsTotal: len(x), Rows: "all"}, nil
}

// symBackend is MemBackend with one module global, c_scale of declared
// bytes, that its kernels multiply by (zero until written, as a
// __constant__ the host never fills).
type symBackend struct {
	enginetest.MemBackend
	declared int64
	global   []byte
	writes   int
}

func (b *symBackend) WriteSymbol(k profiler.Kernel, symbol string, src profiler.Buffer) error {
	if symbol != "c_scale" {
		return &profiler.SymbolError{Symbol: symbol, Msg: "the module has no such global"}
	}
	if src.Size() != b.declared {
		return &profiler.SymbolError{Symbol: symbol, Msg: "declared with another size"}
	}
	b.global = make([]byte, src.Size())
	b.writes++
	return b.Download(src, b.global)
}

func (b *symBackend) Run(ls []profiler.Launch) error {
	a := make([]float32, 1)
	if len(b.global) >= 4 {
		profiler.F32.Decode(b.global[:4], a)
	}
	for _, l := range ls {
		x, out := l.Args[0].(*enginetest.MemBuf), l.Args[1].(*enginetest.MemBuf)
		n := int(l.Dispatch.Scalars[0].I)
		vals := make([]float32, n)
		profiler.F32.Decode(bytesOf(b, x), vals)
		for i := range vals {
			vals[i] *= a[0]
		}
		raw := make([]byte, 4*n)
		profiler.F32.Encode(raw, vals)
		if err := b.Upload(out, raw); err != nil {
			return err
		}
	}
	return nil
}

func (b *symBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if err := b.Run(ls); err != nil {
		return profiler.Timing{}, err
	}
	t := profiler.Timing{Timer: "fake", Cache: profiler.CacheFlush}
	for i := range reps {
		t.Samples = append(t.Samples, []float64{1000 + float64(i%3)})
	}
	return t, nil
}

func bytesOf(b *symBackend, buf profiler.Buffer) []byte {
	raw := make([]byte, buf.Size())
	_ = b.Download(buf, raw)
	return raw
}

var symScaleOnce sync.Once

func runSymScale(t *testing.T, b profiler.Backend, seed uint64) profiler.Result {
	t.Helper()
	symScaleOnce.Do(func() { profiler.Register(symScaleFamily{}) })
	opt := enginetest.QuickOptions()
	opt.Seed = seed
	return run.NewRunner(b).Run(context.Background(), profiler.Spec{Kernel: "test_symscale", DType: profiler.F32, Dims: map[string]int{"N": 256}}, opt, nil)
}

func TestSymbolBufferFillsTheGlobalOncePerSpec(t *testing.T) {
	b := &symBackend{declared: 4}
	r := run.NewRunner(b)
	symScaleOnce.Do(func() { profiler.Register(symScaleFamily{}) })
	for i, seed := range []uint64{1, 2} {
		opt := enginetest.QuickOptions()
		opt.Seed = seed
		res := r.Run(context.Background(), profiler.Spec{Kernel: "test_symscale", DType: profiler.F32, Dims: map[string]int{"N": 256}}, opt, nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("seed %d: %s %s", seed, res.Status, res.Error)
		}
		if b.writes != i+1 {
			t.Errorf("after %d specs the global was written %d times, want once per spec", i+1, b.writes)
		}
	}
}

func TestSymbolBufferErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		backend profiler.Backend
		want    string
	}{
		{"size differs", &symBackend{declared: 8}, "dispatch scale: buffer scale (symbol c_scale): declared with another size"},
		{"no module globals", &enginetest.MemBackend{}, "the mem backend has no module globals to fill"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runSymScale(t, c.backend, 1)
			if res.Status != profiler.StatusInvalid || !strings.Contains(res.Error, c.want) {
				t.Errorf("status %s error %q, want invalid with %q", res.Status, res.Error, c.want)
			}
		})
	}
}
