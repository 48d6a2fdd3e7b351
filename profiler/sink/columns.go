package sink

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
)

// A Column is one CSV column: its header name, how a Result fills its cell,
// and how a cell is read back into a Result. Writing (OpenCSV, WriteCSVFile)
// and reading (ReadDone for --resume, ReadCSV for reports) go through the
// same table, so the two cannot drift apart.
type Column struct {
	Name string
	// Encode renders the cell of r.
	Encode func(r *profiler.Result) string
	// Decode sets what the cell holds on r. An empty cell is what Encode
	// writes for "not known" and decodes to nothing set.
	Decode func(r *profiler.Result, cell string) error
}

// Columns are the spec-dependent CSV columns: the union of knob, dim and
// flag names over a sweep, in schema order.
type Columns struct {
	Knobs, Dims, Flags []string
	// Search adds the optional search_step column last (a search's rows:
	// mltop tune, a sweep's search: block).
	Search bool
}

// ColumnsFor builds the union over specs.
func ColumnsFor(specs []profiler.Spec) Columns {
	var c Columns
	for _, s := range specs {
		f, err := profiler.Lookup(s.Kernel)
		if err != nil {
			continue
		}
		c.addSchema(f.Schema())
	}
	return c
}

func (c *Columns) addSchema(sc profiler.Schema) {
	add := func(list *[]string, name string) {
		if !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for _, p := range sc.Knobs {
		add(&c.Knobs, p.Name)
	}
	for _, p := range sc.Dims {
		add(&c.Dims, p.Name)
	}
	for _, fl := range sc.Flags {
		add(&c.Flags, fl.Name)
	}
}

// Table is the ordered column table for these spec columns: the fixed
// leading columns, the knobs, dims and flags, then the fixed measurement
// columns.
func (c Columns) Table() []Column {
	t := slices.Clone(headColumns)
	for _, k := range c.Knobs {
		t = append(t, intMapColumn(c.header(KnobPrefix, k), k, func(s *profiler.Spec) map[string]int { return s.Knobs }))
	}
	for _, d := range c.Dims {
		t = append(t, intMapColumn(c.header(DimPrefix, d), d, func(s *profiler.Spec) map[string]int { return s.Dims }))
	}
	for _, f := range c.Flags {
		t = append(t, flagColumn(c.header(FlagPrefix, f), f))
	}
	t = append(t, tailColumns...)
	if c.Search {
		t = append(t, searchStepColumn)
	}
	return t
}

// The prefixes of a spec column whose name would clash: a dim named n
// (a kernel's length, as its source calls it) beside the sample count n is
// written as dim.n, a knob named like a dim of another kernel of the sweep
// as knob.X. Only such names are prefixed, so every other header stays as
// it was.
const (
	KnobPrefix = "knob."
	DimPrefix  = "dim."
	FlagPrefix = "flag."
)

// header is the CSV header of the spec column name, listed under prefix's
// kind: name itself, or prefix+name where name is a fixed column (n,
// time, status, …), the search_step column, or a spec column of another
// kind in c.
func (c Columns) header(prefix, name string) string {
	kinds := 0
	for _, list := range [][]string{c.Knobs, c.Dims, c.Flags} {
		if slices.Contains(list, name) {
			kinds++
		}
	}
	if kinds > 1 || name == SearchStepColumn || isFixedColumn(name) {
		return prefix + name
	}
	return name
}

func isFixedColumn(name string) bool {
	return slices.ContainsFunc(headColumns, func(c Column) bool { return c.Name == name }) ||
		slices.ContainsFunc(tailColumns, func(c Column) bool { return c.Name == name })
}

// optionalColumns are fixed columns that CSVs written before they existed
// lack; a decoder reads such files and leaves the field at its zero value.
// (--resume still wants the exact header of the sweep it continues.)
var optionalColumns = []string{"device_ordinal", "cache", DispatchMediansColumn, SMClockColumn, SettleColumn,
	CILoColumn, CIHiColumn, StopReasonColumn, WorstOverBoundColumn, WallColumn, MeanColumn}

// FixedColumns are the names every mltop CSV has, whatever its kernels.
func FixedColumns() []string {
	var names []string
	for _, c := range headColumns {
		names = append(names, c.Name)
	}
	for _, c := range tailColumns {
		names = append(names, c.Name)
	}
	return names
}

const timeLayout = "2006-01-02T15:04:05Z"

var headColumns = []Column{
	{"time", func(r *profiler.Result) string { return r.Time.UTC().Format(timeLayout) },
		func(r *profiler.Result, cell string) error {
			t, err := time.Parse(timeLayout, cell)
			if err != nil {
				return fmt.Errorf("%q is not a time like 2006-01-02T15:04:05Z", cell)
			}
			r.Time = t
			return nil
		}},
	stringColumn("backend", func(r *profiler.Result) *string { return &r.Backend }),
	stringColumn("device", func(r *profiler.Result) *string { return &r.Device }),
	{"device_ordinal", func(r *profiler.Result) string { return strconv.Itoa(r.DeviceOrdinal) },
		func(r *profiler.Result, cell string) error { return parseInt(cell, &r.DeviceOrdinal) }},
	stringColumn("timer", func(r *profiler.Result) *string { return &r.Timer }),
	{"cache", func(r *profiler.Result) string { return string(r.Cache) },
		func(r *profiler.Result, cell string) error { r.Cache = profiler.CacheMode(cell); return nil }},
	stringColumn("kernel", func(r *profiler.Result) *string { return &r.Spec.Kernel }),
	{"dtype", func(r *profiler.Result) string { return string(r.Spec.DType) },
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			d, err := profiler.ParseDType(cell)
			if err != nil {
				return err
			}
			r.Spec.DType = d
			return nil
		}},
}

