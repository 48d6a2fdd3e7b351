//go:build linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// openOrSkip opens the backend with its compile cache in a temp dir, or
// skips the test with the reason when this machine has no usable GPU.
func openOrSkip(t *testing.T) *backend {
	t.Helper()
	if ok, why := Available(); !ok {
		t.Skip("no CUDA driver: " + why)
	}
	if os.Getenv("MLTOP_CUDA_CACHE") == "" {
		t.Setenv("MLTOP_CUDA_CACHE", t.TempDir())
	}
	b, err := Open()
	if err != nil {
		t.Skip("no CUDA driver: " + err.Error())
	}
	t.Cleanup(func() { b.Close() })
	return b.(*backend)
}

func TestDeviceInfo(t *testing.T) {
	b := openOrSkip(t)
	d := b.Info()
	t.Logf("%s %s: %d SMs, smem %d/%d(opt-in)/%d per SM, regs/SM %d, threads/SM %d, blocks/SM %d, L2 %s, mem %s, peak BW %.0f GB/s, peak %v; %v",
		d.Name, d.Arch, d.Units, d.TGMPerGroup, d.TGMPerGroupOptIn, d.TGMPerUnit, d.RegistersPerUnit, d.MaxThreadsPerUnit, d.MaxGroupsPerUnit,
		units.Bytes(d.CacheBytes), units.Bytes(d.MemoryBytes), d.PeakBandwidth/1e9, d.PeakFLOPS, d.Notes)
	checks := []struct {
		what string
		ok   bool
	}{
		{"backend is cuda", d.Backend == "cuda"},
		{"name set", d.Name != ""},
		{"arch sm_XY", strings.HasPrefix(d.Arch, "sm_")},
		{"SMs > 0", d.Units > 0},
		{"48 KiB shared per block", d.TGMPerGroup >= 48<<10},
		{"opt-in ≥ default", d.TGMPerGroupOptIn >= d.TGMPerGroup},
		{"shared per SM ≥ per block", d.TGMPerUnit >= d.TGMPerGroup},
		{"1024 threads per block", d.MaxThreadsPerGroup >= 1024},
		{"threads per SM", d.MaxThreadsPerUnit >= 1024},
		{"registers per SM", d.RegistersPerUnit >= 32768},
		{"warp 32", d.SIMDWidth == 32},
		{"L2 > 1 MiB", d.CacheBytes > 1<<20},
		{"memory > 1 GiB", d.MemoryBytes > 1<<30},
		{"timer", d.Timer == TimerKernel && b.kclock != nil || d.Timer == TimerEvents && b.kclock == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("device info: %s fails: %+v", c.what, d)
		}
	}
	if strings.Contains(d.Name, "H100") || strings.Contains(d.Name, "H200") {
		if d.Arch != "sm_90a" || d.PeakFLOPS[profiler.BF16] < 7e14 || d.PeakBandwidth < 3e12 {
			t.Errorf("Hopper: arch %s, bf16 peak %g, bandwidth %g", d.Arch, d.PeakFLOPS[profiler.BF16], d.PeakBandwidth)
		}
	}
}

func TestCompileErrorShowsLog(t *testing.T) {
	b := openOrSkip(t)
	// BQ=8 with WM=4 trips the kernel's static_assert.
	_, err := b.Compile(profiler.Program{Source: "attn_fwd", Entry: "attn_fwd", Macros: []profiler.Macro{
		{Name: "BQ", Value: "8"}, {Name: "BK", Value: "16"}, {Name: "WM", Value: "4"}, {Name: "WN", Value: "1"},
		{Name: "D", Value: "64"}, {Name: "DTYPE", Value: "0"}, {Name: "CAUSAL", Value: "0"}}})
	if err == nil || !strings.Contains(err.Error(), "BQ must be a multiple of 8*WM") || !strings.Contains(err.Error(), "NVRTC") {
		t.Fatalf("want an NVRTC error quoting the static_assert, got %v", err)
	}
	_, err = b.Compile(profiler.Program{Source: "no_such_kernel", Entry: "x"})
	if err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Fatalf("missing source: %v", err)
	}
	_, err = b.Compile(profiler.Program{Source: "test_fault", Entry: "not_an_entry"})
	if err == nil || !strings.Contains(err.Error(), "not_an_entry") {
		t.Fatalf("missing entry: %v", err)
	}
}

