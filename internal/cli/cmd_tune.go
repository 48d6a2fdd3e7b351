package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/tune"
	"github.com/mltop/mltop/profiler/units"
)

const (
	tuneSummary = "search the knobs for the best configuration per shape, instead of measuring them all"
	tuneHelp    = `  mltop tune KERNEL|PATH [--dims K=V,...] [--shapes "K=V,...;K=V,..."] [--dtype D[,D]]
            [--budget 60|10%|5m] [--strategy tpe] [--objective median_us] [--min-improvement F]
            [--top 3] [--search-seed N] [--table FILE] [--header FILE.h] [--metal-header FILE.metal]
                                        search the knobs not fixed by --set (strategies tpe,
                                        evolution, halving, random, exhaustive); re-measure the best
                                        and compare them; per shape and dtype a tuning table and
                                        headers with select_config; --csv/--resume as for sweeps
`
)

// tuneArgs are the flags of `mltop tune`.
type tuneArgs struct {
	specArgs
	dims, shapes, budget, strategy, objective string
	minImprovement                            float64
	top                                       int
	searchSeed                                uint64
	table, header, metalHeader                string
}

func (a *tuneArgs) declare(fs *flag.FlagSet) {
	a.specArgs.declare(fs)
	fs.StringVar(&a.dims, "dims", "", "the shape to tune: dims as NAME=VALUE,...")
	fs.StringVar(&a.shapes, "shapes", "", "shapes to tune, separated by ';' (a tuning table)")
	fs.StringVar(&a.budget, "budget", "10%", "evaluations (60), a share of the configurations (10%) or a time (5m) per shape and dtype")
	fs.StringVar(&a.strategy, "strategy", "tpe", "tpe, evolution, halving, random or exhaustive")
	fs.StringVar(&a.objective, "objective", "median_us", "median_us (minimised), tflops or gbps (maximised)")
	fs.Float64Var(&a.minImprovement, "min-improvement", 0, "stop a search when its last measurements improved the best by less than this fraction")
	fs.IntVar(&a.top, "top", 3, "contenders re-measured with full precision at the end")
	fs.Uint64Var(&a.searchSeed, "search-seed", 1, "seed of the search strategy")
	fs.StringVar(&a.table, "table", "", "write the tuning table to FILE (.csv or .json)")
	fs.StringVar(&a.header, "header", "", "write a C/C++/CUDA header with KERNEL_select_config")
	fs.StringVar(&a.metalHeader, "metal-header", "", "write the same header for Metal")
}

// tuneOutputs are where a tuning's results go besides the CSV.
type tuneOutputs struct {
	table, header, metalHeader string
}

// check refuses output paths that cannot be written, before anything runs.
func (t tuneOutputs) check() error {
	for _, f := range []struct{ flag, path string }{{"table", t.table}, {"header", t.header}, {"metal-header", t.metalHeader}} {
		if f.path == "" {
			continue
		}
		if f.flag == "table" && !slices.Contains([]string{".csv", ".json"}, strings.ToLower(filepath.Ext(f.path))) {
			return badInput("--table %s: name a .csv or .json file", f.path)
		}
		if st, err := os.Stat(filepath.Dir(f.path)); err != nil || !st.IsDir() {
			return badInput("--%s %s: the folder %s does not exist", f.flag, f.path, filepath.Dir(f.path))
		}
	}
	return nil
}

// runTune is `mltop tune KERNEL …`.
func runTune(ctx context.Context, s *session, a *tuneArgs, pos []string) error {
	kernel, err := a.target(s, pos, "tune", "one kernel name", "mltop tune rmsnorm_bwd --dims rows=4096,D=8192 --dtype bf16 --budget 60")
	if err != nil {
		return err
	}
	if a.o.json || a.o.bench {
		return badInput("tune prints its own report: --json and --bench are for run and sweeps; every measurement goes to --csv FILE")
	}
	if kernel, err = s.resolveKernelArg(kernel); err != nil {
		return err
	}
	st, err := a.settings()
	if err != nil {
		return err
	}
	cfgs, err := a.configs(kernel, st)
	if err != nil {
		return err
	}
	return s.runSearches(ctx, &a.o, a.o.backend, cfgs, tuneOutputs{a.table, a.header, a.metalHeader}, "")
}

// searchSettings are what every search of one command shares.
type searchSettings struct {
	strategy       string
	budget         search.Budget
	objective      tune.Objective
	minImprovement float64
	top            int
	seed           uint64
}

