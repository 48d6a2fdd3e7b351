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
// hide, while every later shape's is made during the ones before it. So
// the leads are the shapes with the least host work per second of device
// work (hostBytes of their first spec the device accepts, over their
// cost), which then hide the dear shapes' host work behind their own
// measurement. And the host work is spread over the sweep (spreadHostWork)
// rather than bunched where the dearest shapes are. hostBytes may be nil
// (no leads, no spreading).
func orderJobs(jobs []profiler.Job, cost func(profiler.Job) float64, hostBytes func(profiler.Job) float64, leads int) []profiler.Job {
	groups := map[string]*shapeGroup{}
	costs := make([]float64, len(jobs))
	var order []*shapeGroup
	for i, j := range jobs {
		costs[i] = cost(j)
		key := jobShape(j)
		g := groups[key]
		if g == nil {
			g = &shapeGroup{}
			groups[key] = g
			order = append(order, g)
		}
		g.total += costs[i]
		g.jobs = append(g.jobs, i)
	}
	slices.SortStableFunc(order, func(a, b *shapeGroup) int { return cmp.Compare(b.total, a.total) })
	if hostBytes != nil {
		for _, g := range order {
			for _, i := range g.jobs { // the first spec the device accepts
				if b := hostBytes(jobs[i]); b > 0 {
					g.host = b
					break
				}
			}
		}
		var lead []*shapeGroup
		if leads > 0 && len(order) > leads {
			byRatio := slices.Clone(order)
			slices.SortStableFunc(byRatio, func(a, b *shapeGroup) int { return cmp.Compare(a.hostPerSecond(), b.hostPerSecond()) })
			lead = byRatio[:leads]
			slices.SortStableFunc(lead, func(a, b *shapeGroup) int { return cmp.Compare(b.total, a.total) })
		}
		rest := slices.DeleteFunc(slices.Clone(order), func(g *shapeGroup) bool { return slices.Contains(lead, g) })
		order = append(slices.Clone(lead), spreadHostWork(lead, rest)...)
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

// shapeGroup is the jobs of one shape (orderJobs).
type shapeGroup struct {
	total float64 // device seconds
	host  float64 // host bytes of its first spec the device accepts (0: none)
	jobs  []int
}

// hostPerSecond is the group's host bytes per second of device work:
// +Inf when it has no device work (every spec refused), 0 when it has no
// host bytes.
func (g *shapeGroup) hostPerSecond() float64 {
	if g.total <= 0 {
		return math.Inf(1)
	}
	return g.host / g.total
}

// spreadLimit bounds the shapes spreadHostWork orders (its work grows
// with their square); a sweep of more shapes keeps the dearest-first order.
const spreadLimit = 2000

// spreadHostWork orders rest (dearest first) to follow done so that the
// shapes' host work is made about as fast as their device work runs: the
// next shape is the dearest whose host bytes, added to those before it,
// are no larger a share of the sweep's host bytes than its device time,
// added likewise, is of the sweep's device time; when every shape left
// would get ahead, the one with the least host work per second of device
// work. Only shares are compared, so a model's scale (nominal rates, time
// limits) does not matter. Without it the dearest shapes (often the
// largest, with the most specs) come first together, and the workers'
// host work of several of them at once cannot be hidden behind anything.
func spreadHostWork(done, rest []*shapeGroup) []*shapeGroup {
	if len(rest) > spreadLimit {
		return rest
	}
	var hostSum, devSum, host, dev float64
	for _, g := range slices.Concat(done, rest) {
		hostSum += g.host
		devSum += g.total
	}
	if hostSum <= 0 || devSum <= 0 {
		return rest
	}
	for _, g := range done {
		host += g.host
		dev += g.total
	}
	rest = slices.Clone(rest)
	out := make([]*shapeGroup, 0, len(rest))
	for len(rest) > 0 {
		pick := slices.IndexFunc(rest, func(g *shapeGroup) bool {
			return (host+g.host)/hostSum <= (dev+g.total)/devSum+1e-9
		})
		if pick < 0 {
			pick = 0
			for i, g := range rest {
				if g.hostPerSecond() < rest[pick].hostPerSecond() {
					pick = i
				}
			}
		}
		g := rest[pick]
		rest = slices.Delete(rest, pick, pick+1)
		out = append(out, g)
		host += g.host
		dev += g.total
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