var tailColumns = []Column{
	{"n", func(r *profiler.Result) string {
		if !measured(r) {
			return ""
		}
		return strconv.Itoa(r.Stats.N)
	}, func(r *profiler.Result, cell string) error { return parseOptInt(cell, &r.Stats.N) }},
	microsColumn("min_us", measured, func(r *profiler.Result) *float64 { return &r.Stats.Min }),
	microsColumn("p10_us", measured, func(r *profiler.Result) *float64 { return &r.Stats.P10 }),
	microsColumn("median_us", measured, func(r *profiler.Result) *float64 { return &r.Stats.Median }),
	microsColumn("p90_us", measured, func(r *profiler.Result) *float64 { return &r.Stats.P90 }),
	// The mean: steadier than the median for a kernel whose samples sit at
	// two levels (docs/measuring.md, Reproducibility).
	microsColumn(MeanColumn, measured, func(r *profiler.Result) *float64 { return &r.Stats.Mean }),
	// The median's 95% confidence interval; empty below 6 samples, where
	// there is none.
	microsColumn(CILoColumn, hasCI, func(r *profiler.Result) *float64 { return &r.Stats.CILo }),
	microsColumn(CIHiColumn, hasCI, func(r *profiler.Result) *float64 { return &r.Stats.CIHi }),
	measuredFloat("cv", func(r *profiler.Result) *float64 { return &r.Stats.CV }),
	{StopReasonColumn, func(r *profiler.Result) string { return r.StopReason },
		func(r *profiler.Result, cell string) error {
			if cell != "" && !slices.Contains(stopReasons, cell) {
				return fmt.Errorf("unknown stop reason %q: mltop writes one of %s", cell, strings.Join(stopReasons, ", "))
			}
			r.StopReason = cell
			return nil
		}},
	measuredFloat("tflops", func(r *profiler.Result) *float64 { return &r.TFLOPS }),
	measuredFloat("gbps", func(r *profiler.Result) *float64 { return &r.GBps }),
	// A percentage of a peak is empty where the peak is not known.
	positiveColumn("pct_peak_flops", func(r *profiler.Result) *float64 { return &r.PctPeakFLOP }),
	positiveColumn("pct_peak_bw", func(r *profiler.Result) *float64 { return &r.PctPeakBW }),
	positiveColumn("pct_measured_flops", func(r *profiler.Result) *float64 { return &r.PctMeasFLOP }),
	positiveColumn("pct_measured_bw", func(r *profiler.Result) *float64 { return &r.PctMeasBW }),
	// The budget columns hold the largest dispatch's TGM and its limit, and
	// the largest static TGM a compiler reported; they read back as one
	// BudgetReport, and are empty where there is none (a spec refused
	// before its plan was built).
	{"tgm_bytes", func(r *profiler.Result) string {
		if len(r.Budget) == 0 {
			return ""
		}
		tgm, _ := r.MaxTGM()
		return strconv.Itoa(tgm)
	}, func(r *profiler.Result, cell string) error {
		return parseBudgetInt(r, cell, func(b *profiler.BudgetReport) *int { return &b.Total })
	}},
	{"tgm_limit", func(r *profiler.Result) string {
		if len(r.Budget) == 0 {
			return ""
		}
		_, lim := r.MaxTGM()
		return strconv.Itoa(lim)
	}, func(r *profiler.Result, cell string) error {
		return parseBudgetInt(r, cell, func(b *profiler.BudgetReport) *int { return &b.Limit })
	}},
	{"compiler_tgm", func(r *profiler.Result) string {
		c := 0
		for _, b := range r.Budget {
			c = max(c, b.CompilerTGM)
		}
		if c == 0 {
			return "" // no compiler reported one
		}
		return strconv.Itoa(c)
	}, func(r *profiler.Result, cell string) error {
		return parseBudgetInt(r, cell, func(b *profiler.BudgetReport) *int { return &b.CompilerTGM })
	}},
	{"occupancy", func(r *profiler.Result) string {
		if o, ok := r.MinOccupancy(); ok {
			return strconv.Itoa(o.GroupsPerUnit)
		}
		return "n/a"
	}, func(r *profiler.Result, cell string) error {
		if cell == "n/a" || cell == "" {
			return nil
		}
		o := profiler.Occupancy{Available: true}
		if err := parseInt(cell, &o.GroupsPerUnit); err != nil {
			return fmt.Errorf("%q is neither a count of groups nor n/a", cell)
		}
		r.Occupancy = []profiler.Occupancy{o}
		return nil
	}},
	{"occupancy_limiter", func(r *profiler.Result) string {
		if o, ok := r.MinOccupancy(); ok {
			return o.Limiter
		}
		return ""
	}, func(r *profiler.Result, cell string) error {
		if cell == "" {
			return nil
		}
		if len(r.Occupancy) == 0 {
			return fmt.Errorf("limiter %q without an occupancy", cell)
		}
		r.Occupancy[0].Limiter = cell
		return nil
	}},
	{"memory_bytes", func(r *profiler.Result) string {
		if r.MemoryBytes == 0 {
			return "" // no plan was built
		}
		return strconv.FormatInt(r.MemoryBytes, 10)
	},
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			v, err := strconv.ParseInt(cell, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a whole number of bytes", cell)
			}
			r.MemoryBytes = v
			return nil
		}},
	verdictFloat("max_abs_err", func(v *profiler.Verdict) *float64 { return &v.MaxAbsErr }),
	verdictFloat("max_rel_err", func(v *profiler.Verdict) *float64 { return &v.MaxRelErr }),
	verdictFloat("rms_err", func(v *profiler.Verdict) *float64 { return &v.RMSErr }),
	// How close the worst element came to its bound (|got−want|/bound):
	// above 1 failed; empty where nothing was compared.
	{WorstOverBoundColumn, func(r *profiler.Result) string {
		if v := r.Verdict; v != nil && !v.Unchecked {
			return fnum(v.WorstRatio)
		}
		return ""
	}, func(r *profiler.Result, cell string) error {
		if cell == "" {
			return nil
		}
		return parseFloat(cell, &verdict(r).WorstRatio)
	}},
	{"tol", func(r *profiler.Result) string {
		if v := r.Verdict; v != nil {
			return fmt.Sprintf("atol=%g rtol=%g", v.ATol, v.RTol)
		}
		return ""
	}, func(r *profiler.Result, cell string) error {
		if cell == "" {
			return nil
		}
		f := strings.Fields(cell)
		bad := fmt.Errorf("%q is not a tolerance like \"atol=1e-05 rtol=0.0001\"", cell)
		if len(f) != 2 || !strings.HasPrefix(f[0], "atol=") || !strings.HasPrefix(f[1], "rtol=") {
			return bad
		}
		a, err1 := strconv.ParseFloat(f[0][len("atol="):], 64)
		b, err2 := strconv.ParseFloat(f[1][len("rtol="):], 64)
		if err1 != nil || err2 != nil {
			return bad
		}
		v := verdict(r)
		v.ATol, v.RTol = a, b
		return nil
	}},
	{"rows_checked", func(r *profiler.Result) string {
		if v := r.Verdict; v != nil {
			return strconv.Itoa(v.RowsChecked)
		}
		return ""
	}, func(r *profiler.Result, cell string) error {
		if cell == "" {
			return nil
		}
		return parseInt(cell, &verdict(r).RowsChecked)
	}},
	{"status", func(r *profiler.Result) string { return string(r.Status) },
		func(r *profiler.Result, cell string) error {
			st := profiler.Status(cell)
			if !slices.Contains(knownStatuses, st) {
				return fmt.Errorf("unknown status %q: mltop writes one of %s", cell, joinStatuses())
			}
			r.Status = st
			return nil
		}},
	stringColumn("error", func(r *profiler.Result) *string { return &r.Error }),
	{DispatchMediansColumn, func(r *profiler.Result) string { return EncodeDispatchMedians(r.PerDispatch) },
		func(r *profiler.Result, cell string) error {
			d, err := DecodeDispatchMedians(cell)
			if err != nil {
				return err
			}
			r.PerDispatch = d
			return nil
		}},
	// The GPU's effective core clock during the samples; empty where the
	// backend does not measure it (CPU, Metal).
	positiveColumn(SMClockColumn, func(r *profiler.Result) *float64 { return &r.SMClockMHz }),
	// --settle's seconds, so that settled and unsettled rows can be told
	// apart in one file; empty without it.
	positiveColumn(SettleColumn, func(r *profiler.Result) *float64 { return &r.Settle }),
	// The spec's wall time on its device, plan to check (a compile done
	// ahead while another spec was measured is not in it): what a search's
	// measurement of it costs. Empty where it was not run.
	positiveColumn(WallColumn, func(r *profiler.Result) *float64 { return &r.WallSeconds }),
}

