package run

import (
	"context"
	"math"

	"github.com/mltop/mltop/profiler"
)

// ShapeDealCombos bounds the sweeps whose shards are dealt by shape: a
// sweep of at most this many combinations (Size, before filters and
// duplicates) is walked to the end to deal it, in well under a second,
// and dealt by shape when it keeps at most OrderLimit specs. A larger
// one is dealt spec by spec (sweep.Shard.Owns) without being held.
const ShapeDealCombos = 4 * OrderLimit

// ShardDeal is how a shard's specs were dealt (SweepPlan.Deal).
type ShardDeal struct {
	Part, Parts int
	// ByShape: whole shapes (ShapeKey and seed, as orderJobs groups them)
	// were dealt to the shards, balanced by their nominal cost; false:
	// spec k of the sweep went to shard k mod Parts.
	ByShape bool
	Shapes  int // the sweep's shapes (ByShape)
	Mine    int // of them, those with a spec on this shard (ByShape)
	Split   int // shapes cut over several shards: each cost more than the sweep over Parts (ByShape)
}

// dealtShard is a shard of a sweep dealt by shape: it owns a set of the
// stream's indices.
type dealtShard struct {
	deal ShardDeal
	to   []int // by stream index: the shard the job was dealt to
	n    int   // indices owned
	all  int   // the sweep's jobs
	// jobs is the sweep's jobs (file options), kept with claims: the
	// specs a shard that finished its own may take from the others.
	jobs []profiler.Job
	cost []int64 // by stream index: the job's dealCost (with claims)
}

func (d *dealtShard) Owns(i int) bool { return i >= 0 && i < len(d.to) && d.to[i] == d.deal.Part }
func (d *dealtShard) Parts() int      { return d.deal.Parts }
func (d *dealtShard) Part() int       { return d.deal.Part }

// share is the part of the sweep's specs that shard holds.
func share(sh SweepShard) float64 {
	if d, ok := sh.(*dealtShard); ok && d.all > 0 {
		return float64(d.n) / float64(d.all)
	}
	return 1 / float64(sh.Parts())
}

// dealOf is how sh deals (the zero ShardDeal for the whole sweep).
func dealOf(sh SweepShard) ShardDeal {
	switch d := sh.(type) {
	case nil:
		return ShardDeal{}
	case *dealtShard:
		return d.deal
	}
	return ShardDeal{Part: sh.Part(), Parts: sh.Parts()}
}

// dealShard is cfg.Shard dealt by shape when the sweep is small enough
// (ShapeDealCombos, OrderLimit), else cfg.Shard itself (spec by spec).
// The partition depends only on the sweep file and the count of shards:
// the jobs are walked with the file's options (not cfg.Options, so that
// shards started with other flags still agree), grouped by shape, and
// costed on a nominal device (dealCost), never the one the shard runs on.
func dealShard(ctx context.Context, cfg SweepConfig) (SweepShard, error) {
	sh := cfg.Shard
	if _, done := sh.(*dealtShard); done || sh == nil || sh.Parts() < 2 || cfg.Source.Size() > ShapeDealCombos {
		return sh, nil
	}
	var jobs []profiler.Job
	err := streamSource(cfg.Source, nil, nil)(ctx, func(j profiler.Job) bool {
		jobs = append(jobs, j)
		return len(jobs) <= OrderLimit
	})
	if err != nil {
		return nil, err
	}
	if len(jobs) > OrderLimit {
		return sh, nil
	}
	groups := shapeGroups(jobs)
	d := dealt(groups, len(jobs), sh.Part(), sh.Parts())
	if cfg.Claims != nil {
		d.jobs = jobs
		d.cost = make([]int64, len(jobs))
		for _, g := range groups {
			for k, i := range g.Jobs {
				d.cost[i] = g.Costs[k]
			}
		}
	}
	return d, nil
}

// dealt is shard part of parts of a sweep of all jobs in groups.
func dealt(groups []ShapeGroup, all, part, parts int) *dealtShard {
	d := &dealtShard{
		deal: ShardDeal{Part: part, Parts: parts, ByShape: true, Shapes: len(groups)},
		to:   make([]int, all),
		all:  all,
	}
	for g, shards := range DealGroups(groups, parts) {
		mine, other := false, false
		for k, to := range shards {
			d.to[groups[g].Jobs[k]] = to
			if to == part {
				d.n++
			}
			mine = mine || to == part
			other = other || to != shards[0]
		}
		if mine {
			d.deal.Mine++
		}
		if other {
			d.deal.Split++
		}
	}
	return d
}

// shapeGroups groups jobs (a sweep's stream, index = position) by shape
// and seed, as orderJobs does, in the order each shape first occurs, with
// each job's dealCost.
func shapeGroups(jobs []profiler.Job) []ShapeGroup {
	nominal := nominalDevice()
	at := map[string]int{}
	var groups []ShapeGroup
	for i, j := range jobs {
		key := jobShape(j)
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, ShapeGroup{})
		}
		groups[g].Jobs = append(groups[g].Jobs, i)
		groups[g].Costs = append(groups[g].Costs, dealCost(j, nominal))
	}
	return groups
}

// maxDealCost caps one spec's dealCost (about eleven days, in µs), so that
// the sweep's total stays far inside DealGroups' integers.
const maxDealCost = 1e12

// dealCost is what job j costs a shard, in whole microseconds, the same
// on every machine: its warm-up, the middle of its sampling time, and
// MinRuns runs of its kernel on nominal, nominalDevice() (nothing for the runs when
// the nominal device cannot plan it), at least 1. Rounding to whole
// microseconds keeps the last bits of floating point, which platforms
// may round differently (fused multiply-adds on arm64), out of the deal.
func dealCost(j profiler.Job, nominal profiler.DeviceInfo) int64 {
	o := j.Options.WithDefaults()
	sec := o.WarmupTime() + float64((min(o.Stop.MinTime, o.Stop.MaxTime)+o.Stop.MaxTime)/2)
	dev := j.Options.Limits.Apply(nominal)
	if prep, err := Prepare(j.Spec, dev, PrepareOptions{SkipFit: true}); err == nil {
		sec += float64(MinRuns * runTime(dev, prep.Spec.DType, prep.Plan).Seconds())
	}
	return int64(min(max(math.Round(sec*1e6), 1), maxDealCost))
}

// nominalDevice is the device shard costs are computed on: a large GPU
// with every feature and no backend of its own, so that the cost of a
// spec depends on the spec alone (100 TFLOP/s in every dtype, 3 TB/s).
func nominalDevice() profiler.DeviceInfo {
	flops := map[profiler.DType]float64{}
	for _, dt := range profiler.FloatDTypes {
		flops[dt] = 100e12
	}
	return profiler.DeviceInfo{
		Name: "nominal", Units: 128, UnitName: "SM",
		TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10, TGMPerUnit: 228 << 10,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32, RegistersPerUnit: 65536,
		SIMDWidth: 32, MemoryBytes: 80 << 30, CacheBytes: 50 << 20,
		PeakFLOPS: flops, PeakBandwidth: 3e12,
		Features: []profiler.Feature{profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync,
			profiler.FeatureClusters, profiler.FeatureSimdgroupMatrix, profiler.FeatureCUDAKernels},
	}
}
