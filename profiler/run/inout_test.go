package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// stepFamily is an in-place step x += g (an optimizer's shape): x is read
// and written by the kernel. With role inout every timed rep must start
// from x's initial values, so that after any number of reps x holds one
// step. The same plan with x as a plain output (role out, filled like an
// input but never restored) accumulates a step per rep: the check after
// timing must catch that, which shows the test can fail.
type stepFamily struct{ role profiler.Role }

func (f stepFamily) Name() string { return "test_step_" + string(f.role) }
func (stepFamily) Doc() string    { return "x += g in place (runner tests)" }
func (stepFamily) Schema() profiler.Schema {
	return profiler.Schema{Dims: []profiler.Param{{Name: "N", Min: 1, Max: 1 << 30, Default: 1000}}, DTypes: []profiler.DType{profiler.F32}}
}
func (stepFamily) Validate(profiler.Spec, profiler.DeviceInfo) error { return nil }
func (f stepFamily) Plan(s profiler.Spec, _ profiler.DeviceInfo) (*profiler.Plan, error) {
	n := s.Dims["N"]
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "x", Role: f.role, Type: profiler.F32, Elems: int64(n), Init: profiler.InitNormal, Scale: 1},
			{Name: "g", Role: profiler.In, Type: profiler.F32, Elems: int64(n), Init: profiler.InitNormal, Scale: 1},
		},
		Dispatches: []profiler.Dispatch{{Name: "step", Program: profiler.Program{Source: "test_step", Entry: "test_step"},
			Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1}, Args: []string{"x", "g"}}},
		FLOPs: float64(n), Bytes: float64(12 * n),
	}, nil
}
func (stepFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	x, g := in["x"], in["g"]
	c := profiler.Check{Buffer: "x"}
	for i := range x {
		c.Index = append(c.Index, i)
		c.Want = append(c.Want, float64(x[i])+float64(g[i]))
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(x), RowsTotal: len(x), Rows: "all"}, nil
}
func (stepFamily) Tolerance(d profiler.DType) profiler.Tolerance {
	return profiler.DefaultTolerances[d]
}

var registerStep sync.Once

func registerStepFamilies() {
	registerStep.Do(func() {
		host.RegisterKernel("test_step", func(g *host.Group) {
			x, d := g.Arg(0, profiler.F32), g.Arg(1, profiler.F32)
			for i := range x.Len() {
				x.Set(i, x.At(i)+d.At(i))
			}
		})
		profiler.Register(stepFamily{profiler.InOut})
		profiler.Register(stepFamily{profiler.Out})
	})
}

// noCopy hides the CPU backend's Copy: the runner then restores by upload.
type noCopy struct{ profiler.Backend }

func TestInOutRestoredBeforeEveryRep(t *testing.T) {
	registerStepFamilies()
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 20, MinTime: 1e-6, MaxTime: 1, MaxSamples: 40}
	opt.Cache = profiler.CacheHot
	opt.Warmup = 1e-6
	for _, tc := range []struct {
		name    string
		backend profiler.Backend
		role    profiler.Role
		want    profiler.Status
	}{
		{"inout, device copy", be, profiler.InOut, profiler.StatusOK},
		{"inout, upload", noCopy{be}, profiler.InOut, profiler.StatusOK},
		{"out, never restored", be, profiler.Out, profiler.StatusMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run.NewRunner(tc.backend)
			res := r.Run(context.Background(), profiler.Spec{Kernel: stepFamily{tc.role}.Name(), DType: profiler.F32, Dims: map[string]int{"N": 64}}, opt, nil)
			if res.Status != tc.want {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Error, tc.want)
			}
			if res.Stats.N < 20 {
				t.Errorf("%d samples: the test needs many reps", res.Stats.N)
			}
			if tc.want == profiler.StatusMismatch && !strings.Contains(res.Error, "wrong after the timed launches") {
				t.Errorf("error %q: want the check after timing to catch the accumulated steps", res.Error)
			}
		})
	}
}
