package cli

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// selftestSpecs are small, fast specs, valid on every backend (knobs set
// explicitly: BQ a multiple of 16·WM for CUDA, TGM under Metal's 32 KB), that
// exercise the tiled attention
// path (causal, a partial last tile, GQA) and a reduction.
var selftestSpecs = []profiler.Spec{
	{Kernel: "attn_fwd", DType: profiler.F32, Knobs: map[string]int{"BQ": 32, "BK": 16, "WM": 2}, Dims: map[string]int{"B": 1, "H": 4, "Hkv": 2, "Lq": 100, "Lk": 130, "D": 64}, Flags: map[string]bool{"causal": true}},
	{Kernel: "attn_fwd", DType: profiler.BF16, Knobs: map[string]int{"BQ": 32, "BK": 16, "WM": 2}, Dims: map[string]int{"B": 1, "H": 4, "Hkv": 4, "Lq": 256, "Lk": 256, "D": 128}},
	{Kernel: "softmax_bwd", DType: profiler.F16, Dims: map[string]int{"rows": 256, "cols": 1000}},
}

const (
	selftestSummary = "check the device, its timer and two kernels; a report for bug reports"
	selftestHelp    = `  mltop selftest [--backend B]          checks the device, its timer and two kernels against
                                        the reference; prints a report for bug reports
`
)

// runSelftest prints a report a user can paste into a bug report. It runs in
// process so that a failure shows where it happened.
func runSelftest(ctx context.Context, s *session, a *backendArgs, pos []string) error {
	stdout, backend := s.stdout, &a.backend
	if err := noArgs("selftest", pos); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mltop selftest — %s/%s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	for _, b := range probeBackends() {
		fmt.Fprintf(stdout, "  backend %-6s available=%-5t %s\n", b.name, b.available, b.reason)
	}
	printTools(ctx, stdout, "  ")
	b, name, err := openBackend(*backend)
	if err != nil {
		fmt.Fprintf(stdout, "FAIL open %s: %v\n", name, err)
		return &exitError{code: exitFailed}
	}
	runner := run.NewRunner(b)
	defer runner.Close()
	dev := runner.Device()
	fmt.Fprintf(stdout, "device: %s (%s, %s), %d %ss, TGM %d B/group, %d threads/group, timer %s\n",
		dev.Name, dev.Backend, dev.Arch, dev.Units, dev.UnitName, dev.TGMPerGroup, dev.MaxThreadsPerGroup, dev.Timer)
	passed, failed := 0, 0
	check := func(c run.SelfCheck) {
		mark := "ok  "
		if c.OK {
			passed++
		} else {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", mark, c.Name, c.Detail)
	}
	if st, ok := b.(run.SelfTester); ok {
		for _, c := range st.SelfTest() {
			check(c)
		}
	}
	opt := profiler.DefaultOptions()
	opt.Stop.MaxTime, opt.Stop.MinTime, opt.Warmup = 0.5, 0.05, 0.01
	for _, s := range selftestSpecs {
		start := time.Now()
		res := runner.Run(ctx, s, opt, nil)
		wall := time.Since(start).Seconds()
		detail := fmt.Sprintf("%s, timer %s, median %.2f µs over %d samples", res.Status, res.Timer, res.Stats.Median/1e3, res.Stats.N)
		if res.Verdict != nil {
			detail += fmt.Sprintf(", max rel err %.2e (%s)", res.Verdict.MaxRelErr, res.Verdict.Rows)
		}
		if res.Error != "" {
			detail += ": " + res.Error
		}
		check(run.SelfCheck{Name: s.String(), OK: res.Status == profiler.StatusOK, Detail: detail})
		// The timer can never report more kernel time than wall time passed.
		measured := res.Stats.Mean * float64(res.Stats.N) / 1e9
		check(run.SelfCheck{Name: "timer ≤ wall clock for " + s.Kernel, OK: res.Stats.N > 0 && measured <= wall,
			Detail: fmt.Sprintf("%.4f s of samples within %.4f s of wall time", measured, wall)})
	}
	fmt.Fprintf(stdout, "selftest: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return &exitError{code: exitFailed}
	}
	return nil
}
