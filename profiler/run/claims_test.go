package run_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

// enteredDevice is a fakeDevice that says when its first Run starts.
type enteredDevice struct {
	*fakeDevice
	entered chan struct{}
	once    sync.Once
}

func (d *enteredDevice) Run(ctx context.Context, s profiler.Spec, o profiler.Options, p func(profiler.Progress)) profiler.Result {
	d.once.Do(func() { close(d.entered) })
	return d.fakeDevice.Run(ctx, s, o, p)
}

// claimSweep is a sweep of 30 specs over 10 shapes, and its jobs.
func claimSweep(t *testing.T) (*sweep.Stream, []profiler.Job) {
	t.Helper()
	return sweepOf(t, "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, bf16]\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 1000, 10000, 100000, 1000000]}\n")
}

// sweepOf is the sweep a file of yaml holds, and its jobs.
func sweepOf(t *testing.T, yaml string) (*sweep.Stream, []profiler.Job) {
	t.Helper()
	st, err := sweep.ParseStream("s.yaml", []byte(yaml), profiler.DefaultOptions(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := st.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st, all
}

func openClaims(t *testing.T, dir string, part, parts int) *run.DirClaims {
	t.Helper()
	c, err := run.OpenDirClaims(dir, part, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Two shards with claims, the second held on its first spec until the
// first has finished: the first runs its own specs and then every unit
// of the second (a shape's specs dealt to it) but the one it holds,
// which the second runs whole; each spec of the sweep runs exactly once,
// and the summaries count what was given and taken — on one device and
// on several (--devices with --shard).
func TestClaimsLetAShardTakeTheOthersSpecs(t *testing.T) {
	for _, devices := range []int{1, 2} {
		t.Run(map[int]string{1: "one device", 2: "two devices"}[devices], func(t *testing.T) {
			st, all := claimSweep(t)
			dir := t.TempDir()
			slow := &enteredDevice{fakeDevice: &fakeDevice{name: "slow", gate: make(chan struct{})}, entered: make(chan struct{})}
			var slowSum run.Summary
			var slowErr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				cfg := run.SweepConfig{Source: st, Exec: slow, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: openClaims(t, dir, 1, 2)}
				slowSum, slowErr = run.Sweep(context.Background(), cfg)
			}()
			<-slow.entered
			fast := []*fakeDevice{{name: "a"}, {name: "b"}}[:devices]
			cfg := run.SweepConfig{Source: st, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: openClaims(t, dir, 0, 2)}
			if devices == 1 {
				cfg.Exec = fast[0]
			} else {
				cfg.OpenDevices = func() ([]run.Device, error) {
					return []run.Device{{Exec: fast[0], Ordinal: 0}, {Exec: fast[1], Ordinal: 1}}, nil
				}
			}
			fastSum, err := run.Sweep(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			close(slow.gate)
			<-done
			if slowErr != nil {
				t.Fatal(slowErr)
			}
			ran := map[string]int{}
			fastRan := 0
			for _, d := range append(fast, slow.fakeDevice) {
				for _, k := range d.ran {
					ran[k]++
				}
				if d != slow.fakeDevice {
					fastRan += len(d.ran)
				}
			}
			for _, j := range all {
				if ran[j.Spec.Key()] != 1 {
					t.Errorf("%s ran %d times", j.Spec, ran[j.Spec.Key()])
				}
			}
			on := map[string]map[string]bool{} // shape → the devices that ran some of it
			for _, d := range append(fast, slow.fakeDevice) {
				for _, k := range d.ran {
					sh := shapeOf(specOf(t, all, k))
					if on[sh] == nil {
						on[sh] = map[string]bool{}
					}
					on[sh][map[bool]string{true: "held", false: "other"}[d == slow.fakeDevice]] = true
				}
			}
			for sh, by := range on {
				if len(by) > 1 {
					t.Errorf("shape %s ran on both shards: its inputs were made twice", sh)
				}
			}
			unit := 0 // the specs of the held shard's first shape
			for _, j := range all {
				if shapeOf(j.Spec) == shapeOf(specOf(t, all, slow.ran[0])) {
					unit++
				}
			}
			if len(slow.ran) != unit || fastRan != len(all)-unit {
				t.Errorf("the held shard ran %d specs, the other %d; want %d and %d", len(slow.ran), fastRan, unit, len(all)-unit)
			}
			if fastSum.Taken == 0 || fastSum.Taken != slowSum.Given || fastSum.Given != 0 || slowSum.Taken != 0 {
				t.Errorf("taken %d / given %d by the fast shard, %d / %d by the held one", fastSum.Taken, fastSum.Given, slowSum.Taken, slowSum.Given)
			}
			if fastSum.Total != fastRan || slowSum.Total != unit {
				t.Errorf("totals %d and %d, want %d and %d", fastSum.Total, slowSum.Total, fastRan, unit)
			}
			probe := &fakeDevice{name: "probe"} // shard 0's own specs
			if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 0, Count: 2}}); err != nil {
				t.Fatal(err)
			}
			for _, d := range fast {
				for _, k := range d.pre {
					if !slices.Contains(probe.ran, k) {
						t.Errorf("%s prepared ahead %s, another shard's spec: most of those their owner runs", d.name, k)
						break
					}
				}
			}
			if !strings.Contains(fastSum.String(), "taken from the other shards") {
				t.Errorf("summary %q does not say what was taken", fastSum.String())
			}
		})
	}
}

// stoppingDevice is a fakeDevice whose shard is stopped (as by a kill)
// on the first spec of another shard it runs: that spec comes back
// cancelled, after its unit was claimed.
type stoppingDevice struct {
	*fakeDevice
	other  func(key string) bool
	cancel func()
}

func (d *stoppingDevice) Run(ctx context.Context, s profiler.Spec, o profiler.Options, p func(profiler.Progress)) profiler.Result {
	if d.other(s.Key()) && d.cancel != nil {
		d.cancel()
		d.cancel = nil
		return profiler.Result{Spec: s, Device: d.name, Status: profiler.StatusCancelled}
	}
	return d.fakeDevice.Run(ctx, s, o, p)
}

// A shard stopped after it claimed another shard's unit: the other shard
// leaves that unit to it, and the stopped shard, started again with
// --resume, runs what it had not finished; every spec runs once (ok).
func TestClaimsOfAnInterruptedShardAreRunByIt(t *testing.T) {
	st, all := claimSweep(t)
	dir := t.TempDir()
	probe := &fakeDevice{name: "probe"} // which specs are shard 1's
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 1, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	ofShard1 := func(key string) bool { return slices.Contains(probe.ran, key) }
	ctx, cancel := context.WithCancel(context.Background())
	zero := &stoppingDevice{fakeDevice: &fakeDevice{name: "zero"}, other: ofShard1, cancel: cancel}
	var rows0 []profiler.Result
	c0 := openClaims(t, dir, 0, 2)
	cfg0 := run.SweepConfig{Source: st, Exec: zero, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: c0}
	if _, err := run.Sweep(ctx, cfg0, sinkFunc(func(r profiler.Result) { rows0 = append(rows0, r) })); err == nil {
		t.Fatal("the stopped shard says nothing of its interruption")
	}
	done := map[string]bool{}
	for _, r := range rows0 {
		if r.Status == profiler.StatusOK {
			done[r.Spec.Key()] = true
		}
	}
	one := &fakeDevice{name: "one"}
	sum1, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: one, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: openClaims(t, dir, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if sum1.Given == 0 || len(one.ran) != len(probe.ran)-sum1.Given {
		t.Errorf("shard 1 ran %d of its %d specs and gave %d: want the unit shard 0 claimed given", len(one.ran), len(probe.ran), sum1.Given)
	}
	again := &fakeDevice{name: "zero again"}
	cfg0.Exec, cfg0.Skip = again, done
	if _, err := run.Sweep(context.Background(), cfg0); err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, k := range append(append(slices.Clone(one.ran), again.ran...), slices.Collect(maps.Keys(done))...) {
		ran[k]++
	}
	for _, j := range all {
		if ran[j.Spec.Key()] != 1 {
			t.Errorf("%s ran %d times", j.Spec, ran[j.Spec.Key()])
		}
	}
	if len(again.ran) != sum1.Given {
		t.Errorf("started again, shard 0 ran %d specs; want the %d of the unit it claimed", len(again.ran), sum1.Given)
	}
}

// sinkFunc is a Sink of a function.
type sinkFunc func(profiler.Result)

func (f sinkFunc) Write(r profiler.Result) error { f(r); return nil }
func (f sinkFunc) Close() error                  { return nil }

// specOf is the spec of all whose key is key.
func specOf(t *testing.T, all []profiler.Job, key string) profiler.Spec {
	t.Helper()
	for _, j := range all {
		if j.Spec.Key() == key {
			return j.Spec
		}
	}
	t.Fatalf("no spec %s", key)
	return profiler.Spec{}
}

// A claim is the shard's own again (a second run of it), another shard's
// never; a directory of another split, or one that cannot be made, is
// refused with its path and what to do.
func TestDirClaims(t *testing.T) {
	dir := t.TempDir()
	a, b := openClaims(t, dir, 0, 2), openClaims(t, dir, 1, 2)
	for _, c := range []struct {
		who  *run.DirClaims
		key  string
		want bool
	}{
		{a, "k1", true}, {a, "k1", true}, {b, "k1", false}, {b, "k2", true}, {a, "k2", false},
	} {
		if got, err := c.who.Claim(c.key); got != c.want || err != nil {
			t.Errorf("claim %s: %v %v, want %v", c.key, got, err, c.want)
		}
	}
	if _, err := run.OpenDirClaims(dir, 0, 3); err == nil || !strings.Contains(err.Error(), "split 2 ways, and this shard is one of 3") {
		t.Errorf("another split: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run.OpenDirClaims(filepath.Join(file, "claims"), 0, 2); err == nil || !strings.Contains(err.Error(), "--claims "+filepath.Join(file, "claims")) {
		t.Errorf("a directory under a file: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".owner-*"))
	if len(left) != 1 { // b's, until its cleanup
		t.Errorf("owner files left: %v", left)
	}
}

// Shards that open one new directory at the same moment all get it: none
// reads the split file half written.
func TestDirClaimsOpenedAtOnce(t *testing.T) {
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("claims", round))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := run.OpenDirClaims(dir, i, len(errs))
				if err == nil {
					c.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, shard %d: %v", round, i, err)
			}
		}
	}
}

// brokenClaims fail every claim.
type brokenClaims struct{}

func (brokenClaims) Claim(string) (bool, error) { return false, errors.New("claims gone") }

// Claims that cannot be made: the shard runs its own specs all the same,
// takes no other's, and says so once.
func TestClaimsThatFailRunTheShardsOwn(t *testing.T) {
	st, all := claimSweep(t)
	dev := &fakeDevice{name: "d"}
	var log strings.Builder
	sum, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: dev, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: brokenClaims{}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	probe := &fakeDevice{name: "probe"}
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	if len(dev.ran) != len(probe.ran) || len(dev.ran) >= len(all) || sum.Taken != 0 || sum.Given != 0 {
		t.Errorf("ran %d (its deal %d of %d), taken %d, given %d", len(dev.ran), len(probe.ran), len(all), sum.Taken, sum.Given)
	}
	if strings.Count(log.String(), "claims gone") != 1 {
		t.Errorf("log %q: want the error once", log.String())
	}
}

// A shard that finished takes the other shard's cheapest units first (one
// spec before three), so what it takes at the end fills the gap in small
// steps.
func TestClaimsTakeTheCheapestUnitsFirst(t *testing.T) {
	// the one-spec shapes first in the file: taking from the end of the
	// sweep would take three-spec units first
	st, all := sweepOf(t, "sweeps:\n  - kernel: test_scale\n    knobs: {WG: 32}\n    dims: {N: [500, 600, 700, 800]}\n  - kernel: test_scale\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 200, 300, 400]}\n")
	dir := t.TempDir()
	held := &enteredDevice{fakeDevice: &fakeDevice{name: "held", gate: make(chan struct{})}, entered: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: held, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: openClaims(t, dir, 1, 2)})
	}()
	<-held.entered
	taker := &fakeDevice{name: "taker"}
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: taker, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: openClaims(t, dir, 0, 2)}); err != nil {
		t.Fatal(err)
	}
	close(held.gate)
	<-done
	size := map[string]int{} // shape → its specs
	for _, j := range all {
		size[shapeOf(j.Spec)]++
	}
	probe := &fakeDevice{name: "probe"} // shard 0's own specs
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	var taken []int // the unit size of each spec taken, in order
	for _, k := range taker.ran {
		if !slices.Contains(probe.ran, k) {
			taken = append(taken, size[shapeOf(specOf(t, all, k))])
		}
	}
	if len(taken) == 0 || !slices.IsSorted(taken) || taken[0] != 1 {
		t.Errorf("taken units' sizes in order %v: want the one-spec units first", taken)
	}
}

