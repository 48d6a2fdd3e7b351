package run

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// Prepared is a spec made ready to run on one device: its family, the spec
// with the family's defaults applied, and its plan.
//
// The contract every caller relies on: Family.Plan receives a spec that
// Prepare has resolved (defaults applied, schema checked) and validated
// (Family.Validate passed for the same device). Families therefore do not
// validate again in Plan. A Plan may be shared between callers through a
// PlanCache: read it, never change it.
type Prepared struct {
	Family profiler.Family
	Spec   profiler.Spec
	Plan   *profiler.Plan
	// Fit is the memory check's verdict (CheckFit): nil when the plan fits
	// the device and the host now, or when PrepareOptions.SkipFit.
	Fit error
}

// PrepareStage names the step at which a spec was refused.
type PrepareStage string

// The steps of Prepare, in order.
const (
	StageKernel PrepareStage = "kernel" // no family has the spec's kernel name
	StageSchema PrepareStage = "schema" // a knob, dim or flag outside the family's schema
	StageRules  PrepareStage = "rules"  // the family's rules (Validate) for this device
	StagePlan   PrepareStage = "plan"   // the family could not plan the spec
	StageFit    PrepareStage = "fit"    // the plan does not fit the device's or host's memory
)

// PrepareError is why Prepare refused a spec. BadInput errors (an unknown
// kernel, a value outside the schema) are the user's typing: exit 2 on the
// command line. The others make the spec an `invalid` row.
type PrepareError struct {
	Stage PrepareStage
	Err   error
}

func (e *PrepareError) Error() string { return e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// BadInput says whether the spec itself is mistyped, rather than refused
// by the family's rules or the device's limits.
func (e *PrepareError) BadInput() bool { return e.Stage == StageKernel || e.Stage == StageSchema }

// PrepareOptions are what Prepare needs beyond the spec and the device.
type PrepareOptions struct {
	// Mode is the cache mode the spec is timed in: hot needs no flush
	// buffer to fit beside the plan.
	Mode profiler.CacheMode
	// SkipFit leaves out the memory check (cost models, previews).
	SkipFit bool
	// Cache, when set, keeps plans so that a spec planned once (by the
	// announcement, the prefetcher, the run) is not planned again.
	Cache *PlanCache
}

// Prepare resolves s against its family's schema, applies the family's
// rules for dev, plans it and checks that the plan fits in memory. On an
// error (a *PrepareError) the Prepared holds what was reached: the family
// and the resolved spec from StageRules on, the plan at StageFit.
func Prepare(s profiler.Spec, dev profiler.DeviceInfo, o PrepareOptions) (*Prepared, error) {
	f, err := profiler.Lookup(s.Kernel)
	if err != nil {
		return &Prepared{Spec: s}, &PrepareError{Stage: StageKernel, Err: err}
	}
	return PrepareFamily(f, s, dev, o)
}

// PrepareFamily is Prepare with the family given (one that need not be
// registered under s.Kernel, such as a DeviceReference's).
func PrepareFamily(f profiler.Family, s profiler.Spec, dev profiler.DeviceInfo, o PrepareOptions) (*Prepared, error) {
	p, err := o.Cache.prepare(f, s, dev)
	if err != nil {
		return p, err
	}
	if !o.SkipFit {
		if err := CheckFit(p.Plan, dev, p.Spec, o.Mode); err != nil {
			out := *p
			out.Fit = err
			return &out, &PrepareError{Stage: StageFit, Err: err}
		}
	}
	return p, nil
}

// plan resolves, validates and plans s for dev: the part of Prepare that
// depends only on them, and so is what a PlanCache keeps.
func plan(f profiler.Family, s profiler.Spec, dev profiler.DeviceInfo) (*Prepared, error) {
	sc := f.Schema()
	full := s.WithDefaults(sc)
	p := &Prepared{Family: f, Spec: full}
	if err := full.CheckSchema(sc); err != nil {
		return p, &PrepareError{Stage: StageSchema, Err: err}
	}
	if err := f.Validate(full, dev); err != nil {
		return p, &PrepareError{Stage: StageRules, Err: err}
	}
	pl, err := f.Plan(full, dev)
	if err != nil {
		return p, &PrepareError{Stage: StagePlan, Err: err}
	}
	p.Plan = pl
	return p, nil
}

// PlanCache keeps the last plans made (at most its size, default
// DefaultPlanCacheSize), keyed by the spec, the device and the family
// (a reloaded user kernel is a new family, and plans afresh). Safe for
// concurrent use; a nil *PlanCache plans every time.
type PlanCache struct {
	mu      sync.Mutex
	size    int
	entries map[string]cached
	hits    int
}

// Hits is how many Prepare calls found their plan in the cache.
func (c *PlanCache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

type cached struct {
	family profiler.Family
	p      *Prepared
	err    error
}

// DefaultPlanCacheSize is enough for a sweep's look-ahead (Lookahead) and
// the specs around it, and small beside any plan's buffers.
const DefaultPlanCacheSize = 256

// NewPlanCache makes a cache of at most size plans (DefaultPlanCacheSize
// when size < 1).
func NewPlanCache(size int) *PlanCache {
	if size < 1 {
		size = DefaultPlanCacheSize
	}
	return &PlanCache{size: size, entries: map[string]cached{}}
}

func (c *PlanCache) prepare(f profiler.Family, s profiler.Spec, dev profiler.DeviceInfo) (*Prepared, error) {
	if c == nil || !reflect.TypeOf(f).Comparable() {
		return plan(f, s, dev) // no cache, or a family whose identity cannot be compared
	}
	key := s.Key() + "\x00" + deviceKey(dev)
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && e.family == f {
		c.hits++
		c.mu.Unlock()
		return e.p, e.err
	}
	c.mu.Unlock()
	p, err := plan(f, s, dev)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.size {
		// Drop everything: a sweep's specs come in order, and the ones
		// planned long ago are not asked for again.
		clear(c.entries)
	}
	c.entries[key] = cached{family: f, p: p, err: err}
	return p, err
}

// deviceKey is every field of dev that a family may read (fmt prints
// maps sorted, so equal devices give equal keys).
func deviceKey(dev profiler.DeviceInfo) string {
	return fmt.Sprintf("%+v", dev)
}