// The columns added with exact floats and empty unmeasured cells; CSVs
// written before them lack them and still read.
const (
	CILoColumn           = "ci_lo_us"         // low end of the median's 95% confidence interval
	CIHiColumn           = "ci_hi_us"         // high end of it
	StopReasonColumn     = "stop_reason"      // why sampling stopped (profiler.StopPrecision, …)
	WorstOverBoundColumn = "worst_over_bound" // the worst element's |got−want| over its bound
	MeanColumn           = "mean_us"          // the samples' mean
)

// stopReasons are the stop_reason values mltop writes.
var stopReasons = []string{profiler.StopPrecision, profiler.StopTimeLimit, profiler.StopMaxSamples, profiler.StopOutpaced}

// SettleColumn holds the --settle a spec was measured with. CSVs written
// before it existed lack it and still read.
const SettleColumn = "settle_s"

// WallColumn holds a spec's wall time in seconds (Result.WallSeconds).
// CSVs written before it existed lack it and still read.
const WallColumn = "wall_s"

// SMClockColumn holds the GPU's measured core clock (MHz) during a spec's
// samples. CSVs written before it existed lack it and still read.
const SMClockColumn = "sm_clock_mhz"

// DispatchMediansColumn holds a multi-dispatch plan's median per dispatch.
// CSVs written before it existed lack it and still read.
const DispatchMediansColumn = "dispatch_medians_us"

