package cuda

import (
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// The calibration micro-kernels' shapes (shaders/calibrate/calibrate.cu). The
// kernels take MMA_ACC and FMA_CHAINS as macros from here, so the work
// counted below is the work the kernels do.
const (
	calThreads     = 256 // threads per block, every calibration kernel
	mmaAcc         = 8   // independent m16n8k16 accumulators per warp
	fmaChains      = 16  // independent FMA chains per thread
	mmaBlocksPerSM = 4   // 32 warps per SM for the tensor-core kernels
	fmaBlocksPerSM = 8   // 2048 threads per SM for FMA and copy
	mmaOpFLOPs     = 2 * 16 * 8 * 16

	calTarget = 20e-3 // seconds per timed arithmetic launch
	calPilot  = 2e-3  // seconds the pilot launch aims at, from the spec peak
	copyReps  = 10
	mathReps  = 5
	maxIters  = 1 << 30 // iterations of one launch at the most
)

// calMacros are the compile-time constants calibrate.cu needs.
func calMacros() []profiler.Macro {
	return []profiler.Macro{
		{Name: "MMA_ACC", Value: strconv.Itoa(mmaAcc)},
		{Name: "FMA_CHAINS", Value: strconv.Itoa(fmaChains)},
	}
}

// archMajor is the compute capability major of an NVRTC target name:
// "sm_90a" → 9, "sm_86" → 8, "sm_120" → 12; 0 when it is not one.
func archMajor(arch string) int {
	s := strings.TrimRight(strings.TrimPrefix(arch, "sm_"), "abcdefghijklmnopqrstuvwxyz")
	v, err := strconv.Atoi(s)
	if err != nil || !strings.HasPrefix(arch, "sm_") {
		return 0
	}
	return v / 10
}