// flakyClaims are DirClaims whose one claim fails, the first made once
// failAfter() says so.
type flakyClaims struct {
	*run.DirClaims
	failAfter func() bool
	failed    bool
}

func (c *flakyClaims) Claim(key string) (bool, error) {
	if !c.failed && c.failAfter() {
		c.failed = true
		return false, errors.New("claims dir gone for a moment")
	}
	return c.DirClaims.Claim(key)
}

// A claim that fails once, on the first unit of the other shard's that
// a shard that finished its own would take: it takes nothing after it
// (had it taken the rest of that unit, the unit's first spec would run
// nowhere: its owner skips a unit claimed by another), and every spec of
// the sweep runs once.
func TestClaimsThatFailOnceLoseNoSpec(t *testing.T) {
	st, all := claimSweep(t)
	probe := &fakeDevice{name: "probe"} // shard 0's own specs
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	zero := &fakeDevice{name: "zero"}
	flaky := &flakyClaims{DirClaims: openClaims(t, dir, 0, 2), failAfter: func() bool {
		zero.mu.Lock()
		defer zero.mu.Unlock()
		return len(zero.ran) == len(probe.ran)
	}}
	var log strings.Builder
	sum0, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: zero, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: flaky, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !flaky.failed || !strings.Contains(log.String(), "claims dir gone") {
		t.Fatalf("the claim did not fail (log %q)", log.String())
	}
	one := &fakeDevice{name: "one"}
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: one, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: openClaims(t, dir, 1, 2)}); err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, k := range append(slices.Clone(zero.ran), one.ran...) {
		ran[k]++
	}
	for _, j := range all {
		if ran[j.Spec.Key()] != 1 {
			t.Errorf("%s ran %d times", j.Spec, ran[j.Spec.Key()])
		}
	}
	if sum0.Taken != 0 || len(zero.ran) != len(probe.ran) {
		t.Errorf("shard 0 ran %d specs (its own %d) and took %d after its claims failed", len(zero.ran), len(probe.ran), sum0.Taken)
	}
}