// The statuses a row may hold.
var knownStatuses = []profiler.Status{profiler.StatusOK, profiler.StatusMismatch, profiler.StatusCompileError, profiler.StatusInvalid,
	profiler.StatusCrashed, profiler.StatusTimeout, profiler.StatusError, profiler.StatusCancelled, profiler.StatusUnchecked}

func joinStatuses() string {
	s := make([]string, len(knownStatuses))
	for i, st := range knownStatuses {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

func stringColumn(name string, field func(r *profiler.Result) *string) Column {
	return Column{name,
		func(r *profiler.Result) string { return profiler.OneLine(*field(r)) },
		func(r *profiler.Result, cell string) error { *field(r) = cell; return nil }}
}

// measured says whether r holds timings. A row that was not timed
// (invalid, compile_error, crashed, cancelled) has none, and its
// measurement cells are empty rather than 0, so that an average over a
// column does not count it.
func measured(r *profiler.Result) bool { return r.Stats.N > 0 }

// hasCI says whether r's median has a confidence interval (6 samples or more).
func hasCI(r *profiler.Result) bool { return measured(r) && r.Stats.CIHi > 0 }

// measuredFloat is a figure of a timed row; empty for a row not timed.
func measuredFloat(name string, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if !measured(r) {
				return ""
			}
			return fnum(*field(r))
		},
		func(r *profiler.Result, cell string) error { return parseOptFloat(cell, field(r)) }}
}