func TestCompileCache(t *testing.T) {
	b := openOrSkip(t)
	p := profiler.Program{Source: "softmax_bwd", Entry: "softmax_bwd", Macros: []profiler.Macro{{Name: "WG", Value: "64"}, {Name: "DTYPE", Value: "1"}}}
	start := time.Now()
	k1, err := b.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	first := time.Since(start)
	start = time.Now()
	if _, err := b.Compile(p); err != nil {
		t.Fatal(err)
	}
	second := time.Since(start)
	st := b.Stats()
	if st.Compiles != 1 || st.MemoryHits != 1 {
		t.Fatalf("after two compiles of one program: %+v, want 1 compile and 1 memory hit", st)
	}
	t.Logf("first compile %v, cached %v; attrs %+v", first, second, k1.Attrs())
	// A prefetch racing a compile of the same program compiles it once.
	p2 := profiler.Program{Source: "softmax_bwd", Entry: "softmax_bwd", Macros: []profiler.Macro{{Name: "WG", Value: "128"}, {Name: "DTYPE", Value: "2"}}}
	go b.Precompile(p2)
	if _, err := b.Compile(p2); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Compiles != 2 {
		t.Fatalf("prefetch + compile of a new program: %+v, want 2 compiles in all", st)
	}
	// A second backend over the same cache dir (a later run) reads the disk.
	b2, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if _, err := b2.Compile(p); err != nil {
		t.Fatal(err)
	}
	if st := b2.(*backend).Stats(); st.Compiles != 0 || st.DiskHits != 1 {
		t.Fatalf("second backend: %+v, want 0 compiles and 1 disk hit", st)
	}
}

// quick measures briefly: tests check status, not speed.
func quick() profiler.Options {
	o := profiler.DefaultOptions()
	o.Stop = profiler.StopRule{Noise: 0.05, MinSamples: 3, MinTime: 0.001, MaxTime: 0.2}
	o.Warmup = 0.001
	return o
}

func attnSpec(dt profiler.DType, causal bool, knobs map[string]int, dims map[string]int) profiler.Spec {
	d := map[string]int{"B": 2, "H": 4, "Hkv": 2, "Lq": 77, "Lk": 133, "D": 64}
	for k, v := range dims {
		d[k] = v
	}
	return profiler.Spec{Kernel: "attn_fwd", DType: dt, Knobs: knobs, Dims: d, Flags: map[string]bool{"causal": causal}}
}

func TestFamiliesOnGPU(t *testing.T) {
	b := openOrSkip(t)
	r := run.NewRunner(b)
	var specs []profiler.Spec
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		for _, causal := range []bool{false, true} {
			specs = append(specs,
				attnSpec(dt, causal, map[string]int{"BQ": 64, "BK": 32, "WM": 4, "WN": 1}, nil),
				attnSpec(dt, causal, map[string]int{"BQ": 32, "BK": 16, "WM": 2, "WN": 2}, map[string]int{"D": 128}),
				attnSpec(dt, causal, map[string]int{"BQ": 64, "BK": 8, "WM": 4, "WN": 1}, map[string]int{"D": 96}),
				attnSpec(dt, causal, map[string]int{"BQ": 64, "BK": 32, "WM": 2, "WN": 4}, map[string]int{"D": 96}),
				// Lq > Lk: causal rows that see no key give O = 0, L = -inf.
				attnSpec(dt, causal, map[string]int{"BQ": 32, "BK": 16, "WM": 2, "WN": 1}, map[string]int{"Lq": 150, "Lk": 40, "D": 256}),
			)
		}
		specs = append(specs,
			profiler.Spec{Kernel: "softmax_bwd", DType: dt, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 300, "cols": 4096}},
			profiler.Spec{Kernel: "softmax_bwd", DType: dt, Knobs: map[string]int{"WG": 1024}, Dims: map[string]int{"rows": 7, "cols": 1001}},
			profiler.Spec{Kernel: "softmax_bwd", DType: dt, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 64, "cols": 24}},
		)
	}
	for _, s := range specs {
		t.Run(s.String(), func(t *testing.T) {
			res := r.Run(context.Background(), s, quick(), nil)
			if res.Status != profiler.StatusOK {
				t.Fatalf("%s: %s: %s", s, res.Status, res.Error)
			}
			o, _ := res.MinOccupancy()
			t.Logf("median %.1f µs, %.2f TFLOP/s, max err %.3g, occupancy %d/SM (%s, %d regs, %d B spill), budget %+v",
				res.Stats.Median/1e3, res.TFLOPS, res.Verdict.MaxAbsErr, o.GroupsPerUnit, o.Limiter, o.Registers, o.SpillBytes, res.Budget)
			if len(res.Occupancy) == 0 || !res.Occupancy[0].Available || res.Occupancy[0].Source != "driver" {
				t.Errorf("occupancy not from the driver: %+v", res.Occupancy)
			}
			for _, bg := range res.Budget {
				for _, w := range bg.Warnings {
					if strings.Contains(w, "compiler reports") {
						t.Errorf("budget disagrees with the kernel: %s", w)
					}
				}
			}
		})
	}
}

