package profiler

import (
	"context"
	"testing"
)

type precompilingBackend struct {
	memBackend
	pre []string
}

func (b *precompilingBackend) Precompile(p Program) {
	b.pre = append(b.pre, p.Source+" "+p.Macros[0].Value)
}

func TestRunJobsPrefetchesNextSpec(t *testing.T) {
	b := &precompilingBackend{}
	r := NewRunner(b)
	var jobs []Job
	for _, wg := range []int{32, 64, 32} {
		jobs = append(jobs, Job{Spec: Spec{Kernel: "test_scale", DType: F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": 64}}, Options: quickOptions()})
	}
	sum, err := RunJobs(context.Background(), r, jobs, nil, nil, SweepHooks{})
	if err != nil || sum.ByStatus[StatusOK] != 3 {
		t.Fatalf("%v %+v", err, sum)
	}
	// spec 2 (WG=64) is precompiled while spec 1 runs; spec 3 (WG=32) is
	// already compiled by then and is not asked for again
	if len(b.pre) != 1 || b.pre[0] != "scale 64" {
		t.Errorf("precompiled %v", b.pre)
	}
}