// positiveColumn is a figure that is only sometimes known: an empty cell
// where it is 0 (or less), and an empty cell reads as 0.
func positiveColumn(name string, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if *field(r) <= 0 {
				return ""
			}
			return fnum(*field(r))
		},
		func(r *profiler.Result, cell string) error { return parseOptFloat(cell, field(r)) }}
}

// microsColumn holds a duration kept in ns as µs, exactly (see fmicros),
// where known says it is; empty elsewhere.
func microsColumn(name string, known func(r *profiler.Result) bool, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if !known(r) {
				return ""
			}
			return fmicros(*field(r))
		},
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			ns, err := parseMicros(cell)
			if err != nil {
				return err
			}
			*field(r) = ns
			return nil
		}}
}

func verdictFloat(name string, field func(v *profiler.Verdict) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if r.Verdict == nil {
				return ""
			}
			return fnum(*field(r.Verdict))
		},
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			return parseFloat(cell, field(verdict(r)))
		}}
}

// intMapColumn is the column head of the spec's map entry name (a knob or
// dim).
func intMapColumn(head, name string, m func(s *profiler.Spec) map[string]int) Column {
	return Column{head,
		func(r *profiler.Result) string { return optInt(m(&r.Spec), name) },
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			var v int
			if err := parseInt(cell, &v); err != nil {
				return err
			}
			mp := m(&r.Spec)
			if mp == nil {
				return fmt.Errorf("no map for %s", name) // cannot happen: decode makes the maps
			}
			mp[name] = v
			return nil
		}}
}

func flagColumn(head, name string) Column {
	return Column{head,
		func(r *profiler.Result) string {
			v, ok := r.Spec.Flags[name]
			switch {
			case !ok:
				return ""
			case v:
				return "1"
			}
			return "0"
		},
		func(r *profiler.Result, cell string) error {
			switch cell {
			case "":
			case "1":
				r.Spec.Flags[name] = true
			case "0":
				r.Spec.Flags[name] = false
			default:
				return fmt.Errorf("%q is not a flag: want 0 or 1", cell)
			}
			return nil
		}}
}

func budget(r *profiler.Result) *profiler.BudgetReport {
	if len(r.Budget) == 0 {
		r.Budget = []profiler.BudgetReport{{}}
	}
	return &r.Budget[0]
}

func verdict(r *profiler.Result) *profiler.Verdict {
	if r.Verdict == nil {
		r.Verdict = &profiler.Verdict{}
	}
	return r.Verdict
}

// ColumnsOf reads the spec columns of an mltop CSV's header: every name
// that is not a fixed column, as a knob, flag or dim by its prefix
// (knob.X, dim.n, flag.X: see Columns.header) or else by what the
// registered families call it (a name no family knows is read as a dim).
func ColumnsOf(header []string) Columns {
	var known Columns
	for _, f := range profiler.Families(true) {
		known.addSchema(f.Schema())
	}
	fixed := FixedColumns()
	var c Columns
	for _, h := range header {
		kind, name := prefixed(h)
		switch {
		case kind != nil:
			*kind(&c) = append(*kind(&c), name)
		case slices.Contains(fixed, h):
		case h == SearchStepColumn:
			c.Search = true
		case slices.Contains(known.Knobs, h):
			c.Knobs = append(c.Knobs, h)
		case slices.Contains(known.Flags, h):
			c.Flags = append(c.Flags, h)
		default:
			c.Dims = append(c.Dims, h)
		}
	}
	return c
}

// prefixed reads a prefixed spec column's header (dim.n): the list of its
// kind and its name; a nil list for any other header.
func prefixed(h string) (func(c *Columns) *[]string, string) {
	for _, k := range []struct {
		prefix string
		list   func(c *Columns) *[]string
	}{
		{KnobPrefix, func(c *Columns) *[]string { return &c.Knobs }},
		{DimPrefix, func(c *Columns) *[]string { return &c.Dims }},
		{FlagPrefix, func(c *Columns) *[]string { return &c.Flags }},
	} {
		if name, ok := strings.CutPrefix(h, k.prefix); ok && name != "" {
			return k.list, name
		}
	}
	return nil, ""
}
