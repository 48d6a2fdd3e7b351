package metal

import "github.com/mltop/mltop/profiler"

// Datasheet peaks of Apple GPUs, for "% of spec peak". Leads, not
// measurements: `mltop calibrate` is where measured ceilings come from.
//
// Bandwidth: the unified-memory bandwidth Apple publishes per chip (M1
// 68.25 GB/s; M1/M2 Pro 200, Max 400, Ultra 800; M2 and M3 100; M3 Pro
// 150; M3 Max 300 with 30 GPU cores, 400 with 40; M4 120; M4 Pro 273; M4
// Max 410 with 32 cores, 546 with 40).
//
// FLOP/s: cores × 128 FP32 lanes × 2 (FMA) × the GPU clock, which gives
// Apple's published figures for M1 (1.278 GHz: 2.6 TFLOP/s on 8 cores, 10.4
// on the 32-core Max) and M2 (1.398 GHz: 3.6 TFLOP/s on 10 cores, 13.6 on
// 38). Apple7/8 GPUs run f16 at the f32 rate and have no bf16 ALUs (bf16 is
// converted and computed in f32), so all three dtypes get the f32 figure.
// M3 and later: no published clock that we trust, so no FLOP/s peak.

var chipClockGHz = map[int]float64{1: 1.278, 2: 1.398}

// PeakBandwidth is the published memory bandwidth in bytes/s, 0 if unknown.
func PeakBandwidth(c Chip, cores int) float64 {
	gbs := map[int]map[string]float64{
		1: {"": 68.25, "Pro": 200, "Max": 400, "Ultra": 800},
		2: {"": 100, "Pro": 200, "Max": 400, "Ultra": 800},
		3: {"": 100, "Pro": 150, "Max": 400, "Ultra": 800},
		4: {"": 120, "Pro": 273, "Max": 546},
	}[c.Number][c.Variant]
	// the binned Max parts have a narrower memory bus
	switch {
	case c.Number == 3 && c.Variant == "Max" && cores > 0 && cores <= 30:
		gbs = 300
	case c.Number == 4 && c.Variant == "Max" && cores > 0 && cores <= 32:
		gbs = 410
	}
	return gbs * 1e9
}

// PeakFLOPS is FLOP/s per dtype from the core count and the chip's clock;
// nil when either is unknown.
func PeakFLOPS(c Chip, cores int) map[profiler.DType]float64 {
	ghz, ok := chipClockGHz[c.Number]
	if !ok || cores <= 0 {
		return nil
	}
	f := float64(cores) * 128 * 2 * ghz * 1e9
	return map[profiler.DType]float64{profiler.F32: f, profiler.F16: f, profiler.BF16: f}
}
