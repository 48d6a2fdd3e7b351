package cli

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/profiler/tune"
)

// runSweepSearch runs a sweep file with a search: block: its specs, grouped
// by shape (kernel, dtype, dims, flags), are the candidates of one search
// each, the where: filters applied; knobs with one value stay fixed.
func (s *session) runSweepSearch(ctx context.Context, o *options, backend, path string, st *sweep.Stream) error {
	if o.devices != "" || o.shard != "" || o.claims != "" {
		return badInput("--devices, --shard and --claims do not apply to a sweep with a search: block (a search runs its measurements in turn): drop them")
	}
	if o.dryRun {
		return badInput("--dry-run does not apply to a sweep with a search: block (the search decides what runs as it measures): set a small search.budget instead")
	}
	cfgs, err := searchConfigs(ctx, st, o.measureOptions)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitFailed, msg: "interrupted before the search started: nothing ran"}
		}
		return err
	}
	out := tuneOutputs{table: st.Search.Table, header: st.Search.Header, metalHeader: st.Search.MetalHeader}
	return s.runSearches(ctx, o, backend, cfgs, out, path)
}

// searchConfigs makes one search per shape of the sweep. One walk over
// the stream collects, per shape, its first spec, its options (with the
// command line's over them) and each knob's values; the candidates are the
// product of those values, and a candidate is allowed when the sweep makes
// it (Stream.Makes: its lists and where: filters). So what is held is
// bounded by the shapes' knob spaces, not by the number of the sweep's specs.
func searchConfigs(ctx context.Context, st *sweep.Stream, measure func(*profiler.Options) profiler.Options) ([]tune.Config, error) {
	type group struct {
		base   profiler.Spec
		opt    profiler.Options
		values map[string]map[int]bool
	}
	var order []string
	groups := map[string]*group{}
	err := st.Walk(ctx, func(_ int, j profiler.Job) bool {
		shape := j.Spec.Clone()
		shape.Knobs = nil
		k := shape.Key()
		g := groups[k]
		if g == nil {
			g = &group{base: j.Spec.Clone(), opt: measure(&j.Options), values: map[string]map[int]bool{}}
			groups[k] = g
			order = append(order, k)
		}
		for name, v := range j.Spec.Knobs {
			if g.values[name] == nil {
				g.values[name] = map[int]bool{}
			}
			g.values[name][v] = true
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	allow := func(s profiler.Spec) error {
		ok, err := st.Makes(s)
		if err == nil && !ok {
			err = errNotInSweep
		}
		return err
	}
	var cfgs []tune.Config
	sr := st.Search
	for _, k := range order {
		g := groups[k]
		var knobs []search.Knob
		for _, name := range slices.Sorted(maps.Keys(g.values)) {
			if vals := slices.Sorted(maps.Keys(g.values[name])); len(vals) > 1 {
				knobs = append(knobs, search.Knob{Name: name, Values: vals})
			}
		}
		cfgs = append(cfgs, tune.Config{Base: g.base, Knobs: knobs, Strategy: sr.Strategy, Seed: sr.Seed, Budget: sr.Budget,
			Objective: sr.Objective, MinImprovement: sr.MinImprovement, Top: sr.Top, Options: g.opt, Allow: allow})
	}
	return cfgs, nil
}

// errNotInSweep refuses a configuration the sweep's lists and where:
// filters leave out.
var errNotInSweep = errors.New("not in the sweep (its knob lists and where: filters leave it out)")
