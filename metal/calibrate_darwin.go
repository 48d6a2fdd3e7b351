//go:build darwin

package metal

import (
	"github.com/mltop/mltop/profiler/run"
)

var _ run.Calibrator = (*Backend)(nil)

// Calibrate measures this GPU's copy bandwidth and its f32 and f16
// arithmetic rates (FMA and simdgroup matrix) with calibrate.metal, for
// `mltop calibrate` and the lazy calibration on first use.
func (b *Backend) Calibrate() (run.Calibration, error) {
	info := b.Info()
	return runCalibration(b, info, calSizesFor(info))
}
