package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"

	"github.com/mltop/mltop/profiler/run"
)

func TestSummaryExitCode(t *testing.T) {
	cases := []struct {
		s    run.Summary
		want int
	}{
		{run.Summary{}, 0},
		{run.Summary{Invalid: 1}, 2},
		{run.Summary{Failed: 1, Invalid: 1}, 1},
	}
	for _, c := range cases {
		if got := c.s.ExitCode(); got != c.want {
			t.Errorf("%+v: %d want %d", c.s, got, c.want)
		}
	}
}

// cancelAfter runs specs and cancels the sweep after the n-th.
type cancelAfter struct {
	n, ran int
	cancel func()
}

func (c *cancelAfter) Device() profiler.DeviceInfo { return profiler.DeviceInfo{} }
func (c *cancelAfter) Close() error                { return nil }
func (c *cancelAfter) Run(_ context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	c.ran++
	if c.ran == c.n {
		c.cancel()
	}
	return profiler.Result{Spec: s, Status: profiler.StatusOK}
}

func TestJobsCountsSpecsNotRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var jobs []profiler.Job
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: k}})
	}
	exec := &cancelAfter{n: 2, cancel: cancel}
	sum, err := run.Jobs(ctx, exec, jobs, map[string]bool{jobs[0].Spec.Key(): true}, nil, run.Hooks{})
	if err == nil {
		t.Fatal("no error after cancel")
	}
	if sum.NotRun != 2 || sum.Skipped != 1 || sum.ByStatus[profiler.StatusOK] != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if s := sum.String(); !strings.Contains(s, "2 not run") {
		t.Errorf("summary line %q", s)
	}
}

func TestEstimate(t *testing.T) {
	opt := profiler.DefaultOptions()
	opt.Warmup, opt.Stop.MinTime, opt.Stop.MaxTime = 0.5, 1, 10
	mk := func(wg, n int) profiler.Job {
		return profiler.Job{Spec: profiler.Spec{Kernel: "k", Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}, Options: opt}
	}
	lo, hi, builds := run.Estimate([]profiler.Job{mk(32, 1), mk(32, 2), mk(64, 1)})
	if lo != 4500*time.Millisecond || hi != 31500*time.Millisecond || builds != 2 {
		t.Errorf("lo %v hi %v builds %d", lo, hi, builds)
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45 s", 20 * time.Minute: "20 min", 5 * time.Hour: "5.0 h", 72 * time.Hour: "3.0 days"} {
		if got := run.FormatDuration(d); got != want {
			t.Errorf("%v: %q want %q", d, got, want)
		}
	}
}

func TestSummaryOneSpec(t *testing.T) {
	s := run.Summary{Total: 1, ByStatus: map[profiler.Status]int{profiler.StatusOK: 1}}
	if got := s.String(); got != "1 spec: 1 ok" {
		t.Errorf("%q", got)
	}
}