func TestTimeColdAndHot(t *testing.T) {
	b := openOrSkip(t)
	r := run.NewRunner(b)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 4096, "cols": 4096}}
	o := quick()
	cold := r.Run(context.Background(), s, o, nil)
	o.Cache = profiler.CacheHot
	hot := r.Run(context.Background(), s, o, nil)
	if cold.Status != profiler.StatusOK || hot.Status != profiler.StatusOK {
		t.Fatalf("cold %s %s / hot %s %s", cold.Status, cold.Error, hot.Status, hot.Error)
	}
	t.Logf("softmax_bwd 4096² bf16: cold %.1f µs (%.0f GB/s), hot %.1f µs (%.0f GB/s)", cold.Stats.Median/1e3, cold.GBps, hot.Stats.Median/1e3, hot.GBps)
	if cold.Timer != b.Info().Timer || cold.Stats.Median <= 0 {
		t.Errorf("timer %q median %g", cold.Timer, cold.Stats.Median)
	}
	if math.IsNaN(cold.GBps) || cold.GBps <= 0 || cold.GBps > 1.2*b.Info().PeakBandwidth/1e9 && b.Info().PeakBandwidth > 0 {
		t.Errorf("cold bandwidth %.0f GB/s is not plausible against the peak %.0f GB/s", cold.GBps, b.Info().PeakBandwidth/1e9)
	}
}

