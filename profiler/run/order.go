package run

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/mltop/mltop/profiler"
)

// OrderLimit is the most specs a multi-device sweep puts in order before
// it runs them (see orderedSource); a larger sweep runs in the file's
// order, as it streams.
const OrderLimit = 50000

// SpecCost estimates what one job costs a device, in seconds: its
// warm-up, the middle of its sampling time, and MinRuns runs of its
// kernel on dev (KernelRunTime); 0 for a spec the device refuses (it
// becomes an invalid row at once).
func SpecCost(j profiler.Job, dev profiler.DeviceInfo, cache *PlanCache) float64 {
	o := j.Options.WithDefaults()
	prep, err := Prepare(j.Spec, j.Options.Limits.Apply(dev), PrepareOptions{SkipFit: true, Cache: cache})
	if err != nil {
		return 0
	}
	sampling := (min(o.Stop.MinTime, o.Stop.MaxTime) + o.Stop.MaxTime) / 2
	return o.WarmupTime() + sampling + MinRuns*runTime(dev, prep.Spec.DType, prep.Plan).Seconds()
}

// orderJobs puts jobs in the order a multi-device sweep hands them out so
// that no device idles at the end: the specs of one shape (and seed)
// together, so that a worker reuses the shape's inputs and reference,
// the shapes by their total cost, largest first, and within a shape the
// dearest spec first. The small shapes come last and fill the gaps while
// the devices finish. The order is stable: equal costs keep the file's.
//
// Except the first leads shapes (one per device): a device's first shape
// is the one whose host work (inputs, upload, reference) nothing can
// hide, while every later shape's is made during the one before it. So
// the leads are the shapes with the least host work per second of device
// work (hostBytes of their first spec the device accepts, over their
// cost), which then hide the dear shapes' host work behind their own
// measurement. hostBytes may be nil (no leads).
func orderJobs(jobs []profiler.Job, cost func(profiler.Job) float64, hostBytes func(profiler.Job) float64, leads int) []profiler.Job {
	type group struct {
		first int // index of its first job, for a stable order
		total float64
		jobs  []int
	}
	groups := map[string]*group{}
	costs := make([]float64, len(jobs))
	var order []*group
	for i, j := range jobs {
		costs[i] = cost(j)
		key := jobShape(j)
		g := groups[key]
		if g == nil {
			g = &group{first: i}
			groups[key] = g
			order = append(order, g)
		}
		g.total += costs[i]
		g.jobs = append(g.jobs, i)
	}
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Compare(b.total, a.total) })
	if hostBytes != nil && leads > 0 && len(order) > leads {
		perSecond := func(g *group) float64 {
			if g.total <= 0 {
				return math.Inf(1)
			}
			for _, i := range g.jobs { // the first spec the device accepts
				if b := hostBytes(jobs[i]); b > 0 {
					return b / g.total
				}
			}
			return math.Inf(1)
		}
		ratio := make(map[*group]float64, len(order))
		for _, g := range order {
			ratio[g] = perSecond(g)
		}
		byRatio := slices.Clone(order)
		slices.SortStableFunc(byRatio, func(a, b *group) int { return cmp.Compare(ratio[a], ratio[b]) })
		lead := byRatio[:leads]
		rest := slices.DeleteFunc(slices.Clone(order), func(g *group) bool { return slices.Contains(lead, g) })
		slices.SortStableFunc(lead, func(a, b *group) int { return cmp.Compare(b.total, a.total) })
		order = append(slices.Clone(lead), rest...)
	}
	out := make([]profiler.Job, 0, len(jobs))
	for _, g := range order {
		slices.SortStableFunc(g.jobs, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
		for _, i := range g.jobs {
			out = append(out, jobs[i])
		}
	}
	return out
}

// specHostBytes is the bytes of j's buffers as its plan's work model
// counts them (every input read and every output written once): what the
// host generates, uploads and checks before the shape's first spec runs.
// 0 for a spec the device refuses.
func specHostBytes(j profiler.Job, dev profiler.DeviceInfo) float64 {
	prep, err := Prepare(j.Spec, j.Options.Limits.Apply(dev), PrepareOptions{SkipFit: true})
	if err != nil {
		return 0
	}
	return prep.Plan.Bytes
}

// orderedSource is src's jobs in orderJobs' order on dev: it walks src
// to the end first (a sweep of at most OrderLimit specs, counted in
// about a second), then yields them.
func orderedSource(src jobSource, dev profiler.DeviceInfo, devices int) jobSource {
	return func(ctx context.Context, yield func(profiler.Job) bool) error {
		var jobs []profiler.Job
		if err := src(ctx, func(j profiler.Job) bool { jobs = append(jobs, j); return true }); err != nil {
			return err
		}
		// No plan cache: every spec is planned once here, and a cache's
		// key (the device printed) would cost more than the plan.
		cost := func(j profiler.Job) float64 { return SpecCost(j, dev, nil) }
		host := func(j profiler.Job) float64 { return specHostBytes(j, dev) }
		for _, j := range orderJobs(jobs, cost, host, devices) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !yield(j) {
				return nil
			}
		}
		return nil
	}
}