// A taken spec that crashes on one device and runs again on another is
// claimed and counted once: the summary of a shard that ran the whole
// sweep (the other never started) takes each of the other's specs once.
func TestClaimsCountATakenSpecRunAgainOnce(t *testing.T) {
	st, all := claimSweep(t)
	probe := &fakeDevice{name: "probe"} // shard 1's own specs
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 1, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	var crashed sync.Once
	crash := func(key string) bool { // the first of shard 1's specs to run, on either device
		hit := false
		if slices.Contains(probe.ran, key) {
			crashed.Do(func() { hit = true })
		}
		return hit
	}
	a, b := &fakeDevice{name: "a", crash: crash}, &fakeDevice{name: "b", crash: crash}
	var last int // the n of the last Done hook
	cfg := run.SweepConfig{Source: st, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: openClaims(t, t.TempDir(), 0, 2),
		OpenDevices: func() ([]run.Device, error) { return []run.Device{{Exec: a}, {Exec: b, Ordinal: 1}}, nil },
		Start: func(run.SweepPlan) (run.Hooks, error) {
			return run.Hooks{Done: func(i, n int, r profiler.Result) { last = n }}, nil
		}}
	sum, err := run.Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ran)+len(b.ran) != len(all)+1 {
		t.Fatalf("ran %d specs on the devices, want %d (the sweep and one crash)", len(a.ran)+len(b.ran), len(all)+1)
	}
	if sum.Taken != len(probe.ran) || sum.Total != len(all) || last != len(all) {
		t.Errorf("taken %d, total %d, progress total %d; want %d, %d, %d", sum.Taken, sum.Total, last, len(probe.ran), len(all), len(all))
	}
}