// TestStickyErrorIsReported runs the out-of-bounds kernel in process: the
// run fails with the driver's error and later calls say the context is lost.
//
// The fault poisons the process's primary context for good, so the test
// runs itself in a child process and the parent checks the child passed.
func TestStickyErrorIsReported(t *testing.T) {
	if os.Getenv(ExitOnFaultEnv) != "" {
		t.Skip(ExitOnFaultEnv + " is set: the fault would end the test binary")
	}
	if os.Getenv("MLTOP_CUDA_STICKY_CHILD") == "" {
		openOrSkip(t).Close()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestStickyErrorIsReported$", "-test.v")
		cmd.Env = append(os.Environ(), "MLTOP_CUDA_STICKY_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestStickyErrorIsReported") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	b := openOrSkip(t)
	r := run.NewRunner(b)
	res := r.Run(context.Background(), faultSpec(faultOOB), quick(), nil)
	if res.Status != profiler.StatusError || !strings.Contains(res.Error, "CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Fatalf("oob kernel: %s %q, want error with CUDA_ERROR_ILLEGAL_ADDRESS", res.Status, res.Error)
	}
	_, err := b.Alloc(1024)
	if !errors.Is(err, ErrContextLost) {
		t.Fatalf("after the fault Alloc gave %v, want ErrContextLost", err)
	}
	if b.Lost() == nil {
		t.Fatal("Lost() is nil after a fault")
	}
}

// TestWorkerIsolation runs specs through run.WorkerPool with this test
// binary as the worker: the out-of-bounds kernel is recorded as crashed, the
// endless one as timeout, and the sweep goes on with a fresh worker.
func TestWorkerIsolation(t *testing.T) {
	openOrSkip(t).Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := run.NewWorkerPool([]string{exe, "-test.run=^TestHelperWorker$"}, []string{"MLTOP_CUDA_TEST_WORKER=1", ExitOnFaultEnv + "=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	o := quick()
	o.Timeout = 5 * time.Second
	for _, c := range []struct {
		spec profiler.Spec
		want profiler.Status
	}{
		{faultSpec(faultFill), profiler.StatusOK},
		{faultSpec(faultOOB), profiler.StatusCrashed},
		{faultSpec(faultFill), profiler.StatusOK},
		{faultSpec(faultHang), profiler.StatusTimeout},
		{profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F16, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 33, "cols": 512}}, profiler.StatusOK},
	} {
		start := time.Now()
		res := pool.Run(context.Background(), c.spec, o, nil)
		t.Logf("%s: %s in %.1fs: %s", c.spec, res.Status, time.Since(start).Seconds(), firstLine(res.Error))
		if res.Status != c.want {
			t.Errorf("%s: status %s (%s), want %s", c.spec, res.Status, res.Error, c.want)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// TestHelperWorker is the worker process of TestWorkerIsolation.
func TestHelperWorker(t *testing.T) {
	if os.Getenv("MLTOP_CUDA_TEST_WORKER") == "" {
		t.Skip("helper process for TestWorkerIsolation")
	}
	err := run.ServeWorker(os.Stdin, os.Stdout, func() (profiler.Executor, error) {
		b, err := Open()
		if err != nil {
			return nil, err
		}
		return run.NewRunner(b), nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// BenchmarkAttnFwdSweep sweeps attn_fwd bf16 at B=1 H=32 D=128 L=4096
// (dense and causal) at the default measurement settings, one
// sub-benchmark per config, reporting the median and TFLOP/s (run once
// each: -test.benchtime 1x). MLTOP_CUDA_BENCH_L and
// MLTOP_CUDA_BENCH_CONFIGS ("BQ,BK,WM,WN ...") change the sweep.
//
//	.gpu/cuda.test -test.run '^$' -test.bench AttnFwdSweep -test.benchtime 1x
func BenchmarkAttnFwdSweep(b *testing.B) {
	if ok, why := Available(); !ok {
		b.Skip("no CUDA driver: " + why)
	}
	be, err := Open()
	if err != nil {
		b.Skip("no CUDA driver: " + err.Error())
	}
	defer be.Close()
	r := run.NewRunner(be)
	L := 4096
	if s := os.Getenv("MLTOP_CUDA_BENCH_L"); s != "" {
		fmt.Sscan(s, &L)
	}
	type kn struct{ BQ, BK, WM, WN int }
	configs := []kn{
		{64, 64, 4, 1}, {128, 64, 8, 1}, {128, 128, 8, 1}, {128, 32, 4, 1}, {128, 64, 4, 1},
		{128, 16, 4, 1}, {64, 128, 4, 1}, {128, 64, 4, 2}, {128, 128, 4, 2}, {64, 32, 2, 1},
	}
	if s := os.Getenv("MLTOP_CUDA_BENCH_CONFIGS"); s != "" {
		configs = nil
		for _, f := range strings.Fields(s) {
			var c kn
			if _, err := fmt.Sscanf(f, "%d,%d,%d,%d", &c.BQ, &c.BK, &c.WM, &c.WN); err == nil {
				configs = append(configs, c)
			}
		}
	}
	opt := profiler.DefaultOptions()
	opt.Stop.MaxTime = 2
	for _, causal := range []bool{false, true} {
		for _, c := range configs {
			name := fmt.Sprintf("causal=%v/BQ=%d/BK=%d/WM=%d/WN=%d", causal, c.BQ, c.BK, c.WM, c.WN)
			b.Run(name, func(b *testing.B) {
				s := profiler.Spec{Kernel: "attn_fwd", DType: profiler.BF16,
					Knobs: map[string]int{"BQ": c.BQ, "BK": c.BK, "WM": c.WM, "WN": c.WN},
					Dims:  map[string]int{"B": 1, "H": 32, "Hkv": 32, "Lq": L, "Lk": L, "D": 128}, Flags: map[string]bool{"causal": causal}}
				var res profiler.Result
				for b.Loop() {
					res = r.Run(context.Background(), s, opt, nil)
				}
				if res.Status != profiler.StatusOK {
					b.Skipf("%s: %s", res.Status, firstLine(res.Error))
				}
				o, _ := res.MinOccupancy()
				b.ReportMetric(res.Stats.Median/1e3, "µs/median")
				b.ReportMetric(res.TFLOPS, "TFLOP/s")
				b.ReportMetric(res.Stats.CV, "cv")
				b.ReportMetric(float64(o.GroupsPerUnit), "groups/SM")
				b.ReportMetric(float64(o.Registers), "regs")
			})
		}
	}
}

// TestKernelClockOnGPU times one memory-bound kernel with the kernel clock
// (CUPTI) and with events on the same backend: both positive, the kernel
// clock below the events by the launch they include (a few µs), never by
// more than 20 µs, and every sample accounted for.
func TestKernelClockOnGPU(t *testing.T) {
	b := openOrSkip(t)
	if b.kclock == nil {
		t.Skip("no kernel clock; the device notes say why:", b.info.Notes)
	}
	r := run.NewRunner(b)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 4096, "cols": 2048}}
	o := quick()
	kc := r.Run(context.Background(), s, o, nil)
	clock := b.kclock
	b.kclock = nil
	ev := r.Run(context.Background(), s, o, nil)
	b.kclock = clock
	if kc.Status != profiler.StatusOK || ev.Status != profiler.StatusOK {
		t.Fatalf("kernel clock %s %s / events %s %s", kc.Status, kc.Error, ev.Status, ev.Error)
	}
	t.Logf("softmax_bwd 4096×2048 f32 cold: kernel clock %.2f µs, events %.2f µs (n %d / %d)", kc.Stats.Median/1e3, ev.Stats.Median/1e3, kc.Stats.N, ev.Stats.N)
	if kc.Timer != TimerKernel || ev.Timer != TimerEvents {
		t.Errorf("timers %q and %q, want %q and %q", kc.Timer, ev.Timer, TimerKernel, TimerEvents)
	}
	if d := ev.Stats.Median - kc.Stats.Median; kc.Stats.Median <= 0 || d < -0.02*ev.Stats.Median || d > 20e3 {
		t.Errorf("kernel clock %.0f ns vs events %.0f ns: the difference should be the launch, a few µs", kc.Stats.Median, ev.Stats.Median)
	}
}
