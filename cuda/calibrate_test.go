package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/shaders"
)

// The work counted per launch with this backend's kernel shapes, checked
// against numbers worked by hand (run's tests check the formulas).
func TestCalibrationWork(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		// one warp, one iteration: 8 accumulators × 4096 FLOPs
		{"mma 1 block of 32 threads, 1 iter", run.MatrixFLOPs(1, 32, 1, mmaAcc, mmaOpFLOPs), 8 * 4096},
		// H100 grid: 132 SMs × 4 blocks × 8 warps × 8 acc × 1000 iters × 4096
		{"mma H100 grid, 1000 iters", run.MatrixFLOPs(132*mmaBlocksPerSM, calThreads, 1000, mmaAcc, mmaOpFLOPs), 528 * 8 * 8 * 1000 * 4096},
		{"mma 2*16*8*16", mmaOpFLOPs, 4096},
		// one thread: 16 chains × 2 FLOPs per FMA
		{"fma 1 thread, 1 iter", run.FMAFLOPs(1, 1, 1, fmaChains), 32},
		{"fma H100 grid, 1000 iters", run.FMAFLOPs(132*fmaBlocksPerSM, calThreads, 1000, fmaChains), 1056 * 256 * 1000 * 32},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: got %g, want %g", c.name, c.got, c.want)
		}
	}
}

func TestArchMajor(t *testing.T) {
	for arch, want := range map[string]int{"sm_90a": 9, "sm_80": 8, "sm_86": 8, "sm_75": 7, "sm_100a": 10, "sm_120": 12, "compute_90": 0, "": 0, "sm_": 0} {
		if got := archMajor(arch); got != want {
			t.Errorf("archMajor(%q) = %d, want %d", arch, got, want)
		}
	}
}

// The kernel source takes its counts from the Go side and has every entry
// the calibration launches.
func TestCalibrateSource(t *testing.T) {
	src, err := shaders.Source("cuda", "calibrate", ".cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range calMacros() {
		if !strings.Contains(src, "#ifndef "+m.Name) {
			t.Errorf("calibrate.cu does not check macro %s", m.Name)
		}
	}
	for _, e := range []string{"cal_fill", "cal_copy", "cal_mma_bf16", "cal_mma_f16", "cal_fma_f32"} {
		if !strings.Contains(src, `extern "C" __global__ void __launch_bounds__(256) `+e+"(") {
			t.Errorf("calibrate.cu has no extern \"C\" kernel %s with 256-thread launch bounds (calThreads = %d)", e, calThreads)
		}
	}
	if !strings.Contains(src, "m16n8k16.row.col.f32.bf16.bf16.f32") || !strings.Contains(src, "m16n8k16.row.col.f32.f16.f16.f32") {
		t.Error("calibrate.cu: the tensor-core kernels must use mma m16n8k16 with f32 accumulation (mmaOpFLOPs counts 2·16·8·16)")
	}
}
