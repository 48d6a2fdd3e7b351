package run_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

type calibratingBackend struct {
	enginetest.MemBackend

	calls int
}

func (b *calibratingBackend) Calibrate() (run.Calibration, error) {
	b.calls++
	return run.Calibration{Backend: "mem", Device: "test device", CopyBandwidth: 4e9, FLOPS: map[profiler.DType]float64{profiler.F32: 2e9}}, nil
}

func TestCalibrationCacheAndPercentages(t *testing.T) {
	t.Setenv("MLTOP_CACHE_DIR", t.TempDir())
	b := &calibratingBackend{}
	r := run.NewRunner(b)
	if _, err := r.Calibrate(false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Calibrate(false); err != nil || b.calls != 1 {
		t.Fatalf("lazy calibration ran %d times (%v)", b.calls, err)
	}
	p, _ := run.CalibrationPath(b.Info())
	if !strings.HasSuffix(p, "calibration/mem-test_device.json") {
		t.Errorf("path %s", p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	// a new runner reads the cache without calibrating again
	r2 := run.NewRunner(b)
	res := r2.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 1000}}, enginetest.QuickOptions(), nil)
	// 1000 FLOP in ~1001 ns ≈ 1e9 FLOP/s = 50% of the measured 2e9; 8000 B ≈ 8e9 B/s = 200% of 4e9
	if b.calls != 1 || res.PctMeasFLOP < 49.8 || res.PctMeasFLOP > 50.1 || res.PctMeasBW < 199 || res.PctMeasBW > 201 {
		t.Errorf("calls %d, %% measured flops %g bw %g", b.calls, res.PctMeasFLOP, res.PctMeasBW)
	}
	if _, err := r2.Calibrate(true); err != nil || b.calls != 2 {
		t.Errorf("forced calibration: %d calls, %v", b.calls, err)
	}
	if _, err := run.NewRunner(&enginetest.MemBackend{}).Calibrate(true); err == nil || !strings.Contains(err.Error(), "no calibration micro-kernels") {
		t.Errorf("backend without calibrator: %v", err)
	}
}

func TestLoadCalibrationCorrupt(t *testing.T) {
	t.Setenv("MLTOP_CACHE_DIR", t.TempDir())
	dev := (&enginetest.MemBackend{}).Info()
	p, _ := run.CalibrationPath(dev)
	os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755)
	os.WriteFile(p, []byte("{not json"), 0o644)
	if _, err := run.LoadCalibration(dev); err == nil || !strings.Contains(err.Error(), "mltop calibrate") {
		t.Errorf("corrupt cache: %v", err)
	}
}

func TestBestMedian(t *testing.T) {
	for _, c := range []struct {
		name         string
		samples      [][]float64
		best, median float64
	}{
		{"odd", [][]float64{{5}, {3}, {4}}, 3, 4},
		{"even", [][]float64{{5}, {3}, {4}, {10}}, 3, 4.5},
		{"zeros and empty rows are not samples", [][]float64{{0}, {}, {7}}, 7, 7},
		{"none", nil, 0, 0},
	} {
		b, m := run.BestMedian(c.samples)
		if b != c.best || m != c.median {
			t.Errorf("%s: BestMedian = %g, %g; want %g, %g", c.name, b, m, c.best, c.median)
		}
	}
}

// The work a micro-kernel launch does, checked against numbers worked by
// hand (each backend's tests check its own shapes).
func TestCalibrationWork(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		// one warp or simdgroup, one iteration: 8 accumulators of m16n8k16
		{"matrix: 1 group of 32 threads, 1 iter", run.MatrixFLOPs(1, 32, 1, 8, 2*16*8*16), 8 * 4096},
		// 528 groups × 8 SIMD groups × 8 acc × 1000 iters × 1024 (8x8x8)
		{"matrix: 528 groups of 256, 1000 iters", run.MatrixFLOPs(528, 256, 1000, 8, 2*8*8*8), 528 * 8 * 8 * 1000 * 1024},
		{"matrix: a partial SIMD group does not count", run.MatrixFLOPs(1, 63, 1, 1, 100), 100},
		// one thread: 16 chains × 2 FLOPs per FMA
		{"fma: 1 thread, 1 iter, 16 chains", run.FMAFLOPs(1, 1, 1, 16), 32},
		{"fma: 1056 groups of 256, 1000 iters", run.FMAFLOPs(1056, 256, 1000, 16), 1056 * 256 * 1000 * 32},
		// a copy of 1 GiB reads 1 GiB and writes 1 GiB
		{"copy 1 GiB", run.CopyTraffic(1 << 30), 2 << 30},
		// 2 GiB moved in 1 ms is 2.147 TB/s
		{"2 GiB per ms", run.PerSecond(2<<30, 1e6), 2147483648e3},
		{"rate of nothing", run.PerSecond(1e9, 0), 0},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: got %g, want %g", c.name, c.got, c.want)
		}
	}
}

