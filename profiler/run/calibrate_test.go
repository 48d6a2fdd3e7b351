package run_test

import (
	"context"
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
