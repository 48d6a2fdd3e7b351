package metal

import "github.com/mltop/mltop/profiler"

// For the calibration's emulation test (package metal_test).
var (
	RunCalibration = runCalibration
	CalMacros      = calMacros
	CalInputBytes  = calInputBytes
	SimdFLOPs      = simdFLOPs
	FMAFLOPs       = fmaFLOPs
)

const (
	CalThreads = calThreads
	FMAChains  = fmaChains
	SimdAcc    = simdAcc
	CalFMAM    = calFMAM
	CalFMAC    = calFMAC
)

// CalTestSizes are launch sizes small enough for the emulation: iteration
// counts pinned to 16.
func CalTestSizes(groups int, copyBytes int64) calSizes {
	return calSizes{groups: groups, copyBytes: copyBytes, pilotSeconds: 2e-3, targetSeconds: 20e-3, maxIters: 16, copyReps: 2, mathReps: 2}
}

// CalDevice is a device for the calibration tests.
func CalDevice() profiler.DeviceInfo { return testDev }
