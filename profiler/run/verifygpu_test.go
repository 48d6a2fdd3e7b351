package run_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// runTimedBackend is enginetest.MemBackend that times its runs
// (profiler.RunTimer): every RunTimed reports perRun seconds of device
// time, far more than the spec's wall time, so that a VerifyGPU counted
// in Total as well as in Verify would show.
type runTimedBackend struct {
	enginetest.MemBackend
	perRun    float64
	runsTimed int
}

func (b *runTimedBackend) RunTimed(ls []profiler.Launch) (float64, error) {
	b.runsTimed++
	return b.perRun, b.Run(ls)
}

// setupScale is test_scale with a setup dispatch (the same kernel) run
// before the verified run: both are verification runs.
type setupScale struct{ enginetest.ScaleFamily }

func (setupScale) Name() string { return "test_scale_setup" }
func (f setupScale) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	p, err := f.ScaleFamily.Plan(s, dev)
	if err == nil {
		p.Setup = []profiler.Dispatch{p.Dispatches[0]}
	}
	return p, err
}

var registerSetupScale sync.Once

func TestRunnerVerifyGPU(t *testing.T) {
	registerSetupScale.Do(func() { profiler.Register(setupScale{}) })
	const perRun = 1000.0 // seconds: no spec here lasts that long
	for _, c := range []struct {
		name        string
		kernel      string
		timed       bool
		wantRuns    int
		wantSeconds float64
	}{
		{"one verification run", "test_scale", true, 1, perRun},
		{"setup and verification runs", "test_scale_setup", true, 2, 2 * perRun},
		{"backend without RunTimer", "test_scale", false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := &runTimedBackend{perRun: perRun}
			var b profiler.Backend = tb
			if !c.timed {
				b = &tb.MemBackend
			}
			res := run.NewRunner(b).Run(context.Background(), profiler.Spec{Kernel: c.kernel, DType: profiler.F32, Dims: map[string]int{"N": 100}}, enginetest.QuickOptions(), nil)
			if res.Status != profiler.StatusOK || res.Phases == nil {
				t.Fatalf("status %s (%s), phases %v", res.Status, res.Error, res.Phases)
			}
			p := res.Phases
			if tb.runsTimed != c.wantRuns || p.VerifyGPU != c.wantSeconds {
				t.Errorf("%d runs timed, verify_gpu %g s; want %d and %g", tb.runsTimed, p.VerifyGPU, c.wantRuns, c.wantSeconds)
			}
			// VerifyGPU is inside Verify: Total is still the spec's wall time.
			if tot := p.Total(); tot > res.WallSeconds*1.0001+1e-6 {
				t.Errorf("phases sum to %g s of a %g s spec: verify_gpu counted twice", tot, res.WallSeconds)
			}
		})
	}
}

// A sweep on one device counts the checks' runs its backend timed as the
// device running kernels: the share with them is the share measuring plus
// their time over the sweep's wall time, and the host's time loses them.
func TestSweepRunningShare(t *testing.T) {
	const perRun = 1e-7 // seconds; the summary counts at most the spec's verify phase
	for _, timed := range []bool{true, false} {
		tb := &runTimedBackend{perRun: perRun}
		var b profiler.Backend = tb
		if !timed {
			b = &tb.MemBackend
		}
		var results []profiler.Result
		sum, err := run.Jobs(context.Background(), run.NewRunner(b), scaleJobs(4), nil, nil, run.Hooks{Done: func(_, _ int, r profiler.Result) { results = append(results, r) }})
		if err != nil || len(sum.Devices) != 1 || len(results) != 4 {
			t.Fatalf("timed %v: %v, %d devices, %d results", timed, err, len(sum.Devices), len(results))
		}
		d := sum.Devices[0]
		reported, wantChecks, host := 0.0, 0.0, 0.0
		for _, r := range results {
			p := r.Phases
			reported += p.VerifyGPU
			wantChecks += min(p.VerifyGPU, p.Verify)
			host += r.WallSeconds + p.Worker - p.Warmup - p.Measure - min(p.VerifyGPU, p.Verify)
		}
		if want := map[bool]float64{true: 4 * perRun}[timed]; math.Abs(reported-want) > 1e-15 {
			t.Errorf("timed %v: %d runs timed, %g s in the results; want %g", timed, tb.runsTimed, reported, want)
		}
		if math.Abs(d.CheckRuns-wantChecks) > 1e-15 || math.Abs(d.Host-host) > 1e-12 {
			t.Errorf("timed %v: checks' runs %g, host %g; want %g and %g", timed, d.CheckRuns, d.Host, wantChecks, host)
		}
		if got, want := sum.RunningShare()-sum.BusyShare(), wantChecks/sum.WallSeconds; math.Abs(got-want) > 1e-12 {
			t.Errorf("timed %v: running share %g - busy share %g = %g, want %g", timed, sum.RunningShare(), sum.BusyShare(), got, want)
		}
		if line := sum.DeviceLines()[0]; strings.Contains(line, "running kernels") != timed {
			t.Errorf("timed %v: %q", timed, line)
		}
	}
}
