package enginetest

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A test family and an in-memory backend, so the engine is tested without
// kernels/ or cpu/. test_scale computes out = a·x with a knob WG that only
// changes the grid, and a flag "broken" that makes the kernel skip the last
// element (which verification must catch), and a flag "drift" whose kernel
// is right on the first launch and adds to its output on every later one
// (state kept across launches, which the check after timing must catch).
type ScaleFamily struct{}

func (ScaleFamily) Name() string { return "test_scale" }
func (ScaleFamily) Doc() string  { return "out = 2·x (engine tests)" }
func (ScaleFamily) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs:  []profiler.Param{{Name: "WG", Values: []int{32, 64, 128}, Default: 64, Doc: "threads per group"}},
		Dims:   []profiler.Param{{Name: "N", Min: 1, Max: 1 << 40, Default: 1000, Doc: "elements"}},
		Flags:  []profiler.FlagParam{{Name: "broken", Doc: "skip the last element"}, {Name: "drift", Doc: "accumulate across launches"}},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}
func (ScaleFamily) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if s.Knobs["WG"] == 128 && s.Dims["N"] == 7 {
		return errors.New("WG=128 with N=7 is rejected by the family's rules (test)")
	}
	return nil
}
func (ScaleFamily) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	n := s.Dims["N"]
	wg := s.Knobs["WG"]
	prog := "scale"
	if s.Flags["broken"] {
		prog = "scale_broken"
	}
	if s.Flags["drift"] {
		prog = "scale_drift"
	}
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "x", Role: profiler.In, Type: s.DType, Elems: int64(n), Init: profiler.InitNormal, Scale: 1},
			{Name: "out", Role: profiler.Out, Type: s.DType, Elems: int64(n), Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{{Name: "scale", Program: profiler.Program{Source: prog, Entry: prog, Macros: []profiler.Macro{{Name: "WG", Value: fmt.Sprint(wg)}}},
			Grid: [3]int{(n + wg - 1) / wg, 1, 1}, Group: [3]int{wg, 1, 1}, Args: []string{"x", "out"},
			Scalars: []profiler.Scalar{profiler.I32Param("n", n)}, TGM: []profiler.TGMItem{{Name: "red_smem", Bytes: wg / 32 * 4}}}},
		FLOPs: float64(n), Bytes: float64(2 * n * s.DType.Size()),
	}, nil
}
func (ScaleFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	x := in["x"]
	rows := profiler.SampleRows(len(x), maxRows, seed)
	c := profiler.Check{Buffer: "out"}
	for _, r := range rows {
		c.Index = append(c.Index, r)
		c.Want = append(c.Want, 2*float64(x[r]))
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(rows), RowsTotal: len(x), Rows: profiler.DescribeRows(rows, len(x), seed)}, nil
}
func (ScaleFamily) Tolerance(d profiler.DType) profiler.Tolerance {
	return profiler.DefaultTolerances[d]
}

var registerOnce sync.Once

func Register() { registerOnce.Do(func() { profiler.Register(ScaleFamily{}) }) }

type MemBuf struct{ b []byte }

func (m *MemBuf) Size() int64 { return int64(len(m.b)) }

type MemKernel struct{ name string }

func (MemKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{MaxThreads: 1024} }

// MemBackend runs the test kernels in Go and reports fixed sample times.
type MemBackend struct {
	Timed       int
	Compiled    int
	Allocs      int // buffers allocated
	FailCompile bool
}

func (b *MemBackend) Info() profiler.DeviceInfo {
	return profiler.DeviceInfo{Backend: "mem", Name: "test device", Units: 4, UnitName: "unit", TGMPerGroup: 32768, TGMPerUnit: 65536,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, SIMDWidth: 32, MemoryBytes: 1 << 30, Timer: "fake",
		PeakFLOPS: map[profiler.DType]float64{profiler.F32: 1e12}, PeakBandwidth: 1e11}
}
func (b *MemBackend) Compile(p profiler.Program) (profiler.Kernel, error) {
	b.Compiled++
	if b.FailCompile {
		return nil, errors.New("error: expected ';' at line 3")
	}
	return MemKernel{p.Source}, nil
}
func (b *MemBackend) Alloc(n int64) (profiler.Buffer, error) {
	b.Allocs++
	return &MemBuf{make([]byte, n)}, nil
}
func (b *MemBackend) Free(profiler.Buffer) {}
func (b *MemBackend) Upload(buf profiler.Buffer, src []byte) error {
	copy(buf.(*MemBuf).b, src)
	return nil
}
func (b *MemBackend) Download(buf profiler.Buffer, dst []byte) error {
	copy(dst, buf.(*MemBuf).b)
	return nil
}

