package sink

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
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
		t = append(t, intMapColumn(k, func(s *profiler.Spec) map[string]int { return s.Knobs }))
	}
	for _, d := range c.Dims {
		t = append(t, intMapColumn(d, func(s *profiler.Spec) map[string]int { return s.Dims }))
	}
	for _, f := range c.Flags {
		t = append(t, flagColumn(f))
	}
	return append(t, tailColumns...)
}

// Header is the CSV header for these columns.
func (c Columns) Header() []string {
	t := c.Table()
	h := make([]string, len(t))
	for i, col := range t {
		h[i] = col.Name
	}
	return h
}

// Row renders r under the header.
func (c Columns) Row(r profiler.Result) []string {
	t := c.Table()
	row := make([]string, len(t))
	for i, col := range t {
		row[i] = col.Encode(&r)
	}
	return row
}

// optionalColumns are fixed columns that CSVs written before they existed
// lack; a decoder reads such files and leaves the field at its zero value.
// (--resume still wants the exact header of the sweep it continues.)
var optionalColumns = []string{"device_ordinal", "cache", DispatchMediansColumn, SMClockColumn, SettleColumn}

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
	{"n", func(r *profiler.Result) string { return strconv.Itoa(r.Stats.N) },
		func(r *profiler.Result, cell string) error { return parseInt(cell, &r.Stats.N) }},
	microsColumn("min_us", func(r *profiler.Result) *float64 { return &r.Stats.Min }),
	microsColumn("p10_us", func(r *profiler.Result) *float64 { return &r.Stats.P10 }),
	microsColumn("median_us", func(r *profiler.Result) *float64 { return &r.Stats.Median }),
	microsColumn("p90_us", func(r *profiler.Result) *float64 { return &r.Stats.P90 }),
	floatColumn("cv", 4, func(r *profiler.Result) *float64 { return &r.Stats.CV }),
	floatColumn("tflops", 4, func(r *profiler.Result) *float64 { return &r.TFLOPS }),
	floatColumn("gbps", 4, func(r *profiler.Result) *float64 { return &r.GBps }),
	floatColumn("pct_peak_flops", 3, func(r *profiler.Result) *float64 { return &r.PctPeakFLOP }),
	floatColumn("pct_peak_bw", 3, func(r *profiler.Result) *float64 { return &r.PctPeakBW }),
	floatColumn("pct_measured_flops", 3, func(r *profiler.Result) *float64 { return &r.PctMeasFLOP }),
	floatColumn("pct_measured_bw", 3, func(r *profiler.Result) *float64 { return &r.PctMeasBW }),
	// The budget columns hold the largest dispatch's TGM and its limit, and
	// the largest static TGM a compiler reported; they read back as one
	// BudgetReport.
	{"tgm_bytes", func(r *profiler.Result) string { tgm, _ := r.MaxTGM(); return strconv.Itoa(tgm) },
		func(r *profiler.Result, cell string) error { return parseInt(cell, &budget(r).Total) }},
	{"tgm_limit", func(r *profiler.Result) string { _, lim := r.MaxTGM(); return strconv.Itoa(lim) },
		func(r *profiler.Result, cell string) error { return parseInt(cell, &budget(r).Limit) }},
	{"compiler_tgm", func(r *profiler.Result) string {
		c := 0
		for _, b := range r.Budget {
			c = max(c, b.CompilerTGM)
		}
		return strconv.Itoa(c)
	}, func(r *profiler.Result, cell string) error { return parseInt(cell, &budget(r).CompilerTGM) }},
	// Occupancy: the tightest dispatch's groups per unit ("n/a" when no
	// dispatch has one) and the limit that binds; read back as one Occupancy.
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
	{"memory_bytes", func(r *profiler.Result) string { return strconv.FormatInt(r.MemoryBytes, 10) },
		func(r *profiler.Result, cell string) error {
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
	positiveColumn(SMClockColumn, 5, func(r *profiler.Result) *float64 { return &r.SMClockMHz }),
	// --settle's seconds, so that settled and unsettled rows can be told
	// apart in one file; empty without it.
	positiveColumn(SettleColumn, 4, func(r *profiler.Result) *float64 { return &r.Settle }),
}

// SettleColumn holds the --settle a spec was measured with. CSVs written
// before it existed lack it and still read.
const SettleColumn = "settle_s"

// SMClockColumn holds the GPU's measured core clock (MHz) during a spec's
// samples. CSVs written before it existed lack it and still read.
const SMClockColumn = "sm_clock_mhz"

// DispatchMediansColumn holds a multi-dispatch plan's median per dispatch.
// CSVs written before it existed lack it and still read.
const DispatchMediansColumn = "dispatch_medians_us"

// EncodeDispatchMedians renders per-dispatch medians compactly, in plan
// order: "delta=31.2;dq=1331;dkv=1868.4", a setup dispatch (a zero fill)
// marked with * after its name: "zero_dW*=3.1;rmsnorm_bwd=50". Empty for a
// single-dispatch plan (the median_us column is its figure). A ';' or '='
// in a name is written as '_'.
func EncodeDispatchMedians(ds []profiler.DispatchStats) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		name := strings.NewReplacer(";", "_", "=", "_", "\n", " ", "\r", " ").Replace(d.Name)
		if d.Setup {
			name += "*"
		}
		parts[i] = name + "=" + fnum(d.MedianNS/1e3, 6)
	}
	return strings.Join(parts, ";")
}

