package metal

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestPeaksMatchPublishedFigures(t *testing.T) {
	cases := []struct {
		name   string
		cores  int
		tflops float64 // Apple's published FP32 figure, 0 when none
		gbs    float64
	}{
		{"Apple M1", 8, 2.6, 68.25},
		{"Apple M1 Max", 32, 10.4, 400},
		{"Apple M2", 10, 3.6, 100},
		{"Apple M2 Max", 38, 13.6, 400},
		{"Apple M3 Max", 30, 0, 300},
		{"Apple M3 Max", 40, 0, 400},
		{"Apple M4 Pro", 20, 0, 273},
		{"Apple M4 Max", 32, 0, 410},
		{"Apple M4 Max", 40, 0, 546},
	}
	for _, c := range cases {
		chip := ParseChip(c.name, "")
		if got := PeakBandwidth(chip, c.cores) / 1e9; got != c.gbs {
			t.Errorf("%s %d cores: %g GB/s, want %g", c.name, c.cores, got, c.gbs)
		}
		f := PeakFLOPS(chip, c.cores)
		if c.tflops == 0 {
			if f != nil {
				t.Errorf("%s: a FLOP/s peak without a known clock: %v", c.name, f)
			}
			continue
		}
		// published figures are cut to one decimal (10.47 is sold as 10.4)
		if got := f[profiler.F32] / 1e12; math.Abs(got-c.tflops)/c.tflops > 0.01 || f[profiler.BF16] != f[profiler.F32] {
			t.Errorf("%s: %.3f TFLOP/s, want %.1f", c.name, got, c.tflops)
		}
	}
	if PeakBandwidth(Chip{}, 8) != 0 || PeakFLOPS(ParseChip("Apple M1", ""), 0) != nil {
		t.Error("unknown chip or core count must give no peak")
	}
}
