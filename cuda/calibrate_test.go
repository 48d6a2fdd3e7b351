package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/shaders"
)

// The work counted per launch, checked against numbers worked by hand.
func TestCalibrationWork(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		// one warp, one iteration: 8 accumulators × 4096 FLOPs
		{"mma 1 block of 32 threads, 1 iter", mmaFLOPs(1, 32, 1), 8 * 4096},
		// H100 grid: 132 SMs × 4 blocks × 8 warps × 8 acc × 1000 iters × 4096
		{"mma H100 grid, 1000 iters", mmaFLOPs(528, 256, 1000), 528 * 8 * 8 * 1000 * 4096},
		{"mma 2*16*8*16", mmaOpFLOPs, 4096},
		// one thread: 16 chains × 2 FLOPs per FMA
		{"fma 1 thread, 1 iter", fmaFLOPs(1, 1, 1), 32},
		{"fma H100 grid, 1000 iters", fmaFLOPs(1056, 256, 1000), 1056 * 256 * 1000 * 32},
		// a copy of 1 GiB reads 1 GiB and writes 1 GiB
		{"copy 1 GiB", copyTraffic(1 << 30), 2 << 30},
		// 2 GiB moved in 1 ms is 2.147 TB/s
		{"2 GiB per ms", perSecond(2<<30, 1e6), 2147483648e3},
		{"rate of nothing", perSecond(1e9, 0), 0},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: got %g, want %g", c.name, c.got, c.want)
		}
	}
}

func TestCopyBufferBytes(t *testing.T) {
	const gib, mib = 1 << 30, 1 << 20
	for _, c := range []struct {
		name    string
		mem, l2 int64
		want    int64
	}{
		{"H100 80 GB, 50 MiB L2: 1 GiB each way", 80 * gib, 50 * mib, gib},
		{"8 GiB card: 2 GiB is a quarter, still 1 GiB", 8 * gib, 4 * mib, gib},
		{"4 GiB card: 8 × L2", 4 * gib, 4 * mib, 32 * mib},
		{"2 GiB card with a 512 MiB L2: capped at an eighth of memory", 2 * gib, 512 * mib, 256 * mib},
		{"unknown memory: 1 GiB", 0, 0, gib},
		{"tiny card, no L2 reported: at least 1 MiB", 512 * mib, 0, mib},
		{"odd sizes round down to 16 bytes", 1000*mib + 7, 1*mib + 3, 8*mib + 16},
	} {
		got := copyBufferBytes(c.mem, c.l2)
		if got != c.want || got%16 != 0 {
			t.Errorf("%s: copyBufferBytes(%d, %d) = %d, want %d (a multiple of 16)", c.name, c.mem, c.l2, got, c.want)
		}
	}
}

func TestCalibrationIters(t *testing.T) {
	h100 := mmaFLOPs(528, 256, 1) // 138.4 MFLOP per iteration
	for _, c := range []struct {
		name string
		got  int
		want int
	}{
		// 989.4 TFLOP/s × 2 ms / 138.4 MFLOP = 14296.4, truncated
		{"pilot at the H100 spec", itersFor(989.4e12, h100, 2e-3), 14296},
		{"no rate known", itersFor(0, h100, 2e-3), 16},
		{"no work per iteration", itersFor(1e12, 0, 2e-3), 16},
		{"never below 16", itersFor(1e9, h100, 1e-3), 16},
		{"never above 2^30", itersFor(1e20, 1, 1), 1 << 30},
		// a pilot of 1000 iterations that took 2 ms, scaled to 20 ms
		{"scale ×10", scaleIters(1000, 2e6, 20e6), 10000},
		{"scale down", scaleIters(1000, 40e6, 20e6), 500},
		{"no time measured: ×10", scaleIters(1000, 0, 20e6), 10000},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
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
