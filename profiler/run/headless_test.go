package run_test

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
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

// cancelAfterShared is cancelAfter for several devices at once: the
// sweep is cancelled after the n-th result of all of them.
type cancelAfterShared struct {
	n      int
	ran    *atomic.Int64
	cancel func()
}

func (c cancelAfterShared) Device() profiler.DeviceInfo { return profiler.DeviceInfo{} }
func (c cancelAfterShared) Close() error                { return nil }
func (c cancelAfterShared) Run(ctx context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	k := c.ran.Add(1)
	if k == int64(c.n) {
		c.cancel()
	}
	if k >= int64(c.n) {
		// A spec that runs as the sweep is cancelled ends with it. A fake
		// runs in no time: without this wait the other device could run
		// every spec between the nth run's start and its cancel.
		<-ctx.Done()
	}
	return profiler.Result{Spec: s, Status: profiler.StatusOK}
}

// An interrupted sweep on several devices counts the specs it did not
// run, as one device does: the CLI's "N of M specs still to measure"
// comes from it.
func TestJobsOnDevicesCountSpecsNotRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var jobs []profiler.Job
	for i := range 10 {
		jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: "k", Dims: map[string]int{"N": i}}})
	}
	var ran atomic.Int64
	devs := []run.Device{{Ordinal: 0, Exec: cancelAfterShared{2, &ran, cancel}}, {Ordinal: 1, Exec: cancelAfterShared{2, &ran, cancel}}}
	sum, err := run.JobsOnDevices(ctx, devs, jobs, nil, nil, run.Hooks{}, io.Discard)
	if err == nil {
		t.Fatal("no error after cancel")
	}
	done := 0
	for _, n := range sum.ByStatus {
		done += n
	}
	if sum.NotRun == 0 || done+sum.NotRun != len(jobs) {
		t.Fatalf("%d results and %d not run, want %d in all: %+v", done, sum.NotRun, len(jobs), sum)
	}
	if s := sum.String(); !strings.Contains(s, "not run") {
		t.Errorf("summary line %q", s)
	}
}

func TestEstimate(t *testing.T) {
	opt := profiler.DefaultOptions()
	opt.Warmup, opt.Stop.MinTime, opt.Stop.MaxTime = 0.5, 1, 10
	mk := func(wg, n int) profiler.Job {
		return profiler.Job{Spec: profiler.Spec{Kernel: "k", Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}, Options: opt}
	}
	e := run.Estimate([]profiler.Job{mk(32, 1), mk(32, 2), mk(64, 1)}, nil)
	if e.Lo != 4500*time.Millisecond || e.Hi != 31500*time.Millisecond || e.Builds != 2 || e.Slow != 0 {
		t.Errorf("lo %v hi %v builds %d slow %d", e.Lo, e.Hi, e.Builds, e.Slow)
	}
	// A min_time over the time limit: sampling stops at the limit, so the
	// least is the limit too (not more than the most).
	opt.Stop.MinTime, opt.Stop.MaxTime = 5, 0.1
	if e := run.Estimate([]profiler.Job{mk(32, 1)}, nil); e.Lo != 600*time.Millisecond || e.Hi != 600*time.Millisecond {
		t.Errorf("min_time over time_limit: lo %v hi %v, want 600ms both", e.Lo, e.Hi)
	}
}

func TestSummaryOneSpec(t *testing.T) {
	s := run.Summary{Total: 1, ByStatus: map[profiler.Status]int{profiler.StatusOK: 1}}
	if got := s.String(); got != "1 spec: 1 ok" {
		t.Errorf("%q", got)
	}
}

// TestEstimateSlowKernels: with a device, a spec whose one kernel run is
// long counts MinRuns runs however short its limits, its overrun of the
// time limit too, and the slowest is named; a spec the family's rules
// refuse counts only its limits.
func TestEstimateSlowKernels(t *testing.T) {
	opt := profiler.DefaultOptions()
	opt.Warmup, opt.Stop.MinTime, opt.Stop.MaxTime = 0.5, 1, 10
	mk := func(wg, n int) profiler.Job {
		return profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}, Options: opt}
	}
	// test_scale: N FLOPs, 8N bytes in f32; 1e9 FLOP/s per core, no peaks
	dev := profiler.DeviceInfo{Backend: "cpu", Units: 1}
	d, plan, err := run.KernelRunTime(dev, mk(32, 5e9).Spec)
	if err != nil || d != 5*time.Second || plan.FLOPs != 5e9 {
		t.Fatalf("KernelRunTime = %v, %v, %v; want 5 s for 5 GFLOP at 1 GFLOP/s", d, plan, err)
	}
	dev2 := profiler.DeviceInfo{Backend: "gpu", Units: 1, PeakFLOPS: map[profiler.DType]float64{profiler.F32: 1e12}, PeakBandwidth: 1e10}
	if d, _, _ := run.KernelRunTime(dev2, mk(32, 5e9).Spec); d != 4*time.Second {
		t.Errorf("bandwidth-bound run: %v, want 40 GB / 10 GB/s = 4 s", d)
	}
	if _, _, err := run.KernelRunTime(dev, mk(128, 7).Spec); err == nil || !strings.Contains(err.Error(), "rejected by the family's rules") {
		t.Errorf("a refused spec: %v", err)
	}
	// 5 s, 20 s, 1 µs and a refused one. lo: the 5 s kernel verifies,
	// warms up and samples min_samples (20) runs cut at the 10 s limit:
	// 5 + 5 + 10; the 20 s one runs three times; the others warm up 0.5 s
	// and sample min_time 1 s. hi = 10.5·4 + 15 + 60 + 3e-6.
	e := run.Estimate([]profiler.Job{mk(32, 5e9), mk(64, 2e10), mk(32, 1000), mk(128, 7)}, &dev)
	if e.Lo.Round(time.Millisecond) != 83*time.Second || e.Hi.Round(time.Millisecond) != 117*time.Second {
		t.Errorf("lo %v hi %v, want 1m23s and 1m57s", e.Lo, e.Hi)
	}
	// min_samples runs of a 0.2 s kernel (4 s) outweigh min_time: lo =
	// 0.2 + 0.5 + 4, where min_time alone would say 0.2 + 0.5 + 1.
	if e := run.Estimate([]profiler.Job{mk(32, 2e8)}, &dev); e.Lo.Round(time.Millisecond) != 4700*time.Millisecond {
		t.Errorf("min_samples runs of a 0.2 s kernel: lo %v, want 4.7s", e.Lo)
	}
	if e.Slow != 2 || e.SlowestRun != 20*time.Second || e.Slowest.Dims["N"] != 2e10 {
		t.Errorf("slow %d, slowest %v (%v), want 2 and N=2e10 at 20 s", e.Slow, e.Slowest, e.SlowestRun)
	}
}
