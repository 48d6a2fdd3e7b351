package cpu

import (
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

func TestCalibrationArithmetic(t *testing.T) {
	// 1 GB copied in 0.5 s moves 2 GB (read + write): 4 GB/s
	if got := CopyRate(1e9, 500*time.Millisecond); got != 4e9 {
		t.Errorf("CopyRate = %g", got)
	}
	// 2 workers × 1000 iterations × 8 chains × 2 FLOP in 1 ms = 32 MFLOP/ms
	if got := FMARate(2, 1000, time.Millisecond); got != 32e6 {
		t.Errorf("FMARate = %g", got)
	}
}

func TestCalibrate(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a second")
	}
	b, _ := New()
	c, err := b.(*Backend).Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	// any machine that runs Go copies faster than 100 MB/s and multiplies faster than 100 MFLOP/s
	if c.CopyBandwidth < 1e8 || c.FLOPS[profiler.F32] < 1e8 || c.FLOPS[profiler.BF16] != c.FLOPS[profiler.F32] || len(c.Details) != 2 {
		t.Errorf("%+v", c)
	}
}