// cancellingClaims are DirClaims that stop the sweep (as a ctrl-C) on the
// first claim another shard holds.
type cancellingClaims struct {
	*run.DirClaims
	cancel func()
}

func (c *cancellingClaims) Claim(key string) (bool, error) {
	ok, err := c.DirClaims.Claim(key)
	if !ok && err == nil {
		c.cancel()
	}
	return ok, err
}

// A shard interrupted after it found its units taken does not count the
// specs it gave as not run, on one device and on several: what is left
// to measure is its own specs less those the other shard ran.
func TestClaimsInterruptedShardCountsWhatItGave(t *testing.T) {
	st, _ := claimSweep(t)
	probe := &fakeDevice{name: "probe"} // shard 1's own specs
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 1, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, devices := range []int{1, 2} {
		dir := t.TempDir()
		// shard 0 runs alone first and takes every unit of shard 1's
		if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: &fakeDevice{name: "zero"}, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: openClaims(t, dir, 0, 2)}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := run.SweepConfig{Source: st, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: &cancellingClaims{openClaims(t, dir, 1, 2), cancel}}
		if devices == 1 {
			cfg.Exec = &fakeDevice{name: "one"}
		} else {
			cfg.OpenDevices = func() ([]run.Device, error) {
				return []run.Device{{Exec: &fakeDevice{name: "a"}}, {Exec: &fakeDevice{name: "b"}, Ordinal: 1}}, nil
			}
		}
		sum, err := run.Sweep(ctx, cfg)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%d devices: %v, want the interruption", devices, err)
		}
		if sum.Given == 0 || sum.NotRun != len(probe.ran)-sum.Given {
			t.Errorf("%d devices: gave %d of %d, %d not run; want %d not run", devices, sum.Given, len(probe.ran), sum.NotRun, len(probe.ran)-sum.Given)
		}
	}
}

