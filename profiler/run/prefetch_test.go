package run_test

import (
	"context"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

type precompilingBackend struct {
	enginetest.MemBackend

	pre []string
}

func (b *precompilingBackend) Precompile(p profiler.Program) {
	b.pre = append(b.pre, p.Source+" "+p.Macros[0].Value)
}

func TestRunJobsPrefetchesNextSpec(t *testing.T) {
	b := &precompilingBackend{}
	r := run.NewRunner(b)
	var jobs []profiler.Job
	for _, wg := range []int{32, 64, 32} {
		jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": 64}}, Options: enginetest.QuickOptions()})
	}
	sum, err := run.Jobs(context.Background(), r, jobs, nil, nil, run.Hooks{})
	if err != nil || sum.ByStatus[profiler.StatusOK] != 3 {
		t.Fatalf("%v %+v", err, sum)
	}
	// spec 2 (WG=64) is precompiled while spec 1 runs; spec 3 (WG=32) is
	// already compiled by then and is not asked for again
	if len(b.pre) != 1 || b.pre[0] != "scale 64" {
		t.Errorf("precompiled %v", b.pre)
	}
}
