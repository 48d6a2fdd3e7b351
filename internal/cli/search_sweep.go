package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/profiler/tune"
)

// runSweepSearch runs a sweep file with a search: block: its specs, grouped
// by shape (kernel, dtype, dims, flags), are the candidates of one search
// each, the where: filters already applied; knobs with one value stay fixed.
func (s *session) runSweepSearch(ctx context.Context, o *options, backend string, sw *sweep.Sweep) error {
	if o.devices != "" || o.shard != "" {
		return badInput("--devices and --shard do not apply to a sweep with a search: block (a search runs its measurements in turn): drop them")
	}
	cfgs := searchConfigs(sw)
	out := tuneOutputs{table: sw.Search.Table, header: sw.Search.Header, metalHeader: sw.Search.MetalHeader}
	return s.runSearches(ctx, o, backend, cfgs, out)
}

// searchConfigs makes one search per shape of the sweep's jobs.
func searchConfigs(sw *sweep.Sweep) []tune.Config {
	type group struct {
		base    profiler.Spec
		opt     profiler.Options
		members map[string]bool // the knob values allowed, by knobKey
		values  map[string]map[int]bool
	}
	var order []string
	groups := map[string]*group{}
	for _, j := range sw.Jobs {
		shape := j.Spec.Clone()
		shape.Knobs = nil
		k := shape.Key()
		g := groups[k]
		if g == nil {
			g = &group{base: j.Spec.Clone(), opt: j.Options, members: map[string]bool{}, values: map[string]map[int]bool{}}
			groups[k] = g
			order = append(order, k)
		}
		g.members[knobKey(j.Spec.Knobs)] = true
		for name, v := range j.Spec.Knobs {
			if g.values[name] == nil {
				g.values[name] = map[int]bool{}
			}
			g.values[name][v] = true
		}
	}
	var cfgs []tune.Config
	sr := sw.Search
	for _, k := range order {
		g := groups[k]
		var knobs []search.Knob
		for _, name := range slices.Sorted(maps.Keys(g.values)) {
			if vals := slices.Sorted(maps.Keys(g.values[name])); len(vals) > 1 {
				knobs = append(knobs, search.Knob{Name: name, Values: vals})
			}
		}
		members := g.members
		cfgs = append(cfgs, tune.Config{Base: g.base, Knobs: knobs, Strategy: sr.Strategy, Seed: sr.Seed, Budget: sr.Budget,
			Objective: sr.Objective, MinImprovement: sr.MinImprovement, Top: sr.Top, Options: g.opt,
			Allow: func(s profiler.Spec) error {
				if !members[knobKey(s.Knobs)] {
					return errNotInSweep
				}
				return nil
			}})
	}
	return cfgs
}

// errNotInSweep refuses a configuration the sweep's lists and where:
// filters leave out.
var errNotInSweep = errors.New("not in the sweep (its knob lists and where: filters leave it out)")

// knobKey identifies knob values.
func knobKey(m map[string]int) string {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = fmt.Appendf(b, "%s=%d,", k, m[k])
	}
	return string(b)
}
