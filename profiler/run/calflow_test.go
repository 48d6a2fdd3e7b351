package run_test

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// calKernel is a calibration micro-kernel run in Go by calBackend; broken
// variants do less than their name says.
type calKernel string

func (calKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{MaxThreads: 1024} }

type calBuf struct{ b []byte }

func (m *calBuf) Size() int64 { return int64(len(m.b)) }

// calBackend runs calKernels and times every launch at ns per sample,
// recording the iteration counts it was given.
type calBackend struct {
	ns    float64
	iters []int
}

func (b *calBackend) Info() profiler.DeviceInfo { return profiler.DeviceInfo{} }
func (b *calBackend) Compile(p profiler.Program) (profiler.Kernel, error) {
	return calKernel(p.Entry), nil
}
func (b *calBackend) Alloc(n int64) (profiler.Buffer, error) { return &calBuf{make([]byte, n)}, nil }
func (b *calBackend) Free(profiler.Buffer)                   {}
func (b *calBackend) Upload(buf profiler.Buffer, src []byte) error {
	copy(buf.(*calBuf).b, src)
	return nil
}
func (b *calBackend) Download(buf profiler.Buffer, dst []byte) error {
	copy(dst, buf.(*calBuf).b)
	return nil
}
func (b *calBackend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		out := l.Args[len(l.Args)-1].(*calBuf).b
		switch k := l.Kernel.(calKernel); k {
		case "cal_fill":
			for i := range out {
				out[i] = byte(i | 1)
			}
		case "cal_fill_nothing", "cal_copy_nothing":
		case "cal_copy":
			copy(out, l.Args[0].(*calBuf).b)
		case "cal_copy_half":
			copy(out[:len(out)/2], l.Args[0].(*calBuf).b)
		case "cal_fma", "cal_fma_zero", "cal_fma_nan":
			b.iters = append(b.iters, int(l.Dispatch.Scalars[0].I))
			v := map[calKernel]float32{"cal_fma": 2, "cal_fma_zero": 0, "cal_fma_nan": float32(math.NaN())}[k]
			for i := 0; i+4 <= len(out); i += 4 {
				binary.LittleEndian.PutUint32(out[i:], math.Float32bits(v))
			}
		default:
			return errors.New("no kernel " + string(k))
		}
	}
	return nil
}
func (b *calBackend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	if err := b.Run(ls); err != nil {
		return profiler.Timing{}, err
	}
	t := profiler.Timing{}
	for range reps {
		t.Samples = append(t.Samples, []float64{b.ns})
	}
	return t, nil
}
func (b *calBackend) Occupancy(profiler.Launch) profiler.Occupancy { return profiler.Occupancy{} }
func (b *calBackend) Close() error                                 { return nil }

func TestCalibrateCopy(t *testing.T) {
	info := profiler.DeviceInfo{PeakBandwidth: 4e12, CacheBytes: 1 << 20}
	shape := run.CalShape{Groups: 8, Threads: 256, GroupWord: "blocks", CacheWord: "L2"}
	for _, c := range []struct {
		fill, copy string
		bytes      int64
		err        string // "" for a good calibration
	}{
		{"cal_fill", "cal_copy", 4 << 20, ""},
		{"cal_fill", "cal_copy", 4096, ""}, // small: compared whole
		{"cal_fill", "cal_copy_nothing", 4 << 20, "cal_copy did not copy its source"},
		{"cal_fill", "cal_copy_half", 64 << 10, "cal_copy did not copy its source"},
		{"cal_fill_nothing", "cal_copy", 4 << 20, "cal_fill did not fill"},
	} {
		b := &calBackend{ns: 1e6}
		bw, detail, err := run.CalibrateCopy(b, info, shape, run.CalCopy{Fill: calKernel(c.fill), Copy: calKernel(c.copy), Bytes: c.bytes, Reps: 3})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s + %s: error %v, want one saying %q", c.fill, c.copy, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s + %s: %v", c.fill, c.copy, err)
		}
		// bytes read + written in 1 ms
		if want := 2 * float64(c.bytes) / 1e-3; math.Abs(bw-want) > 1e-9*want {
			t.Errorf("%d bytes in 1 ms: %g B/s, want %g", c.bytes, bw, want)
		}
		for _, w := range []string{"8 blocks × 256 threads", "best 1.000 ms of 3", "× L2"} {
			if !strings.Contains(detail, w) {
				t.Errorf("detail %q lacks %q", detail, w)
			}
		}
	}
}

func TestCalibrateRate(t *testing.T) {
	info := profiler.DeviceInfo{PeakFLOPS: map[profiler.DType]float64{profiler.F32: 1e12}}
	timing := run.CalTiming{PilotSeconds: 2e-3, TargetSeconds: 20e-3, MaxIters: 1 << 30, Reps: 5, Guess: 1e12}
	iters := func(n int) []profiler.Scalar { return []profiler.Scalar{profiler.I32Param("iters", n)} }
	for _, c := range []struct {
		kernel string
		err    string
	}{
		{"cal_fma", ""},
		{"cal_fma_zero", "every result is 0"},
		{"cal_fma_nan", "is NaN"},
	} {
		b := &calBackend{ns: 2e6} // every launch takes 2 ms
		in, _ := b.Alloc(4096)
		out, _ := b.Alloc(4 * 64)
		j := run.CalRate{DType: profiler.F32, Kernel: calKernel(c.kernel), Entry: c.kernel, Groups: 1, PerIter: 1e6, What: "test", Scalars: iters}
		rate, detail, err := run.CalibrateRate(b, info, in, out, 64, j, timing)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.kernel, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// the pilot aims at 2 ms at the datasheet's 1e12: 2000 iterations;
		// it took 2 ms, so the timed launches run 10× as many (20 ms)
		if len(b.iters) < 2 || b.iters[0] != 2000 || b.iters[len(b.iters)-1] != 20000 {
			t.Errorf("iteration counts %v, want the pilot at 2000 and the timed launches at 20000", b.iters)
		}
		// 20000 × 1e6 FLOPs in 2 ms (the fake's time)
		if want := 20000 * 1e6 / 2e-3; math.Abs(rate-want) > 1e-9*want {
			t.Errorf("rate %g, want %g", rate, want)
		}
		if !strings.Contains(detail, "× 20000 iterations") || !strings.Contains(detail, "of the 1.0 TFLOP/s datasheet peak") {
			t.Errorf("detail %q", detail)
		}
	}
}
