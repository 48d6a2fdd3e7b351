package run_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// countingFamily is test_scale that counts its Plan calls and fails the
// test's contract check: Plan must never see a spec Validate rejects.
type countingFamily struct {
	enginetest.ScaleFamily
	name     string
	plans    atomic.Int64
	badPlans atomic.Int64 // Plan called with a spec Validate rejects
}

func (f *countingFamily) Name() string { return f.name }
func (f *countingFamily) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	f.plans.Add(1)
	if f.Validate(s, dev) != nil {
		f.badPlans.Add(1)
	}
	return f.ScaleFamily.Plan(s, dev)
}

func newCounting(t *testing.T) *countingFamily {
	f := &countingFamily{name: "test_prep_" + strings.ReplaceAll(t.Name(), "/", "_")}
	profiler.Replace(f)
	return f
}

func TestPrepareStages(t *testing.T) {
	fam := newCounting(t)
	dev := profiler.DeviceInfo{Backend: "cuda", Name: "small", MemoryBytes: 1 << 20}
	spec := func(wg, n int) profiler.Spec {
		return profiler.Spec{Kernel: fam.name, DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}
	}
	cases := []struct {
		name     string
		spec     profiler.Spec
		stage    run.PrepareStage // "" for success
		badInput bool
		planned  bool // the Prepared holds a plan
	}{
		{"ok", spec(64, 1000), "", false, true},
		{"unknown kernel", profiler.Spec{Kernel: "no_such_kernel"}, run.StageKernel, true, false},
		{"off schema", spec(48, 1000), run.StageSchema, true, false},
		{"family rules", spec(128, 7), run.StageRules, false, false},
		{"does not fit", spec(64, 1<<20), run.StageFit, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := run.Prepare(c.spec, dev, run.PrepareOptions{})
			if p == nil {
				t.Fatal("Prepare returned no Prepared")
			}
			if (p.Plan != nil) != c.planned {
				t.Errorf("plan %v, want planned=%v", p.Plan, c.planned)
			}
			if c.stage == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if p.Spec.Flags == nil && p.Spec.Knobs["WG"] != 64 {
					t.Errorf("spec not resolved: %v", p.Spec)
				}
				return
			}
			var pe *run.PrepareError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *PrepareError", err, err)
			}
			if pe.Stage != c.stage || pe.BadInput() != c.badInput {
				t.Errorf("stage %s bad input %v, want %s %v (%v)", pe.Stage, pe.BadInput(), c.stage, c.badInput, err)
			}
			if c.stage == run.StageFit && p.Fit == nil {
				t.Error("a plan that does not fit has no Fit verdict")
			}
		})
	}
	if n := fam.badPlans.Load(); n != 0 {
		t.Errorf("Plan was called %d times with a spec Validate rejects", n)
	}
}

func TestPrepareSkipFit(t *testing.T) {
	fam := newCounting(t)
	dev := profiler.DeviceInfo{Backend: "cuda", MemoryBytes: 1 << 20}
	s := profiler.Spec{Kernel: fam.name, DType: profiler.F32, Dims: map[string]int{"N": 1 << 20}}
	if _, err := run.Prepare(s, dev, run.PrepareOptions{SkipFit: true}); err != nil {
		t.Errorf("SkipFit still checked memory: %v", err)
	}
}

func TestPlanCache(t *testing.T) {
	fam := newCounting(t)
	devA := profiler.DeviceInfo{Backend: "cpu", Name: "a"}
	devB := profiler.DeviceInfo{Backend: "cpu", Name: "b"}
	s := func(n int) profiler.Spec {
		return profiler.Spec{Kernel: fam.name, DType: profiler.F32, Dims: map[string]int{"N": n}}
	}
	c := run.NewPlanCache(2)
	o := run.PrepareOptions{Cache: c, SkipFit: true}
	first, _ := run.Prepare(s(10), devA, o)
	again, _ := run.Prepare(s(10), devA, o)
	if fam.plans.Load() != 1 || c.Hits() != 1 || first.Plan != again.Plan {
		t.Fatalf("same spec and device: %d plans, %d hits, shared %v; want 1 plan, 1 hit, one plan", fam.plans.Load(), c.Hits(), first.Plan == again.Plan)
	}
	run.Prepare(s(10), devB, o)
	if fam.plans.Load() != 2 {
		t.Errorf("another device reused the plan (%d plans)", fam.plans.Load())
	}
	// The cache holds 2: a third spec drops the others.
	run.Prepare(s(11), devA, o)
	run.Prepare(s(10), devA, o)
	if fam.plans.Load() != 4 {
		t.Errorf("cache of 2 kept more: %d plans, want 4", fam.plans.Load())
	}
	// A reloaded family (a new value under the same name) plans afresh.
	fresh := &countingFamily{name: fam.name}
	profiler.Replace(fresh)
	run.Prepare(s(10), devA, o)
	if fresh.plans.Load() != 1 {
		t.Errorf("a replaced family got the old family's plan")
	}
	// Without a cache, every call plans.
	run.Prepare(s(10), devA, run.PrepareOptions{SkipFit: true})
	run.Prepare(s(10), devA, run.PrepareOptions{SkipFit: true})
	if fresh.plans.Load() != 3 {
		t.Errorf("nil cache: %d plans, want 3", fresh.plans.Load())
	}
}

// A rules error is cached like a plan: asking again does not validate again.
func TestPlanCacheKeepsRefusals(t *testing.T) {
	fam := newCounting(t)
	c := run.NewPlanCache(0)
	s := profiler.Spec{Kernel: fam.name, DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"N": 7}}
	for range 3 {
		if _, err := run.Prepare(s, profiler.DeviceInfo{}, run.PrepareOptions{Cache: c}); err == nil {
			t.Fatal("the family's rule was not applied")
		}
	}
	if c.Hits() != 2 || fam.plans.Load() != 0 {
		t.Errorf("hits %d plans %d, want 2 hits and no plan", c.Hits(), fam.plans.Load())
	}
}
