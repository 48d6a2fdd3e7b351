package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/mltop/mltop/profiler"
)

// BigSweep is the spec count above which a sweep started by a person
// asks first: `--yes` on the command line, a question in the TUI.
const BigSweep = 2000

// SweepSource is a sweep whose jobs are made on demand: a sweep.Stream.
type SweepSource interface {
	// Walk yields the jobs in order with their index (see sweep.Stream.Each).
	Walk(ctx context.Context, yield func(i int, j profiler.Job) bool) error
	// Size bounds the number of jobs (combinations before filters).
	Size() int64
	// Sample draws n combinations at random and returns the jobs among them.
	Sample(n int, seed uint64) ([]profiler.Job, error)
}

// SweepShard is one part of a sweep split n ways: a sweep.Shard.
// A sweep of at most OrderLimit specs is dealt by shape instead (see
// dealShard): Owns then answers for the stream's indices from the deal.
type SweepShard interface {
	Owns(i int) bool // the job of index i is this part's (dealt in turn)
	Parts() int      // n
	Part() int       // this part's index, from 0
}

// SweepConfig is one sweep for Sweep.
type SweepConfig struct {
	Source SweepSource
	// Options turns the options a job has in the file into the ones it
	// runs with (the command line's flags over them); nil keeps them.
	Options func(profiler.Options) profiler.Options
	// Exec runs the specs on one device. Without it, OpenDevices opens
	// several (after Announce: a refused sweep starts no worker).
	Exec        profiler.Executor
	OpenDevices func() ([]Device, error)
	// Skip holds the keys of specs already measured (--resume); Skipped,
	// when set, is called with each of the sweep's jobs in Skip before
	// Announce (to check that they were measured with these settings).
	Skip    map[string]bool
	Skipped func(profiler.Job)
	// Resumed, with Skip, is the result a skipped spec's row holds (its
	// status, stop reason and median are enough), so that the rows of
	// --resume seed the best of their shapes for --race; nil: none do.
	Resumed func(profiler.Job) (profiler.Result, bool)
	Shard   SweepShard // nil: the whole sweep
	// Claims, with a Shard, let this shard take the other shards' unstarted
	// specs once its own are done (a sweep dealt by shape) and run only
	// the specs it claims; nil: the shard runs its deal.
	Claims Claims
	// Announce gets the plan before anything runs (within about
	// CountTime whatever the sweep's size); an error stops the sweep there.
	// Start comes next, once the specs in Skip were handed to Skipped, and
	// returns the hooks that show progress; an error stops the sweep too.
	Announce func(SweepPlan) error
	Start    func(SweepPlan) (Hooks, error)
	Log      io.Writer // a dropped device's line (several devices)
	// Shared, when no device is known to count the specs on (a --dry-run
	// away from the backend's GPU), holds each spec against the limits
	// every GPU of the backend shares: one over them counts as invalid.
	// nil: specs counted without a device are all counted as runnable.
	Shared *SharedLimits
}

// SweepPlan is what a sweep will do, known before anything runs: counted
// by walking the sweep when that takes less than CountTime, else
// estimated from a sample of SampleSize combinations.
type SweepPlan struct {
	Specs   int // to run: the shard's, not skipped, and runnable on Device when it is known
	Invalid int // refused by the device (rules, plan, memory): they become invalid rows at once
	// InvalidGroups are the invalid specs grouped by reason, the first
	// MaxInvalidReasons distinct reasons in the order met (of the sample
	// when not Exact); InvalidOther counts the specs refused for the
	// reasons after those.
	InvalidGroups []InvalidGroup
	InvalidOther  int
	Skipped       int // in Skip
	Exact         bool
	Sampled       int // combinations sampled when not Exact
	// Device is the device the specs were checked against; nil when the
	// devices open after the announcement.
	Device *profiler.DeviceInfo
	// Shared are the limits the specs were held against without Device
	// (SweepConfig.Shared); nil when none were.
	Shared   *SharedLimits
	Estimate SweepEstimate // of the Specs
	// Deal is how the shard's specs were dealt (zero without a shard).
	Deal ShardDeal
}

