//go:build darwin

package metal

import (
	"context"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The runner's verification run goes through RunTimed: a darwin build
// without it fails here (go vet for darwin type-checks this on Linux).
var _ profiler.RunTimer = (*Backend)(nil)

// A spec's verification run reports its command buffer's GPU time, a
// part of verify.
func TestRunTimedOnMac(t *testing.T) {
	b := openOrSkip(t)
	opt := profiler.DefaultOptions()
	opt.Stop.MaxTime, opt.Stop.MinTime, opt.Warmup = 0.3, 0.02, 0.01
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Dims: map[string]int{"rows": 256, "cols": 4096}}
	res := run.NewRunner(b).Run(context.Background(), s, opt, nil)
	if res.Status != profiler.StatusOK || res.Phases == nil {
		t.Fatalf("%s: %s (%s)", s, res.Status, res.Error)
	}
	p := res.Phases
	t.Logf("verify %.3f ms, of it the kernel's run %.3f ms", 1e3*p.Verify, 1e3*p.VerifyGPU)
	if p.VerifyGPU <= 0 || p.VerifyGPU > p.Verify {
		t.Errorf("verify_gpu %g s with verify %g s: want a part of verify", p.VerifyGPU, p.Verify)
	}
}
