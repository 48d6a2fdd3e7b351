package cuda

import (
	"fmt"
	"math"
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
	copyVecBytes   = 16  // the copy moves one uint4 per element
	mmaOpFLOPs     = 2 * 16 * 8 * 16

	calTarget = 20e-3 // seconds per timed arithmetic launch
	calPilot  = 2e-3  // seconds the pilot launch aims at, from the spec peak
	copyReps  = 10
	mathReps  = 5
	copyWant  = 1 << 30 // bytes each way, when memory allows
)

// calMacros are the compile-time constants calibrate.cu needs.
func calMacros() []profiler.Macro {
	return []profiler.Macro{
		{Name: "MMA_ACC", Value: strconv.Itoa(mmaAcc)},
		{Name: "FMA_CHAINS", Value: strconv.Itoa(fmaChains)},
	}
}

// mmaFLOPs is the work of one cal_mma_* launch: every warp issues mmaAcc
// products of 2·16·8·16 FLOPs per iteration.
func mmaFLOPs(blocks, threads, iters int) float64 {
	return float64(blocks) * float64(threads/32) * float64(iters) * mmaAcc * mmaOpFLOPs
}

// fmaFLOPs is the work of one cal_fma_f32 launch: every thread runs
// fmaChains FMAs (2 FLOPs each) per iteration.
func fmaFLOPs(blocks, threads, iters int) float64 {
	return float64(blocks) * float64(threads) * float64(iters) * fmaChains * 2
}

// copyTraffic is the bytes a copy of n bytes moves: n read plus n written.
func copyTraffic(n int64) float64 { return 2 * float64(n) }

// copyBufferBytes is the size of each of the copy's two buffers: 1 GiB
// (many times any L2), or, when the two would take more than a quarter of
// memory, 8× the L2, and never more than an eighth of memory each. A
// multiple of 16 bytes.
func copyBufferBytes(mem, l2 int64) int64 {
	n := int64(copyWant)
	if mem > 0 && 2*n > mem/4 {
		n = 8 * l2
		if n > mem/8 {
			n = mem / 8
		}
	}
	if n < 1<<20 {
		n = 1 << 20
	}
	return n &^ (copyVecBytes - 1)
}

// itersFor is the iteration count at which a launch doing perIter FLOPs an
// iteration takes seconds at rate FLOP/s, clamped to [16, 1<<30].
func itersFor(rate, perIter, seconds float64) int {
	if rate <= 0 || perIter <= 0 {
		return 16
	}
	return clampIters(rate * seconds / perIter)
}

// scaleIters rescales a pilot's iteration count from the time it took to
// the target time (both in nanoseconds).
func scaleIters(iters int, gotNs, targetNs float64) int {
	if gotNs <= 0 {
		return clampIters(float64(iters) * 10)
	}
	return clampIters(float64(iters) * targetNs / gotNs)
}

func clampIters(x float64) int {
	if math.IsNaN(x) || x < 16 {
		return 16
	}
	if x > 1<<30 {
		return 1 << 30
	}
	return int(x)
}

// perSecond is work over nanoseconds.
func perSecond(work, ns float64) float64 {
	if ns <= 0 {
		return 0
	}
	return work / (ns * 1e-9)
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

// ofSpec says what share of the datasheet figure a measurement is, when
// the datasheet figure is known.
func ofSpec(got, spec float64, unit string, scale float64) string {
	if spec <= 0 {
		return "no datasheet figure for this GPU"
	}
	return fmt.Sprintf("%.0f%% of the %.0f %s datasheet peak", 100*got/spec, spec/scale, unit)
}