// DecodeDispatchMedians reads EncodeDispatchMedians's cell back: each
// dispatch's name, setup mark and median (Stats.Median too; the cell holds
// no other statistic).
func DecodeDispatchMedians(cell string) ([]profiler.DispatchStats, error) {
	if cell == "" {
		return nil, nil
	}
	var out []profiler.DispatchStats
	for _, part := range strings.Split(cell, ";") {
		name, val, ok := strings.Cut(part, "=")
		setup := strings.HasSuffix(name, "*")
		name = strings.TrimSuffix(name, "*")
		us, err := strconv.ParseFloat(val, 64)
		if !ok || name == "" || err != nil || us < 0 || math.IsNaN(us) || math.IsInf(us, 0) {
			return nil, fmt.Errorf("%q is not a list of dispatch medians like \"zero_dW*=3.1;rmsnorm_bwd=50.2\" (name, * for a setup step, = median in µs; ; between dispatches)", part)
		}
		ns := us * 1e3
		out = append(out, profiler.DispatchStats{Name: name, MedianNS: ns, Setup: setup, Stats: profiler.Stats{Median: ns}})
	}
	return out, nil
}

// The statuses a row may hold.
var knownStatuses = []profiler.Status{profiler.StatusOK, profiler.StatusMismatch, profiler.StatusCompileError, profiler.StatusInvalid,
	profiler.StatusCrashed, profiler.StatusTimeout, profiler.StatusError, profiler.StatusCancelled}

func joinStatuses() string {
	s := make([]string, len(knownStatuses))
	for i, st := range knownStatuses {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

func stringColumn(name string, field func(r *profiler.Result) *string) Column {
	return Column{name,
		func(r *profiler.Result) string { return oneLine(*field(r)) },
		func(r *profiler.Result, cell string) error { *field(r) = cell; return nil }}
}

func floatColumn(name string, sig int, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string { return fnum(*field(r), sig) },
		func(r *profiler.Result, cell string) error { return parseFloat(cell, field(r)) }}
}

// positiveColumn is floatColumn for a figure that is only sometimes
// known: an empty cell where it is 0 (or less), and an empty cell reads as 0.
func positiveColumn(name string, sig int, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if *field(r) <= 0 {
				return ""
			}
			return fnum(*field(r), sig)
		},
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			return parseFloat(cell, field(r))
		}}
}

