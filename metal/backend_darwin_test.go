//go:build darwin

package metal

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// These tests need a Mac with Apple silicon; they skip elsewhere (and on a
// Mac where no Metal device can be created, e.g. some CI VMs).
func openOrSkip(t *testing.T) *Backend {
	t.Helper()
	b, err := open()
	if err != nil {
		t.Skipf("no Metal device: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestDeviceOnMac(t *testing.T) {
	b := openOrSkip(t)
	d := b.Info()
	t.Logf("%s (%s): %d cores, TGM %d B/group, %d threads/group, timer %s, notes %v", d.Name, d.Arch, d.Units, d.TGMPerGroup, d.MaxThreadsPerGroup, d.Timer, d.Notes)
	if d.TGMPerGroup < 16<<10 || d.MaxThreadsPerGroup < 256 {
		t.Fatalf("implausible limits: %+v", d)
	}
}

func TestSelfTestTimestampsOnMac(t *testing.T) {
	b := openOrSkip(t)
	rep, err := SelfTestTimestamps(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.String())
	if !rep.OK {
		t.Fatal("timestamp self-test failed")
	}
}

func TestKernelsOnMac(t *testing.T) {
	b := openOrSkip(t)
	runner := run.NewRunner(b)
	opt := profiler.DefaultOptions()
	opt.Stop.MaxTime, opt.Stop.MinTime, opt.Warmup = 0.3, 0.02, 0.01
	specs := []profiler.Spec{
		{Kernel: "attn_fwd", DType: profiler.F32, Dims: map[string]int{"B": 1, "H": 4, "Hkv": 2, "Lq": 100, "Lk": 130, "D": 64}, Flags: map[string]bool{"causal": true}},
		{Kernel: "attn_fwd", DType: profiler.F16, Knobs: map[string]int{"BQ": 32, "BK": 32, "WM": 2, "WN": 2}, Dims: map[string]int{"Lq": 256, "Lk": 256, "D": 128}},
		{Kernel: "attn_fwd", DType: profiler.BF16, Dims: map[string]int{"Lq": 200, "Lk": 120, "D": 96}, Flags: map[string]bool{"causal": true}},
		{Kernel: "softmax_bwd", DType: profiler.BF16, Dims: map[string]int{"rows": 256, "cols": 1000}},
	}
	for _, s := range specs {
		res := runner.Run(context.Background(), s, opt, nil)
		if res.Status != profiler.StatusOK {
			t.Errorf("%s %s: %s: %s", s.Kernel, s.DType, res.Status, res.Error)
			continue
		}
		t.Logf("%s %s: median %.1f µs (%s), max abs err %.3g, budget %+v", s.Kernel, s.DType, res.Stats.Median/1e3, res.Timer, res.Verdict.MaxAbsErr, res.Budget)
		for _, bud := range res.Budget {
			if bud.CompilerTGM != 0 && bud.CompilerTGM != bud.Total {
				t.Errorf("%s: compiler reports %d B static TGM, the plan's items sum to %d B", s.Kernel, bud.CompilerTGM, bud.Total)
			}
		}
	}
}
