package profiler

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
)

// A test family and an in-memory backend, so the engine is tested without
// kernels/ or cpu/. test_scale computes out = a·x with a knob WG that only
// changes the grid, and a flag "broken" that makes the kernel skip the last
// element (which verification must catch), and a flag "drift" whose kernel
// is right on the first launch and adds to its output on every later one
// (state kept across launches, which the check after timing must catch).
type scaleFamily struct{}

func (scaleFamily) Name() string { return "test_scale" }
func (scaleFamily) Doc() string  { return "out = 2·x (engine tests)" }
func (scaleFamily) Schema() Schema {
	return Schema{
		Knobs:  []Param{{Name: "WG", Values: []int{32, 64, 128}, Default: 64, Doc: "threads per group"}},
		Dims:   []Param{{Name: "N", Min: 1, Max: 1 << 40, Default: 1000, Doc: "elements"}},
		Flags:  []FlagParam{{Name: "broken", Doc: "skip the last element"}, {Name: "drift", Doc: "accumulate across launches"}},
		DTypes: []DType{F32, F16, BF16},
	}
}
func (scaleFamily) Validate(s Spec, dev DeviceInfo) error {
	if s.Knobs["WG"] == 128 && s.Dims["N"] == 7 {
		return errors.New("WG=128 with N=7 is rejected by the family's rules (test)")
	}
	return nil
}
func (scaleFamily) Plan(s Spec, dev DeviceInfo) (*Plan, error) {
	n := s.Dims["N"]
	wg := s.Knobs["WG"]
	prog := "scale"
	if s.Flags["broken"] {
		prog = "scale_broken"
	}
	if s.Flags["drift"] {
		prog = "scale_drift"
	}
	return &Plan{
		Buffers: []BufferSpec{
			{Name: "x", Role: In, Type: s.DType, Elems: int64(n), Init: InitNormal, Scale: 1},
			{Name: "out", Role: Out, Type: s.DType, Elems: int64(n), Init: InitPoison},
		},
		Dispatches: []Dispatch{{Name: "scale", Program: Program{Source: prog, Entry: prog, Macros: []Macro{{"WG", fmt.Sprint(wg)}}},
			Grid: [3]int{(n + wg - 1) / wg, 1, 1}, Group: [3]int{wg, 1, 1}, Args: []string{"x", "out"},
			Scalars: []Scalar{I32Param("n", n)}, TGM: []TGMItem{{Name: "red_smem", Bytes: wg / 32 * 4}}}},
		FLOPs: float64(n), Bytes: float64(2 * n * s.DType.Size()),
	}, nil
}
func (scaleFamily) Reference(s Spec, in Inputs, maxRows int, seed uint64) (*Reference, error) {
	x := in["x"]
	rows := SampleRows(len(x), maxRows, seed)
	c := Check{Buffer: "out"}
	for _, r := range rows {
		c.Index = append(c.Index, r)
		c.Want = append(c.Want, 2*float64(x[r]))
	}
	return &Reference{Checks: []Check{c}, RowsChecked: len(rows), RowsTotal: len(x), Rows: DescribeRows(rows, len(x), seed)}, nil
}
func (scaleFamily) Tolerance(d DType) Tolerance { return DefaultTolerances[d] }

var registerOnce sync.Once

func registerTestFamily() { registerOnce.Do(func() { Register(scaleFamily{}) }) }

type memBuf struct{ b []byte }

func (m *memBuf) Size() int64 { return int64(len(m.b)) }

type memKernel struct{ name string }

func (memKernel) Attrs() KernelAttrs { return KernelAttrs{MaxThreads: 1024} }

// memBackend runs the test kernels in Go and reports fixed sample times.
type memBackend struct {
	timed    int
	compiled int
	failComp bool
}

func (b *memBackend) Info() DeviceInfo {
	return DeviceInfo{Backend: "mem", Name: "test device", Units: 4, UnitName: "unit", TGMPerGroup: 32768, TGMPerUnit: 65536,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, SIMDWidth: 32, MemoryBytes: 1 << 30, Timer: "fake",
		PeakFLOPS: map[DType]float64{F32: 1e12}, PeakBandwidth: 1e11}
}
func (b *memBackend) Compile(p Program) (Kernel, error) {
	b.compiled++
	if b.failComp {
		return nil, errors.New("error: expected ';' at line 3")
	}
	return memKernel{p.Source}, nil
}
func (b *memBackend) Alloc(n int64) (Buffer, error) { return &memBuf{make([]byte, n)}, nil }
func (b *memBackend) Free(Buffer)                   {}
func (b *memBackend) Upload(buf Buffer, src []byte) error {
	copy(buf.(*memBuf).b, src)
	return nil
}
func (b *memBackend) Download(buf Buffer, dst []byte) error {
	copy(dst, buf.(*memBuf).b)
	return nil
}
func (b *memBackend) Run(ls []Launch) error {
	for _, l := range ls {
		k := l.Kernel.(memKernel)
		x, out := l.Args[0].(*memBuf), l.Args[1].(*memBuf)
		// the element type is found from the sizes: n elements of 2 or 4 bytes
		n := int(l.Dispatch.Scalars[0].I)
		dt := F32
		if len(x.b) == 2*n {
			dt = BF16
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
func (b *memBackend) Time(ls []Launch, reps int, cold bool) (Timing, error) {
	if err := b.Run(ls); err != nil {
		return Timing{}, err
	}
	t := Timing{Timer: "fake"}
	for i := 0; i < reps; i++ {
		b.timed++
		// 1000 ns ± 0.1%: quiet enough to stop on the noise rule
		t.Samples = append(t.Samples, []float64{1000 + float64(b.timed%3)})
	}
	return t, nil
}
func (b *memBackend) Occupancy(l Launch) Occupancy {
	return EstimateOccupancy(b.Info(), l.Dispatch, l.Kernel.Attrs())
}
func (b *memBackend) Close() error { return nil }

func TestMain(m *testing.M) {
	registerTestFamily()
	m.Run()
}
