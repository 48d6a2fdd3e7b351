package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// uncheckedFamily is test_scale with nothing to check against.
type uncheckedFamily struct{ enginetest.ScaleFamily }

func (uncheckedFamily) Name() string { return "test_unchecked" }
func (uncheckedFamily) Reference(profiler.Spec, profiler.Inputs, int, uint64) (*profiler.Reference, error) {
	return &profiler.Reference{Unchecked: true, Rows: "unchecked"}, nil
}

var uncheckedOnce sync.Once

func TestUncheckedStatus(t *testing.T) {
	uncheckedOnce.Do(func() { profiler.Register(uncheckedFamily{}) })
	r := run.NewRunner(&enginetest.MemBackend{})
	res := r.Run(context.Background(), profiler.Spec{Kernel: "test_unchecked", DType: profiler.F32, Dims: map[string]int{"N": 256}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusUnchecked || res.Verdict == nil || !res.Verdict.Unchecked || res.Stats.N == 0 {
		t.Fatalf("status %s %s verdict %+v", res.Status, res.Error, res.Verdict)
	}
	if res.Status.Failed() {
		t.Error("unchecked counts as failed")
	}
	sum := run.Summary{ByStatus: map[profiler.Status]int{profiler.StatusUnchecked: 1}, Total: 1}
	if sum.ExitCode() != 0 || !strings.Contains(sum.String(), "1 unchecked") {
		t.Errorf("summary %q exit %d", sum.String(), sum.ExitCode())
	}
}

// cannotRun refuses every program the way the CPU backend refuses user sources.
type cannotRun struct{ enginetest.MemBackend }

func (c *cannotRun) Compile(p profiler.Program) (profiler.Kernel, error) {
	return nil, fmt.Errorf("no: %w", profiler.ErrCannotRun)
}

func TestCannotRunIsInvalidWithBudget(t *testing.T) {
	enginetest.Register()
	res := run.NewRunner(&cannotRun{}).Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 256}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusInvalid || !strings.Contains(res.Error, "no: ") || len(res.Budget) != 1 {
		t.Errorf("status %s %q budget %v", res.Status, res.Error, res.Budget)
	}
}

func TestProgramKeyIncludesSource(t *testing.T) {
	a := profiler.Program{Source: "u", Entry: "k", Code: "int a;", File: "k.cu"}
	b := a
	b.Code = "int b;"
	c := a
	c.Includes = map[string]string{"h.h": "x"}
	if run.ProgramKey(a) == run.ProgramKey(b) || run.ProgramKey(a) == run.ProgramKey(c) || run.ProgramKey(a) != run.ProgramKey(a) {
		t.Error("the program key ignores the source or its includes")
	}
}

// versionedFamily is test_scale whose definition changes (a reloaded user kernel).
type versionedFamily struct {
	enginetest.ScaleFamily
	version string
	refs    *int
}

func (versionedFamily) Name() string      { return "test_versioned" }
func (v versionedFamily) Version() string { return v.version }
func (v versionedFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	*v.refs++
	return v.ScaleFamily.Reference(s, in, maxRows, seed)
}

func TestReferenceCacheFollowsVersion(t *testing.T) {
	n := 0
	profiler.Replace(versionedFamily{version: "a", refs: &n})
	r := run.NewRunner(&enginetest.MemBackend{})
	s := profiler.Spec{Kernel: "test_versioned", DType: profiler.F32, Dims: map[string]int{"N": 256}}
	for range 2 {
		if res := r.Run(context.Background(), s, enginetest.QuickOptions(), nil); res.Status != profiler.StatusOK {
			t.Fatalf("%s %s", res.Status, res.Error)
		}
	}
	if n != 1 {
		t.Fatalf("reference computed %d times for one version, want 1", n)
	}
	profiler.Replace(versionedFamily{version: "b", refs: &n})
	r.Run(context.Background(), s, enginetest.QuickOptions(), nil)
	if n != 2 {
		t.Errorf("a new version reused the cached reference (%d computations)", n)
	}
}
