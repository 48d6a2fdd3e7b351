package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/shaders"
)

// The work counted per launch with calibrate.metal's shapes, checked
// against numbers worked by hand (run's tests check the formulas).
func TestCalibrationWork(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		// one simdgroup, one iteration: 8 accumulators × 2·8·8·8
		{"simdgroup: 1 group of 32 threads, 1 iter", SimdFLOPs(1, 32, 1), 8 * 1024},
		// M1 Max grid: 32 cores × 8 groups × 8 simdgroups × 8 acc × 1000 iters × 1024
		{"simdgroup: M1 Max grid, 1000 iters", SimdFLOPs(32*calGroupsPerCore, calThreads, 1000), 256 * 8 * 8 * 1000 * 1024},
		{"2·8·8·8", simdOpFLOPs, 1024},
		// one thread: 16 chains × 2 FLOPs per FMA
		{"fma: 1 thread, 1 iter", FMAFLOPs(1, 1, 1), 32},
		{"fma: M1 Max grid, 1000 iters", FMAFLOPs(256, calThreads, 1000), 256 * 256 * 1000 * 32},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: got %g, want %g", c.name, c.got, c.want)
		}
	}
}

func TestCalSizesFor(t *testing.T) {
	m1max := DeviceInfo(RawDevice{Name: "Apple M1 Max", Cores: 32, WorkingSetBytes: 48 << 30, MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
	sz := calSizesFor(m1max)
	if sz.groups != 256 || sz.copyBytes != 1<<30 {
		t.Errorf("M1 Max (32 cores, 48 GiB): %d groups, %d copy bytes; want 256 and 1 GiB", sz.groups, sz.copyBytes)
	}
	noCores := DeviceInfo(RawDevice{Name: "Apple M1", WorkingSetBytes: 5461 << 20})
	if sz := calSizesFor(noCores); sz.groups != calDefaultCores*calGroupsPerCore || sz.copyBytes != 64<<20 {
		t.Errorf("M1 with no core count: %d groups, %d copy bytes; want %d and 64 MiB (8 × its 8 MiB SLC)", sz.groups, sz.copyBytes, calDefaultCores*calGroupsPerCore)
	}
	if sz.pilotSeconds >= sz.targetSeconds || sz.maxIters < 1<<20 || sz.copyReps < 3 || sz.mathReps < 3 {
		t.Errorf("implausible sizes %+v", sz)
	}
}

// The inputs are exact in half, so the f16 kernels' results are exact too.
func TestCalInputs(t *testing.T) {
	b := calInputBytes()
	if len(b) != 4*calInputs {
		t.Fatalf("%d bytes", len(b))
	}
	for i := range calInputs {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if v <= 0 || v > 1 || v*8 != float32(math.Round(float64(v*8))) {
			t.Fatalf("input %d = %g: want a positive multiple of 1/8 up to 1", i, v)
		}
	}
}

// The source checks every macro the Go side passes, defines every entry
// the calibration compiles, and takes its buffers in the order the
// launches bind them.
func TestCalibrateSource(t *testing.T) {
	src, err := shaders.Source("metal", "calibrate", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range calMacros() {
		if !strings.Contains(src, "#ifndef "+m.Name) {
			t.Errorf("calibrate.metal does not check macro %s", m.Name)
		}
	}
	for _, e := range calEntries {
		re := regexp.MustCompile(`\[\[kernel, max_total_threads_per_threadgroup\(CAL_THREADS\)\]\] void ` + e + `\(\s*(.*?)\[\[buffer\(0\)\]\],\s*(.*?)\[\[buffer\(1\)\]\]`)
		m := re.FindStringSubmatch(src)
		if m == nil {
			t.Errorf("calibrate.metal has no kernel %s limited to CAL_THREADS threads with buffers 0 and 1", e)
			continue
		}
		first, second := m[1], m[2]
		switch e {
		case "cal_fill":
			if !strings.Contains(first, "device uint4* dst") || !strings.Contains(second, "constant CalCopyParams& p") {
				t.Errorf("%s: buffers %q, %q", e, first, second)
			}
		case "cal_copy":
			if !strings.Contains(first, "device uint4* src") || !strings.Contains(second, "device uint4* dst") {
				t.Errorf("%s: buffers %q, %q", e, first, second)
			}
		default:
			if !strings.Contains(first, "const device float* in") || !strings.Contains(second, "device float* out") {
				t.Errorf("%s: buffers %q, %q", e, first, second)
			}
		}
	}
	for _, j := range calJobs(1, nil) {
		if !strings.Contains(src, "void "+j.Entry+"(") {
			t.Errorf("job %s has no kernel", j.Entry)
		}
	}
	if !strings.Contains(src, "simdgroup_multiply_accumulate(acc[k], a[k], b, acc[k])") {
		t.Error("the simdgroup kernels must do one 8x8x8 multiply-accumulate per accumulator per iteration (simdOpFLOPs counts 2·8·8·8)")
	}
}

// Every dtype the calibration reports has both of its paths measured.
func TestCalJobs(t *testing.T) {
	got := map[profiler.DType][]string{}
	for _, j := range calJobs(4, nil) {
		got[j.DType] = append(got[j.DType], j.Entry)
		if j.PerIter <= 0 {
			t.Errorf("%s counts no work", j.Entry)
		}
		if s := j.Scalars(7); len(s) != 3 || s[0].Name != "iters" {
			t.Errorf("%s: scalars %v, want iters, m, c", j.Entry, s)
		}
	}
	want := map[profiler.DType][]string{
		profiler.F32: {"cal_simdgroup_f32", "cal_fma_f32"},
		profiler.F16: {"cal_simdgroup_f16", "cal_fma_f16"},
	}
	for dt, w := range want {
		if strings.Join(got[dt], ",") != strings.Join(w, ",") {
			t.Errorf("%s: jobs %v, want %v", dt, got[dt], w)
		}
	}
}

func TestCalibrationChecks(t *testing.T) {
	info := profiler.DeviceInfo{PeakBandwidth: 400e9, PeakFLOPS: map[profiler.DType]float64{profiler.F32: 10.4e12, profiler.F16: 10.4e12}}
	good := run.Calibration{CopyBandwidth: 330e9, FLOPS: map[profiler.DType]float64{profiler.F32: 9.8e12, profiler.F16: 10.1e12}, Details: []string{"d1", "d2"}}
	cs := calibrationChecks(good, nil, info)
	if len(cs) != 5 {
		t.Fatalf("%d checks, want 3 figures + 2 details: %v", len(cs), cs)
	}
	for _, c := range cs {
		if !c.OK || c.Name != "metal calibrate" {
			t.Errorf("good calibration: %+v", c)
		}
	}
	if !strings.Contains(cs[0].Detail, "copy bandwidth 330.00 GB/s (82% of the 400.00 GB/s datasheet peak)") || !strings.Contains(cs[2].Detail, "f16 10.10 TFLOP/s (97%") {
		t.Errorf("details %q, %q", cs[0].Detail, cs[2].Detail)
	}
	fails := func(name string, c run.Calibration, err error, info profiler.DeviceInfo, want string) {
		t.Helper()
		for _, k := range calibrationChecks(c, err, info) {
			if !k.OK && strings.Contains(k.Detail, want) {
				return
			}
		}
		t.Errorf("%s: no failing check saying %q in %v", name, want, calibrationChecks(c, err, info))
	}
	fails("error", good, fmt.Errorf("compiling cal_copy: boom"), info, "boom")
	fast := good
	fast.FLOPS = map[profiler.DType]float64{profiler.F32: 20e12, profiler.F16: 10e12}
	fails("faster than the datasheet", fast, nil, info, "timer reads short")
	missing := good
	missing.FLOPS = map[profiler.DType]float64{profiler.F32: 9e12}
	fails("f16 missing", missing, nil, info, "f16 0.00 TFLOP/s (0% of the 10.40 TFLOP/s datasheet peak): not measured")
	// Without datasheet peaks only positivity is checked.
	for _, c := range calibrationChecks(good, nil, profiler.DeviceInfo{}) {
		if !c.OK || strings.Contains(c.Detail, "datasheet") {
			t.Errorf("no peaks: %+v", c)
		}
	}
}
