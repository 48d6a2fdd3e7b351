package sweep

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/tune"
)

// SearchYAML is a sweep file's `search:` block: instead of measuring
// every spec, a strategy picks which to measure under a budget, per shape
// and dtype (mltop tune does the same from the command line).
type SearchYAML struct {
	Strategy       string           `yaml:"strategy"`        // tpe (default), evolution, halving, random, exhaustive
	Budget         *BudgetText      `yaml:"budget"`          // 60, "10%", "5m"; default 10%
	Objective      string           `yaml:"objective"`       // median_us (default), tflops, gbps
	MinImprovement *float64         `yaml:"min_improvement"` // a fraction; 0 (default) is off
	Top            *SettingText     `yaml:"top"`             // contenders re-measured (default 3)
	Seed           *SettingText     `yaml:"seed"`            // the strategy's seed (default 1)
	Shapes         []map[string]int `yaml:"shapes"`          // shapes replacing each sweep's dims
	Table          string           `yaml:"table"`           // tuning table file (.csv or .json)
	Header         string           `yaml:"header"`          // C/C++/CUDA header
	MetalHeader    string           `yaml:"metal_header"`    // Metal header
}

// BudgetText is a budget as written: a number or a string.
type BudgetText string

// UnmarshalYAML takes the scalar's text (60, 10%, 5m).
func (b *BudgetText) UnmarshalYAML(n ast.Node) error {
	if _, ok := n.(ast.ScalarNode); !ok {
		tk := n.GetToken()
		return fmt.Errorf("[%d:%d] budget: want a number of evaluations (60), a share (10%%) or a time (5m)", tk.Position.Line, tk.Position.Column)
	}
	*b = BudgetText(strings.Trim(strings.TrimSpace(n.String()), `"'`))
	return nil
}

// Search is a checked search: block.
type Search struct {
	Strategy       string
	Budget         search.Budget
	Objective      tune.Objective
	MinImprovement float64
	Top            int
	Seed           uint64
	Shapes         []map[string]int
	Table          string
	Header         string
	MetalHeader    string
}

// parseSearch checks the block; at names a field of it in errors. A nil
// block is no search.
func parseSearch(y *SearchYAML, at func(field, msg string) error) (*Search, error) {
	if y == nil {
		return nil, nil
	}
	s := &Search{Strategy: "tpe", Budget: search.Budget{Fraction: 0.1}, Objective: tune.MedianUS, Top: 3, Seed: 1,
		Shapes: y.Shapes, Table: y.Table, Header: y.Header, MetalHeader: y.MetalHeader}
	if y.Strategy != "" {
		name, ok := search.Canonical(y.Strategy)
		if !ok {
			return nil, at("strategy", fmt.Sprintf("unknown strategy %q: use one of %s", y.Strategy, strings.Join(search.Names, ", ")))
		}
		s.Strategy = name
	}
	var err error
	if y.Budget != nil {
		if s.Budget, err = search.ParseBudget(string(*y.Budget)); err != nil {
			return nil, at("budget", err.Error())
		}
	}
	if s.Objective, err = tune.ParseObjective(y.Objective); err != nil {
		return nil, at("objective", err.Error())
	}
	if m := y.MinImprovement; m != nil {
		if !(*m >= 0 && *m < 1) {
			return nil, at("min_improvement", fmt.Sprintf("min_improvement=%g: use a fraction between 0 (off) and 1, e.g. 0.01", *m))
		}
		s.MinImprovement = *m
	}
	if y.Top != nil {
		n, err := strconv.Atoi(y.Top.Text)
		if err != nil || n < 1 {
			return nil, at("top", fmt.Sprintf("top=%s: re-measure at least 1 contender (a whole number, default 3)", y.Top.Text))
		}
		s.Top = n
	}
	if y.Seed != nil {
		if s.Seed, err = strconv.ParseUint(y.Seed.Text, 10, 64); err != nil {
			return nil, at("seed", fmt.Sprintf("seed %s: use a whole number, 0 or more", y.Seed.Text))
		}
	}
	if y.Shapes != nil && len(y.Shapes) == 0 {
		return nil, at("shapes", "empty list: give at least one shape, e.g. - {rows: 1024, cols: 4096}")
	}
	for i, sh := range y.Shapes {
		if len(sh) == 0 {
			return nil, at(fmt.Sprintf("shapes[%d]", i), "an empty shape: give its dims, e.g. {rows: 1024, cols: 4096}")
		}
		for j := range i {
			if maps.Equal(y.Shapes[j], sh) {
				return nil, at(fmt.Sprintf("shapes[%d]", i), fmt.Sprintf("the same shape as shapes[%d]: list each shape once", j))
			}
		}
	}
	if y.Table != "" && !slices.Contains([]string{".csv", ".json"}, strings.ToLower(ext(y.Table))) {
		return nil, at("table", fmt.Sprintf("table %s: name a .csv or .json file", y.Table))
	}
	return s, nil
}