// hugeSource is a SweepSource that says it is too large to deal by shape.
type hugeSource struct{ *sweep.Stream }

func (hugeSource) Size() int64 { return run.ShapeDealCombos + 1 }

// countedClaims count the claims made.
type countedClaims struct {
	mu sync.Mutex
	n  int
}

func (c *countedClaims) Claim(string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return true, nil
}

// A sweep dealt spec by spec (too large to deal by shape) makes no claim
// (a file a spec, for nothing: no shard takes another's), runs the
// shard's deal, and says so once.
func TestClaimsOffForASweepDealtSpecBySpec(t *testing.T) {
	st, _ := claimSweep(t)
	src := hugeSource{st}
	probe := &fakeDevice{name: "probe"}
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: src, Exec: probe, Shard: sweep.Shard{Index: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	dev, claims := &fakeDevice{name: "d"}, &countedClaims{}
	var log strings.Builder
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: src, Exec: dev, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: claims, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if claims.n != 0 || !slices.Equal(dev.ran, probe.ran) {
		t.Errorf("%d claims made; ran %d specs, want the deal's %d in its order", claims.n, len(dev.ran), len(probe.ran))
	}
	if strings.Count(log.String(), "dealt spec by spec") != 1 {
		t.Errorf("log %q: want one line saying the claims are off", log.String())
	}
}