// microsColumn holds a duration kept in ns as µs.
func microsColumn(name string, field func(r *profiler.Result) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string { return fnum(*field(r)/1e3, 4) },
		func(r *profiler.Result, cell string) error {
			var us float64
			if err := parseFloat(cell, &us); err != nil {
				return err
			}
			*field(r) = us * 1e3
			return nil
		}}
}

func verdictFloat(name string, field func(v *profiler.Verdict) *float64) Column {
	return Column{name,
		func(r *profiler.Result) string {
			if r.Verdict == nil {
				return ""
			}
			return fnum(*field(r.Verdict), 4)
		},
		func(r *profiler.Result, cell string) error {
			if cell == "" {
				return nil
			}
			return parseFloat(cell, field(verdict(r)))
		}}
}

func intMapColumn(name string, m func(s *profiler.Spec) map[string]int) Column {
	return Column{name,
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

func flagColumn(name string) Column {
	return Column{name,
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

func parseInt(cell string, dst *int) error {
	v, err := strconv.Atoi(cell)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", cell)
	}
	*dst = v
	return nil
}

func parseFloat(cell string, dst *float64) error {
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", cell)
	}
	*dst = v
	return nil
}

func optInt(m map[string]int, k string) string {
	if v, ok := m[k]; ok {
		return strconv.Itoa(v)
	}
	return ""
}

// fnum prints with sig significant digits, no exponent for ordinary sizes.
func fnum(v float64, sig int) string {
	if v == 0 {
		return "0"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', sig, 64)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " | ")
}

// ColumnsOf reads the spec columns of an mltop CSV's header: every name
// that is not a fixed column, as a knob, flag or dim by what the registered
// families call it (a name no family knows is read as a dim).
func ColumnsOf(header []string) Columns {
	var known Columns
	for _, f := range profiler.Families(true) {
		known.addSchema(f.Schema())
	}
	fixed := FixedColumns()
	var c Columns
	for _, h := range header {
		switch {
		case slices.Contains(fixed, h):
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

// Decoder reads the rows of an mltop CSV back into Results through the
// column table.
type Decoder struct {
	file string
	r    *csv.Reader
	head []string
	cols []Column // by header position
	line int
	Spec Columns // the spec columns the header holds
}

// NewDecoder reads the header from r and checks that it is an mltop CSV:
// every fixed column must be there (in any order), or the error says
// "not an mltop CSV" and names the missing columns. cols gives the spec
// columns' kinds; nil reads them from the header (see ColumnsOf). file names
// the input in errors.
func NewDecoder(r io.Reader, file string, cols *Columns) (*Decoder, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := readHeader(cr, file)
	if err == io.EOF {
		return nil, &profiler.InputError{File: file, Msg: "the file is empty: it is not an mltop CSV (run a sweep with --csv first)"}
	}
	if err != nil {
		return nil, err
	}
	return newDecoder(cr, head, file, cols)
}

// readHeader reads the first record; io.EOF means an empty file.
func readHeader(cr *csv.Reader, file string) ([]string, error) {
	head, err := cr.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, &profiler.InputError{File: file, Line: 1, Msg: fmt.Sprintf("not a CSV file: %v", unwrapParse(err))}
	}
	head = slices.Clone(head)
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	return head, nil
}

// missingFixed lists the fixed columns that every mltop CSV has and head
// lacks: none for a file mltop wrote, however old.
func missingFixed(head []string) []string {
	var missing []string
	for _, name := range FixedColumns() {
		if !slices.Contains(head, name) && !slices.Contains(optionalColumns, name) {
			missing = append(missing, name)
		}
	}
	return missing
}

func newDecoder(cr *csv.Reader, head []string, file string, cols *Columns) (*Decoder, error) {
	missing := missingFixed(head)
	if len(missing) > 0 {
		return nil, &profiler.InputError{File: file, Line: 1, Msg: fmt.Sprintf("not an mltop CSV: the header lacks the columns %s (mltop --config … --csv FILE writes them)", strings.Join(missing, ", "))}
	}
	d := &Decoder{file: file, r: cr, head: head, line: 1}
	if cols != nil {
		d.Spec = *cols
	} else {
		d.Spec = ColumnsOf(head)
	}
	byName := map[string]Column{}
	for _, c := range d.Spec.Table() {
		byName[c.Name] = c
	}
	d.cols = make([]Column, len(head))
	for i, h := range head {
		c, ok := byName[h]
		if !ok {
			return nil, &profiler.InputError{File: file, Line: 1, Col: i + 1, Msg: fmt.Sprintf("column %q is not one of this sweep's", h)}
		}
		if slices.Contains(head[:i], h) {
			return nil, &profiler.InputError{File: file, Line: 1, Col: i + 1, Msg: fmt.Sprintf("column %q appears twice", h)}
		}
		d.cols[i] = c
	}
	return d, nil
}

// Header is the file's header.
func (d *Decoder) Header() []string { return d.head }

// Line is the line number of the row Next returned last (the header is 1;
// a quoted cell may span lines, so this is the record's number plus one).
func (d *Decoder) Line() int { return d.line }

// Next decodes the next row. It returns io.EOF after the last; a row with
// another number of fields than the header, or a cell its column cannot
// read, is an *profiler.InputError naming the line and the column.
func (d *Decoder) Next() (profiler.Result, error) {
	rec, err := d.r.Read()
	d.line++
	if err == io.EOF {
		return profiler.Result{}, io.EOF
	}
	if err != nil {
		return profiler.Result{}, &profiler.InputError{File: d.file, Line: d.line, Msg: fmt.Sprintf("not valid CSV: %v", unwrapParse(err))}
	}
	if len(rec) != len(d.head) {
		return profiler.Result{}, &profiler.InputError{File: d.file, Line: d.line, Msg: fmt.Sprintf("the row has %d fields, the header %d (a row cut short?)", len(rec), len(d.head))}
	}
	res := profiler.Result{Spec: profiler.Spec{Knobs: map[string]int{}, Dims: map[string]int{}, Flags: map[string]bool{}}}
	for i, cell := range rec {
		if err := d.cols[i].Decode(&res, cell); err != nil {
			return profiler.Result{}, &profiler.InputError{File: d.file, Line: d.line, Col: i + 1, Field: "column " + d.head[i], Msg: err.Error()}
		}
	}
	return res, nil
}

func unwrapParse(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadCSV reads every row of the mltop CSV at path (a report's input). Any
// row that cannot be read is an error naming its line and column.
func ReadCSV(path string) ([]profiler.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the CSV: %v", errors.Unwrap(err))}
	}
	defer f.Close()
	d, err := NewDecoder(f, path, nil)
	if err != nil {
		return nil, err
	}
	var out []profiler.Result
	for {
		r, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
}

// CSV writes one row per Result and flushes after each, so a killed
// sweep loses at most the running spec.
type CSV struct {
	f    *os.File
	w    *csv.Writer
	cols Columns
}

// OpenCSV creates path (or appends to it when appending, after the header
// has been checked by ReadDone) and writes the header to a new file. Its
// errors name --csv; OpenCSVVia names another way the path was given.
func OpenCSV(path string, cols Columns, appending bool) (*CSV, error) {
	return OpenCSVVia(path, cols, appending, "--csv")
}

// OpenCSVVia is OpenCSV for a path given by via: "--csv", "-o" (merge) or
// "" (the session's export prompt), which its errors name.
func OpenCSVVia(path string, cols Columns, appending bool, via string) (*CSV, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appending {
		flags = os.O_CREATE | os.O_RDWR | os.O_APPEND // RDWR: endLastLine reads the end
	}
	if err := checkCSVPath(path, appending, via); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the CSV file: %v: choose a writable path%s", errors.Unwrap(err), viaSuffix(via))}
	}
	s := &CSV{f: f, w: csv.NewWriter(f), cols: cols}
	st, _ := f.Stat()
	if appending && st.Size() > 0 {
		if err := endLastLine(f, path, st.Size(), len(cols.Header())); err != nil {
			f.Close()
			return nil, err
		}
	}
	if !appending || st.Size() == 0 {
		if err := s.w.Write(cols.Header()); err != nil {
			return nil, err
		}
		s.w.Flush()
	}
	return s, s.w.Error()
}

// endLastLine makes a file that is appended to end with a newline, so the
// next row starts a line of its own. A sweep killed mid-write leaves a
// last line without one: a whole row (only the newline missing; --resume
// counted it as done) gets its newline, a row cut short (--resume runs its
// spec again) is cut off, or the new row would be glued to it and the
// file could no longer be read.
func endLastLine(f *os.File, path string, size int64, fields int) error {
	const maxTail = 1 << 20
	n := min(size, maxTail)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the end of the CSV file: %v", err)}
	}
	if tail[n-1] == '\n' {
		return nil
	}
	nl := bytes.LastIndexByte(tail, '\n')
	if nl < 0 {
		return &profiler.InputError{File: path, Msg: "the CSV file's last line is longer than 1 MiB and not finished: not a CSV mltop wrote; give a new path to --csv"}
	}
	cr := csv.NewReader(bytes.NewReader(tail[nl+1:]))
	cr.FieldsPerRecord = -1
	if rec, err := cr.Read(); err == nil && len(rec) == fields {
		_, err := f.Write([]byte("\n"))
		return err
	}
	if err := f.Truncate(size - n + int64(nl) + 1); err != nil {
		return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot cut the unfinished last row of the CSV file: %v", err)}
	}
	return nil
}

// viaSuffix is " for --csv" (or -o), "" for a path typed at a prompt.
func viaSuffix(via string) string {
	if via == "" {
		return ""
	}
	return " for " + via
}

// CheckCSVPath refuses what OpenCSV would refuse before creating anything:
// a directory, a folder that does not exist, or (unless appending) a file
// that already holds rows.
func CheckCSVPath(path string, appending bool) error {
	return checkCSVPath(path, appending, "--csv")
}

func checkCSVPath(path string, appending bool, via string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return &profiler.InputError{File: path, Msg: "is a directory: give a file path" + viaSuffix(via) + ", e.g. " + strings.TrimRight(path, "/") + "/out.csv"}
	} else if err == nil && st.Size() > 0 && !appending {
		// Never replace measurements silently, and never suggest resuming a
		// file that is not an mltop CSV.
		if !isMltopCSV(path) {
			return &profiler.InputError{File: path, Msg: "the file exists and is not empty, and it is not an mltop CSV: choose a new path" + viaSuffix(via)}
		}
		if via != "--csv" {
			return &profiler.InputError{File: path, Msg: "the CSV file exists and is not empty: choose a new path" + viaSuffix(via) + " (mltop never replaces measurements)"}
		}
		return &profiler.InputError{File: path, Msg: "the CSV file exists and is not empty: add to it with --resume " + path + ", or choose a new path"}
	} else if err != nil {
		// The file is created later, after the sweep is announced: a
		// folder that is not there must fail now, before anything runs.
		dir := filepath.Dir(path)
		switch st, derr := os.Stat(dir); {
		case errors.Is(derr, fs.ErrNotExist):
			return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the CSV file: the folder %s does not exist: create it, or choose a writable path%s", dir, viaSuffix(via))}
		case derr == nil && !st.IsDir():
			return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the CSV file: %s is not a folder: choose a writable path%s", dir, viaSuffix(via))}
		}
	}
	return nil
}

func isMltopCSV(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = NewDecoder(f, path, nil)
	return err == nil
}

// Write appends a row and flushes it to the file.
func (s *CSV) Write(r profiler.Result) error {
	if err := s.w.Write(s.cols.Row(r)); err != nil {
		return err
	}
	s.w.Flush()
	return s.w.Error()
}

// Close closes the file.
func (s *CSV) Close() error { return s.f.Close() }

// WriteCSVFile writes results to path in one go (the TUI's export).
func WriteCSVFile(path string, results []profiler.Result) error {
	specs := make([]profiler.Spec, len(results))
	for i, r := range results {
		specs[i] = r.Spec
	}
	s, err := OpenCSVVia(path, ColumnsFor(specs), false, "")
	if err != nil {
		return err
	}
	for _, r := range results {
		if err := s.Write(r); err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}

// ReadDone reads an existing CSV for --resume: it checks that its header is
// exactly the one this sweep writes and returns the keys of specs already
// in it. A missing or empty file is fine (nothing done yet). The last row
// may be cut short by a kill: it is ignored and its spec runs again; a bad
// row before it is an error naming its line and column.
func ReadDone(path string, cols Columns) (map[string]bool, error) {
	rows, err := ReadDoneRows(path, cols)
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(rows))
	for k := range rows {
		done[k] = true
	}
	return done, nil
}

// DoneRow is how a done spec was measured: the settings --resume must
// keep, so as not to add rows of other settings to a file whose rows it
// skips. Cache is "" for a row that was not measured (invalid, crashed).
type DoneRow struct {
	Cache  profiler.CacheMode
	Settle float64
}

// ReadDoneRows is ReadDone with how each done spec was measured (the
// row's cache and settle_s columns).
func ReadDoneRows(path string, cols Columns) (map[string]DoneRow, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]DoneRow{}, nil
	}
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the --resume file: %v", err)}
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	head, err := readHeader(cr, path)
	if err == io.EOF {
		return map[string]DoneRow{}, nil
	}
	if err != nil {
		return nil, err
	}
	want := cols.Header()
	if missing := missingFixed(head); len(missing) > 0 {
		// Not one of mltop's: a column diff against the sweep would only
		// list every column.
		return nil, &profiler.InputError{File: path, Line: 1, Msg: fmt.Sprintf("not an mltop CSV (the header lacks %s): --resume adds to the CSV a sweep wrote with --csv; give that file, or a new path to --csv without --resume", strings.Join(missing, ", "))}
	}
	if !slices.Equal(head, want) {
		return nil, headerMismatch(path, head, want)
	}
	d, err := newDecoder(cr, head, path, &cols)
	if err != nil {
		return nil, err
	}
	done := map[string]DoneRow{}
	var pending error
	for {
		r, err := d.Next()
		if err == io.EOF {
			break
		}
		if pending != nil {
			return nil, pending // a bad row that was not the last
		}
		if err != nil {
			pending = err
			continue
		}
		if r.Status == profiler.StatusCancelled {
			continue // stopped by the user before it was measured: run it again
		}
		done[r.Spec.Key()] = DoneRow{Cache: r.Cache, Settle: r.Settle}
	}
	return done, nil
}

func headerMismatch(path string, head, want []string) error {
	return &profiler.InputError{File: path, Field: "header", Msg: fmt.Sprintf("its columns differ from this sweep's (%s)\n  file:  %s\n  sweep: %s\nuse the CSV this sweep wrote, or a new --csv path without --resume", diffCols(head, want), strings.Join(head, ","), strings.Join(want, ","))}
}

func diffCols(have, want []string) string {
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			missing = append(missing, w)
		}
	}
	for _, h := range have {
		if !slices.Contains(want, h) {
			extra = append(extra, h)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ","))
	}
	if len(extra) > 0 {
		parts = append(parts, "extra "+strings.Join(extra, ","))
	}
	if len(parts) == 0 {
		return "same names in another order"
	}
	return strings.Join(parts, "; ")
}