// RangedBackend is MemBackend that reads parts of buffers
// (profiler.RangeDownloader), fills buffers on the "device"
// (profiler.Filler) and copies between them (profiler.Copier), counting
// each.
type RangedBackend struct {
	MemBackend
	RangeBytes, Ranges int
	Fills, Copies      int
}

// Copy copies between buffers and counts the copies (profiler.Copier).
func (b *RangedBackend) Copy(dst, src profiler.Buffer) error {
	d, s := dst.(*MemBuf), src.(*MemBuf)
	if len(d.b) != len(s.b) {
		return fmt.Errorf("copy of %d bytes into %d", len(s.b), len(d.b))
	}
	copy(d.b, s.b)
	b.Copies++
	return nil
}

// Fill sets the buffer's bytes and counts the fills (profiler.Filler).
func (b *RangedBackend) Fill(buf profiler.Buffer, value byte) error {
	for i := range buf.(*MemBuf).b {
		buf.(*MemBuf).b[i] = value
	}
	b.Fills++
	return nil
}

func (b *RangedBackend) DownloadRanges(buf profiler.Buffer, offsets []int64, dsts [][]byte) error {
	m := buf.(*MemBuf)
	if err := profiler.CheckRanges(int64(len(m.b)), offsets, dsts); err != nil {
		return err
	}
	for i, off := range offsets {
		copy(dsts[i], m.b[off:])
		b.RangeBytes += len(dsts[i])
		b.Ranges++
	}
	return nil
}

func (b *MemBackend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		k := l.Kernel.(MemKernel)
		x, out := l.Args[0].(*MemBuf), l.Args[1].(*MemBuf)
		// the element type is found from the sizes: n elements of 2 or 4
		// bytes (and the runner's guard past them)
		n := int(l.Dispatch.Scalars[0].I)
		dt := profiler.F32
		if len(x.b)-run.GuardBytes == 2*n || len(x.b) == 2*n {
			dt = profiler.BF16
		}
		vals := make([]float32, n)
		dt.Decode(x.b, vals)
		last := n
		if k.name == "scale_broken" {
			last = n - 1
		}
		res := make([]float32, n)
		dt.Decode(out.b, res)
		for i := 0; i < last; i++ {
			if k.name == "scale_drift" && !math.IsNaN(float64(res[i])) {
				res[i] = dt.Round(res[i] + 2*vals[i])
				continue
			}
			res[i] = dt.Round(2 * vals[i])
		}
		dt.Encode(out.b, res)
	}
	return nil
}

// Time has no cache to prepare: like a backend with one flush, it reports
// dirty as CacheFlush.
func (b *MemBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if err := b.Run(ls); err != nil {
		return profiler.Timing{}, err
	}
	t := profiler.Timing{Timer: "fake"}
	if mode == profiler.CacheDirty {
		t.Cache = profiler.CacheFlush
	}
	for i := 0; i < reps; i++ {
		b.Timed++
		// 1000 ns ± 0.1%: quiet enough to stop on the noise rule
		t.Samples = append(t.Samples, []float64{1000 + float64(b.Timed%3)})
	}
	return t, nil
}
func (b *MemBackend) Occupancy(l profiler.Launch) profiler.Occupancy {
	return run.EstimateOccupancy(b.Info(), l.Dispatch, l.Kernel.Attrs())
}
func (b *MemBackend) Close() error { return nil }

// QuickOptions measure for microseconds: enough for engine tests.
func QuickOptions() profiler.Options {
	o := profiler.DefaultOptions()
	o.Stop = profiler.StopRule{Noise: 0.01, MinSamples: 10, MinTime: 1e-6, MaxTime: 1}
	o.Warmup = 1e-6
	return o
}
