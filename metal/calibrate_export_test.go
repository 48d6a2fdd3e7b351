package metal

import (
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// For the calibration's emulation test (package metal_test).
var (
	RunCalibration = runCalibration
	CalMacros      = calMacros
	CalInputBytes  = calInputBytes
)

// SimdFLOPs and FMAFLOPs are the work of the arithmetic launches with
// calibrate.metal's shapes (accumulators, chains).
func SimdFLOPs(groups, threads, iters int) float64 {
	return run.MatrixFLOPs(groups, threads, iters, simdAcc, simdOpFLOPs)
}

func FMAFLOPs(groups, threads, iters int) float64 {
	return run.FMAFLOPs(groups, threads, iters, fmaChains)
}

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