func TestCalCopyBytes(t *testing.T) {
	const gib, mib = 1 << 30, 1 << 20
	for _, c := range []struct {
		name       string
		mem, cache int64
		want       int64
	}{
		{"H100 80 GB, 50 MiB L2: 1 GiB each way", 80 * gib, 50 * mib, gib},
		{"M1 Max, 48 GiB working set: 1 GiB each way", 48 * gib, 48 * mib, gib},
		{"8 GiB: 2 GiB is a quarter, still 1 GiB", 8 * gib, 4 * mib, gib},
		{"4 GiB card: 8 × L2", 4 * gib, 4 * mib, 32 * mib},
		{"M1 with a 5.3 GiB working set: 8 × the 8 MiB SLC", 5461 * mib, 8 * mib, 64 * mib},
		{"cache unknown: 64 MiB", 4 * gib, 0, 64 * mib},
		{"2 GiB card with a 512 MiB L2: capped at an eighth of memory", 2 * gib, 512 * mib, 256 * mib},
		{"a tiny memory caps it at an eighth", 256 * mib, 48 * mib, 32 * mib},
		{"memory unknown: 1 GiB", 0, 0, gib},
		{"never under 1 MiB", 4 * mib, 0, mib},
		{"odd sizes round down to 16 bytes", 1000*mib + 7, 1*mib + 3, 8*mib + 16},
	} {
		got := run.CalCopyBytes(c.mem, c.cache)
		if got != c.want || got%16 != 0 {
			t.Errorf("%s: CalCopyBytes(%d, %d) = %d, want %d (a multiple of 16)", c.name, c.mem, c.cache, got, c.want)
		}
	}
}

func TestCalIters(t *testing.T) {
	h100 := run.MatrixFLOPs(528, 256, 1, 8, 4096)  // 138.4 MFLOP per iteration
	m1max := run.MatrixFLOPs(256, 256, 1, 8, 1024) // 16.8 MFLOP per iteration
	for _, c := range []struct {
		name      string
		got, want int
	}{
		// 989.4 TFLOP/s × 2 ms / 138.4 MFLOP = 14296.4, truncated
		{"pilot at the H100 spec", run.CalIters(989.4e12, h100, 2e-3, 1<<30), 14296},
		// 10.47 TFLOP/s × 2 ms / 16.777 MFLOP = 1248.1
		{"pilot at the M1 Max spec", run.CalIters(10.47e12, m1max, 2e-3, 1<<30), 1248},
		{"no rate known", run.CalIters(0, h100, 2e-3, 1<<30), 16},
		{"no work per iteration", run.CalIters(1e12, 0, 2e-3, 1<<30), 16},
		{"no time", run.CalIters(1e12, h100, 0, 1<<30), 16},
		{"never below 16", run.CalIters(1e9, h100, 1e-3, 1<<30), 16},
		{"capped", run.CalIters(1e20, 1, 1, 1000), 1000},
		{"never above 2^30", run.CalIters(1e20, 1, 1, 1<<30), 1 << 30},
		{"a cap under 16 is 16", run.CalIters(1e20, 1, 1, 3), 16},
		// a pilot of 1000 iterations of 1 MFLOP in 2 ms is 0.5 TFLOP/s; 20 ms of it
		{"rescaled from a pilot", run.CalIters(run.PerSecond(1e6*1000, 2e6), 1e6, 20e-3, 1<<30), 10000},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestOfDatasheet(t *testing.T) {
	for _, c := range []struct {
		got, spec, scale float64
		unit, want       string
	}{
		{2.9e12, 3.35e12, 1e9, "GB/s", "87% of the 3350 GB/s datasheet peak"},
		{700e12, 989.4e12, 1e12, "TFLOP/s", "71% of the 989 TFLOP/s datasheet peak"},
		{9.8e12, 10.47e12, 1e12, "TFLOP/s", "94% of the 10.5 TFLOP/s datasheet peak"},
		{1e12, 0, 1e12, "TFLOP/s", "no datasheet figure for this GPU"},
	} {
		if got := run.OfDatasheet(c.got, c.spec, c.unit, c.scale); got != c.want {
			t.Errorf("OfDatasheet(%g, %g) = %q, want %q", c.got, c.spec, got, c.want)
		}
	}
}

// TestCheckCalResults: finite results with one nonzero pass; a NaN, an
// Inf or all zeros is a broken micro-kernel, named with its entry.
func TestCheckCalResults(t *testing.T) {
	b := &enginetest.MemBackend{}
	put := func(vals ...float32) profiler.Buffer {
		buf, _ := b.Alloc(int64(4 * len(vals)))
		raw := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		b.Upload(buf, raw)
		return buf
	}
	if err := run.CheckCalResults(b, put(0, 2, 0.5), 3, "cal_fma_f32"); err != nil {
		t.Errorf("good results: %v", err)
	}
	for name, c := range map[string]struct {
		buf  profiler.Buffer
		want string
	}{
		"NaN":   {put(1, float32(math.NaN())), "calibration cal_fma_f32: result 1 is NaN; the micro-kernel is broken"},
		"Inf":   {put(float32(math.Inf(1)), 1), "result 0 is +Inf"},
		"zeros": {put(0, 0, 0), "calibration cal_fma_f32: every result is 0; the micro-kernel did no work"},
	} {
		if err := run.CheckCalResults(b, c.buf, 3, "cal_fma_f32"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// only the threads asked for are read: a NaN past them is not seen
	if err := run.CheckCalResults(b, put(1, float32(math.NaN())), 1, "cal_fma_f32"); err != nil {
		t.Errorf("a result past the threads was read: %v", err)
	}
}

func TestRescaleIters(t *testing.T) {
	timing := run.CalTiming{TargetSeconds: 20e-3, MaxIters: 1 << 30}
	pilot := func(ns float64) [][]float64 { return [][]float64{{ns}} }
	for _, c := range []struct {
		name  string
		iters int
		pilot [][]float64
		want  int
	}{
		// a pilot of 1000 iterations that took 2 ms, scaled to 20 ms
		{"scale ×10", 1000, pilot(2e6), 10000},
		{"scale down", 1000, pilot(40e6), 500},
		{"no time measured: ×10", 1000, pilot(0), 10000},
		{"no sample at all: ×10", 1000, nil, 10000},
		{"never below 16", 1000, pilot(20e9), 16},
		{"never above the cap", 1 << 29, pilot(1), 1 << 30},
	} {
		if got := run.RescaleIters(c.iters, c.pilot, timing); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