func ext(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i:]
	}
	return ""
}

// compileSearchEntries compiles a sweep entry once per shape of the
// search block (the shape's dims replace the entry's), or once as it is
// without shapes; the entries before find duplicates as for any entry.
// The dims the shapes name that the kernel lacks are errors at the
// shapes, all of them, with the entry's own unknown names (a *namesError).
func compileSearchEntries(s SweepYAML, sr *Search, base profiler.Options, sx sweepCtx, before []*entry, at func(field, msg string) error) ([]*entry, error) {
	if sr == nil || len(sr.Shapes) == 0 {
		e, err := compileEntry(s, base, sx, before)
		if err != nil {
			return nil, err
		}
		return []*entry{e}, nil
	}
	f, err := profiler.Lookup(s.Kernel)
	if err != nil {
		_, err := compileEntry(s, base, sx, before) // it names the error at the entry
		return nil, err
	}
	sc := f.Schema()
	if unknown := unknownShapeDims(s.Kernel, sc, sr.Shapes, at); len(unknown) > 0 {
		return nil, namesErr(append(unknownNames(s, sc, sx.at), unknown...))
	}
	var es []*entry
	for i, shape := range sr.Shapes {
		one := s
		one.Dims = maps.Clone(s.Dims)
		if one.Dims == nil {
			one.Dims = map[string]IntList{}
		}
		for _, name := range slices.Sorted(maps.Keys(shape)) {
			p, _ := sc.Dim(name)
			if err := p.Check(shape[name]); err != nil {
				return nil, at(fmt.Sprintf("shapes[%d].%s", i, name), err.Error())
			}
			one.Dims[name] = IntList{shape[name]}
		}
		e, err := compileEntry(one, base, sx, append(slices.Clip(before), es...))
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

// unknownShapeDims is one InputError for each dim of each shape that
// kernel's schema lacks, with checkNames' message.
func unknownShapeDims(kernel string, sc profiler.Schema, shapes []map[string]int, at func(field, msg string) error) []error {
	var unknown []error
	for i, shape := range shapes {
		for _, name := range slices.Sorted(maps.Keys(shape)) {
			if _, ok := sc.Dim(name); !ok {
				unknown = append(unknown, at(fmt.Sprintf("shapes[%d].%s", i, name), unknownParam("dim", name, kernel, sc)))
			}
		}
	}
	return unknown
}

// Makes says whether the sweep makes spec: an entry of its kernel has its
// dtype and values and its `where:` filters keep it. It is how a search
// over a shape's knobs asks the sweep about a configuration without the
// sweep's specs held in memory. An error is a filter's that failed.
func (st *Stream) Makes(spec profiler.Spec) (bool, error) {
	for _, e := range st.entries {
		if e.kernel != spec.Kernel {
			continue
		}
		if ok, err := e.makes(spec); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}
