package run_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A multi-device sweep hands out the dearest shape first, a shape's specs
// together (dearest first within it), and the cheap shapes last; specs
// the device refuses cost nothing and come at the end. N=300 and N=100
// cost about the same device time: the one with less host work comes
// first, as N=300's would otherwise get ahead of the device work.
func TestJobsOnDevicesOrder(t *testing.T) {
	var jobs []profiler.Job
	for _, n := range []int{100, 5000, 300} {
		for _, wg := range []int{32, 64} {
			jobs = append(jobs, profiler.Job{Spec: scaleSpec(n, wg)})
		}
	}
	jobs = append(jobs, profiler.Job{Spec: scaleSpec(7, 128)}) // refused by the family's rules
	// a longer time limit makes a cheap shape's spec dear
	slow := profiler.Job{Spec: scaleSpec(200, 32)}
	slow.Options.Stop.MaxTime = 60
	jobs = append([]profiler.Job{slow}, jobs...)

	dev := &fakeDevice{name: "one"}
	if _, err := run.JobsOnDevices(context.Background(), []run.Device{{Exec: dev}}, jobs, nil, nil, run.Hooks{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range dev.ran {
		for _, j := range jobs {
			if j.Spec.Key() == k {
				got = append(got, fmt.Sprintf("N=%d WG=%d", j.Spec.Dims["N"], j.Spec.Knobs["WG"]))
			}
		}
	}
	want := []string{"N=200 WG=32", "N=5000 WG=32", "N=5000 WG=64", "N=100 WG=32", "N=100 WG=64", "N=300 WG=32", "N=300 WG=64", "N=7 WG=128"}
	if !slices.Equal(got, want) {
		t.Errorf("order\n%v\nwant\n%v", got, want)
	}
}

// SpecCost grows with the kernel's work and with the spec's time limit,
// and is 0 for a spec the device refuses.
func TestSpecCost(t *testing.T) {
	dev := profiler.DeviceInfo{Name: "cpu", Units: 1}
	small := run.SpecCost(profiler.Job{Spec: scaleSpec(1000, 32)}, dev, nil)
	big := run.SpecCost(profiler.Job{Spec: scaleSpec(1<<30, 32)}, dev, nil)
	long := profiler.Job{Spec: scaleSpec(1000, 32)}
	long.Options.Stop.MaxTime = 30
	if !(small > 0 && big > small+2) {
		t.Errorf("cost of N=1000 %g s, of N=2^30 %g s: the larger kernel (about 1 s a run on one core) should cost 3 runs more", small, big)
	}
	if c := run.SpecCost(long, dev, nil); c < small+10 {
		t.Errorf("a 30 s time limit costs %g s, N=1000 at the default %g s", c, small)
	}
	if c := run.SpecCost(profiler.Job{Spec: scaleSpec(7, 128)}, dev, nil); c != 0 {
		t.Errorf("a refused spec costs %g", c)
	}
}

// With N devices the first N shapes handed out are the ones with the least
// host work per second of device work (their host work cannot be hidden
// behind a shape before them); the rest follow dearest first, but a shape
// whose host work would get ahead of the device work waits for a dear
// one with little host work: here shape 1 (the dearest, with over half of
// the sweep's host bytes) follows shape 2 (long, almost none).
func TestOrderLeadsWithLightShapes(t *testing.T) {
	type shape struct {
		n     int
		cost  float64 // seconds of device work per spec
		bytes float64 // host work of the shape
	}
	shapes := []shape{
		{1, 10, 8e9}, // dearest, and the most host work per second
		{2, 8, 1e6},  // long and light: a lead with 2 devices
		{3, 6, 6e9},
		{4, 3, 1e5}, // the lightest per second: the lead with 1 device
		{5, 1, 1e9},
	}
	var jobs []profiler.Job
	byN := map[int]shape{}
	for _, s := range shapes {
		byN[s.n] = s
		for wg := range 2 {
			jobs = append(jobs, profiler.Job{Spec: scaleSpec(s.n, 32<<wg)})
		}
	}
	cost := func(j profiler.Job) float64 { return byN[j.Spec.Dims["N"]].cost }
	host := func(j profiler.Job) float64 { return byN[j.Spec.Dims["N"]].bytes }
	firsts := func(out []profiler.Job) []int {
		var ns []int
		for _, j := range out {
			if n := j.Spec.Dims["N"]; len(ns) == 0 || ns[len(ns)-1] != n {
				ns = append(ns, n)
			}
		}
		return ns
	}
	cases := []struct {
		leads int
		want  []int
	}{
		{0, []int{2, 1, 4, 3, 5}},
		{1, []int{4, 2, 1, 3, 5}},
		{2, []int{2, 4, 1, 3, 5}},
		{5, []int{2, 1, 4, 3, 5}}, // as many leads as shapes: no leads
	}
	for _, c := range cases {
		if got := firsts(run.OrderJobs(jobs, cost, host, c.leads)); !slices.Equal(got, c.want) {
			t.Errorf("%d leads: shapes in order %v, want %v", c.leads, got, c.want)
		}
	}
	// a shape whose first spec the device refuses (no host bytes) is
	// judged by its next spec, not taken for a light one
	refusedFirst := func(j profiler.Job) float64 {
		if j.Spec.Dims["N"] == 1 && j.Spec.Knobs["WG"] == 32 {
			return 0
		}
		return host(j)
	}
	if got := firsts(run.OrderJobs(jobs, cost, refusedFirst, 1)); !slices.Equal(got, []int{4, 2, 1, 3, 5}) {
		t.Errorf("first spec refused: %v", got)
	}
	if got := firsts(run.OrderJobs(jobs, cost, nil, 2)); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("without host work: %v", got)
	}
	// host work in proportion to device work everywhere: dearest first
	even := func(j profiler.Job) float64 { return 1e9 * cost(j) }
	if got := firsts(run.OrderJobs(jobs, cost, even, 0)); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("host work in proportion: %v", got)
	}
}

// The cost of ordering a sweep of as many shapes as spreadHostWork takes
// (2000, every spec its own shape; its work grows with their square).
// Larger sweeps skip the spreading.
func BenchmarkOrderJobsManyShapes(b *testing.B) {
	jobs := make([]profiler.Job, 2000)
	for i := range jobs {
		jobs[i] = profiler.Job{Spec: scaleSpec(1000+i, 32)}
	}
	cost := func(j profiler.Job) float64 { return float64(j.Spec.Dims["N"] % 97) }
	host := func(j profiler.Job) float64 { return float64(j.Spec.Dims["N"] % 89 * 1e6) }
	for b.Loop() {
		run.OrderJobs(jobs, cost, host, 4)
	}
}