// settings checks the search flags.
func (a *tuneArgs) settings() (searchSettings, error) {
	st := searchSettings{minImprovement: a.minImprovement, top: a.top, seed: a.searchSeed}
	var err error
	if st.budget, err = search.ParseBudget(a.budget); err != nil {
		return st, badInput("--budget: %v", err)
	}
	if st.objective, err = tune.ParseObjective(a.objective); err != nil {
		return st, badInput("--objective: %v", err)
	}
	name, ok := search.Canonical(a.strategy)
	if !ok {
		return st, badInput("--strategy %q: use one of %s", a.strategy, strings.Join(search.Names, ", "))
	}
	st.strategy = name
	if !(a.minImprovement >= 0 && a.minImprovement < 1) {
		return st, badInput("--min-improvement=%g: use a fraction between 0 (off) and 1, e.g. 0.01", a.minImprovement)
	}
	if a.top < 1 {
		return st, badInput("--top=%d: re-measure at least 1 contender (2 or more to compare)", a.top)
	}
	if a.dims != "" && a.shapes != "" {
		return st, badInput("--dims and --shapes both give shapes: use --shapes alone for several")
	}
	return st, nil
}

// configs makes one search per dtype and shape: the knobs --set fixes stay,
// the others are searched over their schema's values.
func (a *tuneArgs) configs(kernel string, st searchSettings) ([]tune.Config, error) {
	f, err := profiler.Lookup(kernel)
	if err != nil {
		return nil, badInput("%v", err)
	}
	sc := f.Schema()
	shapes, flagName := []string{a.dims}, "--dims"
	if a.shapes != "" {
		parsed, err := tune.ParseShapes(a.shapes)
		if err != nil {
			return nil, badInput("--shapes: %v", err)
		}
		shapes, flagName = shapes[:0], "--shapes"
		for _, m := range parsed {
			shapes = append(shapes, joinDims(m))
		}
	}
	fixed := map[string]bool{}
	for _, group := range a.sets {
		for _, kv := range strings.Split(group, ",") {
			if k, _, ok := strings.Cut(kv, "="); ok {
				fixed[strings.TrimSpace(k)] = true
			}
		}
	}
	var knobs []search.Knob
	for _, p := range sc.Knobs {
		if !fixed[p.Name] {
			knobs = append(knobs, search.Knob{Name: p.Name, Values: p.Choices()})
		}
	}
	if len(knobs) == 0 {
		return nil, badInput("--set fixes every knob of %s: nothing to search (leave out the knobs to tune)", kernel)
	}
	dtypes := strings.Split(a.dtype, ",")
	var cfgs []tune.Config
	for _, dt := range dtypes {
		for _, shape := range shapes {
			if err := onlyDims(sc, flagName, shape); err != nil {
				return nil, err
			}
			spec, err := parseSpec(kernel, strings.TrimSpace(dt), append(slices.Clone(a.sets), shape))
			if err != nil {
				return nil, err
			}
			cfgs = append(cfgs, tune.Config{Base: spec, Knobs: knobs, Strategy: st.strategy, Seed: st.seed, Budget: st.budget,
				Objective: st.objective, MinImprovement: st.minImprovement, Top: st.top, Options: a.o.measureOptions(nil)})
		}
	}
	return cfgs, nil
}

// onlyDims refuses a knob, flag or misspelt dim in a shape of --dims or
// --shapes (flagName), naming the shape and the nearest dim.
func onlyDims(sc profiler.Schema, flagName, shape string) error {
	m, err := tune.ParseDims(shape)
	if err != nil {
		return badInput("%s: %v", flagName, err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if _, ok := sc.Dim(k); ok {
			continue
		}
		why := "knobs to fix go in --set"
		if _, knob := sc.Knob(k); !knob {
			why = strings.TrimSpace(profiler.DidYouMean(k, profiler.ParamNameList(sc.Dims)))
		}
		return badInput("%s: in the shape %s, %s is not a dim (dims are %s)%s", flagName, shape, k, profiler.ParamNames(sc.Dims), suffix(why))
	}
	return nil
}

// suffix is "; s", or "" for an empty s.
func suffix(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

func joinDims(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// mltopVersion is the module version the binary was built from.
func mltopVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// printTable writes the tuning table for people.
func printTable(w io.Writer, t *tune.Table) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dtype\tshape\tconfig\tmedian\t95%% CI\tvs runner-up\n")
	for _, e := range t.Entries {
		ci := ""
		if e.CIHiUS > 0 {
			ci = units.Nanos4(1e3*e.CILoUS) + "–" + units.Nanos4(1e3*e.CIHiUS)
		}
		vs := e.Standing()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.DType, tune.KnobText(e.Dims, t.DimNames), tune.KnobText(e.Knobs, t.KnobNames), units.Nanos4(1e3*e.MedianUS), ci, vs)
	}
	tw.Flush()
}
