package run_test

import (
	"context"
	"errors"
	"fmt"
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
	const yaml = "sweeps:\n  - kernel: test_scale\n    dtypes: [f32, bf16]\n    knobs: {WG: [32, 64, 128]}\n    dims: {N: [100, 1000, 10000, 100000, 1000000]}\n"
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
// first has finished: the first runs its own specs and then every spec
// of the second but the one it holds, each spec of the sweep runs
// exactly once, and the summaries count what was given and taken — on
// one device and on several (--devices with --shard).
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
			if len(slow.ran) != 1 || fastRan != len(all)-1 {
				t.Errorf("the held shard ran %d specs, the other %d; want 1 and %d", len(slow.ran), fastRan, len(all)-1)
			}
			if fastSum.Taken == 0 || fastSum.Taken != slowSum.Given || fastSum.Given != 0 || slowSum.Taken != 0 {
				t.Errorf("taken %d / given %d by the fast shard, %d / %d by the held one", fastSum.Taken, fastSum.Given, slowSum.Taken, slowSum.Given)
			}
			if fastSum.Total != fastRan || slowSum.Total != 1 {
				t.Errorf("totals %d and %d, want %d and 1", fastSum.Total, slowSum.Total, fastRan)
			}
			if !strings.Contains(fastSum.String(), "taken from the other shards") {
				t.Errorf("summary %q does not say what was taken", fastSum.String())
			}
		})
	}
}

// A shard that claimed specs and was killed before it ran them runs them
// when it is started again (with --resume or not), and the other shard
// leaves them: no spec is lost, none runs twice.
func TestClaimsOfAnInterruptedShardAreRunByIt(t *testing.T) {
	st, all := claimSweep(t)
	dir := t.TempDir()
	// Which spec is whose: run shard 1 alone first, without claims.
	probe := &fakeDevice{name: "probe"}
	if _, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: probe, Shard: sweep.Shard{Index: 1, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	ofShard1 := probe.ran
	// Shard 0 "was killed" holding the claims of three of shard 1's specs.
	c0 := openClaims(t, dir, 0, 2)
	for _, k := range ofShard1[len(ofShard1)-3:] {
		if ok, err := c0.Claim(k); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", k, ok, err)
		}
	}
	held := ofShard1[len(ofShard1)-3:]
	one := &fakeDevice{name: "one"}
	sum1, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: one, Shard: sweep.Shard{Index: 1, Count: 2}, Claims: openClaims(t, dir, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range held {
		if slices.Contains(one.ran, k) {
			t.Errorf("shard 1 ran %s, which shard 0 holds", k)
		}
	}
	if sum1.Given != 3 {
		t.Errorf("shard 1 gave %d specs, want the 3 shard 0 holds", sum1.Given)
	}
	zero := &fakeDevice{name: "zero"}
	sum0, err := run.Sweep(context.Background(), run.SweepConfig{Source: st, Exec: zero, Shard: sweep.Shard{Index: 0, Count: 2}, Claims: c0})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, k := range append(slices.Clone(one.ran), zero.ran...) {
		ran[k]++
	}
	for _, j := range all {
		if ran[j.Spec.Key()] != 1 {
			t.Errorf("%s ran %d times", j.Spec, ran[j.Spec.Key()])
		}
	}
	for _, k := range held {
		if !slices.Contains(zero.ran, k) {
			t.Errorf("shard 0 did not run %s, which it held", k)
		}
	}
	if sum0.Total+sum1.Total != len(all) {
		t.Errorf("totals %d + %d, the sweep has %d", sum0.Total, sum1.Total, len(all))
	}
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