// CountTime bounds the walk that counts a sweep before it runs; a larger
// sweep is estimated from SampleSize combinations drawn at random.
const (
	CountTime  = time.Second
	SampleSize = 4000
)

// Sweep runs a sweep file's specs as they are made (sweep.Stream): it
// deals cfg.Shard's part of them once (dealShard), counts and estimates
// them (PlanSweep), hands the plan to
// cfg.Announce and cfg.Start, then runs them on cfg.Exec or the devices of
// cfg.OpenDevices, each Result to every sink as soon as it is known.
// Memory does not grow with the sweep's size, and ctx stops every stage.
func Sweep(ctx context.Context, cfg SweepConfig, sinks ...profiler.Sink) (Summary, error) {
	var dev *profiler.DeviceInfo
	var cache *PlanCache
	if cfg.Exec != nil {
		d := cfg.Exec.Device()
		dev = &d
		if r, ok := cfg.Exec.(*Runner); ok {
			cache = r.plans
		}
	}
	sh, err := dealShard(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	cfg.Shard = sh // dealt once, for the count, the skipped walk and the run
	race := newRaceBoard()
	cfg.Skipped = race.seeding(cfg.Skipped, cfg.Resumed)
	plan, err := PlanSweep(ctx, cfg, dev, cache)
	if err != nil {
		return Summary{}, err
	}
	if cfg.Announce != nil {
		if err := cfg.Announce(plan); err != nil {
			return Summary{}, err
		}
	}
	if err := skippedWalk(ctx, cfg, plan); err != nil {
		return Summary{}, err
	}
	var h Hooks
	if cfg.Start != nil {
		if h, err = cfg.Start(plan); err != nil {
			return Summary{}, err
		}
	}
	n := plan.Specs + plan.Invalid
	src := streamSource(cfg.Source, cfg.Shard, cfg.Options)
	claims, tail := sweepClaims(cfg)
	var devs []Device
	if cfg.Exec == nil {
		if devs, err = cfg.OpenDevices(); err != nil {
			return Summary{}, err
		}
		if plan.Exact && plan.Specs+plan.Skipped+plan.Invalid <= OrderLimit && len(devs) > 0 {
			src = orderedSource(src, ReadyDevice(devs), len(devs))
		}
	}
	if tail != nil { // after the ordering: the others' specs come last
		src = thenSource(src, tail)
	}
	f := startClaimFeed(ctx, src, cfg.Skip, claims)
	var sum Summary
	if cfg.Exec == nil {
		sum, err = onDevices(ctx, devs, f, n, sinks, h, cfg.Log, race)
	} else {
		sum, err = runFeed(ctx, cfg.Exec, f, n, sinks, h, race)
	}
	return claims.settle(sum), err
}

// sweepClaims is cfg's shard's claims, and the other shards' specs it may
// take at the end: both nil without cfg.Claims or for a shard not dealt
// by shape.
func sweepClaims(cfg SweepConfig) (*shardClaims, jobSource) {
	if cfg.Claims == nil || cfg.Shard == nil {
		return nil, nil
	}
	d, ok := cfg.Shard.(*dealtShard)
	if !ok || d.jobs == nil {
		// Dealt spec by spec: no shard takes another's specs, so claiming
		// its own would only make a file a spec (millions of them).
		if cfg.Log != nil && cfg.Shard.Parts() > 1 {
			fmt.Fprintf(cfg.Log, "mltop: --claims: a sweep of more than %d specs (or %d combinations) is dealt spec by spec, and its shards take nothing from each other: this shard runs its own specs without claims\n", OrderLimit, ShapeDealCombos)
		}
		return nil, nil
	}
	c := &shardClaims{c: cfg.Claims, log: cfg.Log}
	c.others = map[string]bool{}
	c.unitOf = map[string]string{}
	units := d.unitKeys()
	for i, j := range d.jobs {
		key := j.Spec.Key()
		c.unitOf[key] = units[i]
		if !d.Owns(i) {
			c.others[key] = true
		}
	}
	return c, othersTail(d, cfg.Options, cfg.Skip, c)
}

// PlanSweep counts and estimates cfg's sweep on dev (nil: not known yet),
// planning with cache (nil: none). A shard of a sweep of at most
// OrderLimit specs is dealt by shape first (dealShard): the plan counts
// the shard's own specs and says how it was dealt (Deal). A sweep that takes more than
// CountTime to walk is sampled (and Sweep walks it for Skipped after the
// announcement).
func PlanSweep(ctx context.Context, cfg SweepConfig, dev *profiler.DeviceInfo, cache *PlanCache) (SweepPlan, error) {
	sh, err := dealShard(ctx, cfg)
	if err != nil {
		return SweepPlan{}, err
	}
	cfg.Shard = sh
	p := SweepPlan{Device: dev, Exact: true, Deal: dealOf(sh), Shared: sharedWithout(dev, cfg)}
	x := newEstimator(dev)
	deadline := time.Now().Add(CountTime)
	n := 0
	// The skipped jobs are handed to cfg.Skipped only once the walk is
	// known to be whole (a sampled plan walks for them again).
	var skipped []profiler.Job
	walk := cfg
	walk.Skipped = func(j profiler.Job) { skipped = append(skipped, j) }
	err = streamSource(cfg.Source, cfg.Shard, cfg.Options)(ctx, func(j profiler.Job) bool {
		if n++; n%256 == 0 && time.Now().After(deadline) {
			p.Exact = false
			return false
		}
		p.count(x, j, walk, cache)
		return true
	})
	if err != nil {
		return p, err
	}
	if !p.Exact {
		return samplePlan(ctx, cfg, dev, cache)
	}
	if cfg.Skipped != nil {
		for _, j := range skipped {
			cfg.Skipped(j)
		}
	}
	p.Estimate = x.result(1)
	return p, nil
}

// count adds job j to the plan.
func (p *SweepPlan) count(x *estimator, j profiler.Job, cfg SweepConfig, cache *PlanCache) {
	if cfg.Skip[j.Spec.Key()] {
		p.Skipped++
		if cfg.Skipped != nil {
			cfg.Skipped(j)
		}
		return
	}
	var plan *profiler.Plan
	if p.Device != nil {
		prep, err := PrepareRunnable(j, *p.Device, cache)
		if err != nil {
			p.Invalid++
			p.addReason(j.Spec, err)
			return
		}
		plan = prep.Plan
	} else if p.Shared != nil {
		if err := p.Shared.refuses(j, cache); err != nil {
			p.Invalid++
			p.addReason(j.Spec, err)
			return
		}
	}
	p.Specs++
	x.add(j, plan)
}

// sharedWithout is cfg's shared limits when there is no device to count
// on; nil otherwise (the device's own limits are the finer check).
func sharedWithout(dev *profiler.DeviceInfo, cfg SweepConfig) *SharedLimits {
	if dev != nil {
		return nil
	}
	return cfg.Shared
}

// InvalidGroup is one reason specs of a sweep were refused: how many
// were, and the first MaxGroupSpecs of them.
type InvalidGroup struct {
	Why   string
	Count int
	Specs []string
}

// MaxInvalidReasons bounds SweepPlan.InvalidGroups; MaxGroupSpecs the
// specs an InvalidGroup names.
const (
	MaxInvalidReasons = 3
	MaxGroupSpecs     = 3
)

// addReason counts spec s, refused for why, in its reason's group: a new
// one while the plan has fewer than MaxInvalidReasons, else InvalidOther.
func (p *SweepPlan) addReason(s profiler.Spec, why error) {
	w := why.Error()
	for i := range p.InvalidGroups {
		if g := &p.InvalidGroups[i]; g.Why == w {
			g.Count++
			if len(g.Specs) < MaxGroupSpecs {
				g.Specs = append(g.Specs, s.String())
			}
			return
		}
	}
	if len(p.InvalidGroups) >= MaxInvalidReasons {
		p.InvalidOther++
		return
	}
	p.InvalidGroups = append(p.InvalidGroups, InvalidGroup{Why: w, Count: 1, Specs: []string{s.String()}})
}

// samplePlan is PlanSweep from SampleSize combinations.
func samplePlan(ctx context.Context, cfg SweepConfig, dev *profiler.DeviceInfo, cache *PlanCache) (SweepPlan, error) {
	p := SweepPlan{Device: dev, Sampled: SampleSize, Deal: dealOf(cfg.Shard), Shared: sharedWithout(dev, cfg)}
	jobs, err := cfg.Source.Sample(SampleSize, 1)
	if err != nil {
		return p, err
	}
	x := newEstimator(dev)
	quiet := cfg
	quiet.Skipped = nil
	for _, j := range jobs {
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		if cfg.Options != nil {
			j.Options = cfg.Options(j.Options)
		}
		p.count(x, j, quiet, cache)
	}
	scale := float64(cfg.Source.Size()) / SampleSize
	if cfg.Shard != nil {
		scale *= share(cfg.Shard)
	}
	round := func(v int) int { return int(math.Round(float64(v) * scale)) }
	p.Specs, p.Invalid, p.Skipped = round(p.Specs), round(p.Invalid), round(p.Skipped)
	p.Estimate = x.result(scale)
	p.Estimate.Builds = 0 // not known from a sample
	return p, nil
}

// skippedWalk hands cfg.Skipped the jobs in cfg.Skip when the plan was
// sampled (a whole walk has handed them already): a walk over the whole
// sweep, which ctx stops.
func skippedWalk(ctx context.Context, cfg SweepConfig, p SweepPlan) error {
	if p.Exact || len(cfg.Skip) == 0 || cfg.Skipped == nil {
		return nil
	}
	return streamSource(cfg.Source, cfg.Shard, cfg.Options)(ctx, func(j profiler.Job) bool {
		if cfg.Skip[j.Spec.Key()] {
			cfg.Skipped(j)
		}
		return true
	})
}

// Runnable says, without the backend, whether j's spec can run on dev:
// the family's rules, its plan, the memory it needs (with the job's
// device_limits), and whether the CPU backend would refuse a user
// kernel. It returns the prepared spec when it can.
func Runnable(j profiler.Job, dev profiler.DeviceInfo, cache *PlanCache) (*Prepared, bool) {
	prep, err := PrepareRunnable(j, dev, cache)
	return prep, err == nil
}

// PrepareRunnable is Runnable with the reason a spec cannot run: the
// error its invalid row says.
func PrepareRunnable(j profiler.Job, dev profiler.DeviceInfo, cache *PlanCache) (*Prepared, error) {
	dev = j.Options.Limits.Apply(dev)
	prep, err := Prepare(j.Spec, dev, PrepareOptions{Mode: j.Options.CacheMode(), Cache: cache})
	if err != nil {
		return nil, err
	}
	if dev.Backend == "cpu" {
		if err := cpuRefuses(j.Spec, prep.Plan); err != nil {
			return nil, err
		}
	}
	return prep, nil
}

// cpuRefuses says why the CPU backend cannot run spec s planned as plan
// (a user kernel: it runs only built-in families' Go code); nil when it
// can.
func cpuRefuses(s profiler.Spec, plan *profiler.Plan) error {
	for _, d := range plan.Dispatches {
		if d.Program.Code != "" {
			return errors.New(profiler.CPUCannotRunUser(s.Kernel))
		}
	}
	return nil
}
