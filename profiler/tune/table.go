package tune

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Entry is the best configuration found for one shape and dtype.
type Entry struct {
	DType profiler.DType `json:"dtype"`
	Dims  map[string]int `json:"dims"`
	Knobs map[string]int `json:"knobs"`
	// Value is the objective's figure of the winner's re-measurement.
	Value    float64 `json:"value"`
	MedianUS float64 `json:"median_us"`
	CILoUS   float64 `json:"ci_lo_us,omitempty"`
	CIHiUS   float64 `json:"ci_hi_us,omitempty"`
	// Tied: the runner-up's interval overlaps the winner's.
	Tied    bool   `json:"tied"`
	Verdict string `json:"verdict"`
}

// Standing says how the winner stands against the runner-up: "ahead"
// only when the 95% intervals of their medians are apart, "tied within
// noise" when they overlap, "unproven" when there were no intervals to
// compare (fewer than 6 samples, or no runner-up measured). It reads the
// verdict Compare wrote, so a table read back from a file says the same.
func (e Entry) Standing() string {
	switch {
	case e.Tied:
		return "tied within noise"
	case strings.Contains(e.Verdict, apartText):
		return "ahead"
	}
	return "unproven"
}

// Table is a tuning table: the winners of one kernel over shapes and
// dtypes, with where they were measured.
type Table struct {
	Kernel    string    `json:"kernel"`
	Objective Objective `json:"objective"`
	DimNames  []string  `json:"dim_names"`
	KnobNames []string  `json:"knob_names"`
	Device    string    `json:"device"`
	Backend   string    `json:"backend"`
	Version   string    `json:"mltop_version"`
	Date      time.Time `json:"date"`
	Entries   []Entry   `json:"entries"`
}

// NewTable starts a table for kernel's schema.
func NewTable(kernel string, obj Objective, dev profiler.DeviceInfo, version string, date time.Time) (*Table, error) {
	f, err := profiler.Lookup(kernel)
	if err != nil {
		return nil, err
	}
	t := &Table{Kernel: kernel, Objective: obj, Device: dev.Name, Backend: dev.Backend, Version: version, Date: date.UTC()}
	sc := f.Schema()
	for _, p := range sc.Dims {
		t.DimNames = append(t.DimNames, p.Name)
	}
	for _, p := range sc.Knobs {
		t.KnobNames = append(t.KnobNames, p.Name)
	}
	return t, nil
}

// Add records the outcome of the search of one shape.
func (t *Table) Add(out *Outcome) {
	w := out.Winner()
	v, _ := t.Objective.Value(w)
	e := Entry{DType: w.Spec.DType, Dims: w.Spec.Dims, Knobs: w.Spec.Knobs, Value: v, MedianUS: w.Stats.Median / 1e3,
		CILoUS: w.Stats.CILo / 1e3, CIHiUS: w.Stats.CIHi / 1e3, Tied: out.Compare.Tied, Verdict: out.Compare.Text}
	t.Entries = append(t.Entries, e)
}

// Select is the entry for dtype and dims by the rule the headers follow:
// among the entries of that dtype (of any dtype when it has none), the one
// whose dims are nearest in log-space — the smallest Σ ln²(want/have) over
// the dims, so an exact shape (distance 0) always wins and a shape twice
// as large in one dim is as far as one half as large; the first in table
// order on a tie. Dims below 1 count as 1. ok is false for an empty table.
func (t *Table) Select(dt profiler.DType, dims map[string]int) (Entry, bool) {
	best, bestD := -1, 0.0
	for pass := 0; pass < 2 && best < 0; pass++ {
		for i, e := range t.Entries {
			if pass == 0 && e.DType != dt {
				continue
			}
			var d float64
			for _, n := range t.DimNames {
				r := math.Log(float64(max(dims[n], 1)) / float64(max(e.Dims[n], 1)))
				d += r * r
			}
			if best < 0 || d < bestD {
				best, bestD = i, d
			}
		}
	}
	if best < 0 {
		return Entry{}, false
	}
	return t.Entries[best], true
}

// WriteJSON writes the table as one JSON object.
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// CSVHeader is the table's CSV header: dtype, the dims, the knobs, then
// the figures.
func (t *Table) CSVHeader() []string {
	h := []string{"kernel", "dtype"}
	for _, n := range t.DimNames {
		h = append(h, tableHead("dim.", n))
	}
	for _, n := range t.KnobNames {
		h = append(h, tableHead("knob.", n))
	}
	return append(h, tableFixed[2:]...)
}

// tableFixed are a tuning table's own columns, kernel and dtype first.
var tableFixed = []string{"kernel", "dtype", "objective", "value", "median_us", "ci_lo_us", "ci_hi_us", "tied", "device", "verdict"}

// tableHead is the column of a dim (prefix "dim.") or knob ("knob.")
// named name: its name, or prefix+name where that is one of the table's
// own columns (a user kernel's dim named device or value), as the sweep
// CSV writes a dim n beside its sample count n.
func tableHead(prefix, name string) string {
	if slices.Contains(tableFixed, name) {
		return prefix + name
	}
	return name
}

// WriteCSV writes one row per entry.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.CSVHeader()); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, e := range t.Entries {
		row := []string{t.Kernel, string(e.DType)}
		for _, n := range t.DimNames {
			row = append(row, strconv.Itoa(e.Dims[n]))
		}
		for _, n := range t.KnobNames {
			row = append(row, strconv.Itoa(e.Knobs[n]))
		}
		ci := func(v float64) string {
			if v == 0 {
				return ""
			}
			return num(v)
		}
		row = append(row, string(t.Objective), num(e.Value), num(e.MedianUS), ci(e.CILoUS), ci(e.CIHiUS), strconv.FormatBool(e.Tied), t.Device, e.Verdict)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ParseShapes reads "rows=1024,cols=4096;rows=8192,cols=8192": shapes
// separated by ';', each a comma-separated list of dim=value.
func ParseShapes(s string) ([]map[string]int, error) {
	var out []map[string]int
	for _, part := range strings.Split(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		m, err := ParseDims(part)
		if err != nil {
			return nil, fmt.Errorf("shape %q: %w", strings.TrimSpace(part), err)
		}
		if slices.ContainsFunc(out, func(o map[string]int) bool { return fmt.Sprint(o) == fmt.Sprint(m) }) {
			return nil, fmt.Errorf("shape %q is listed twice: list each shape once", strings.TrimSpace(part))
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no shapes in %q: write them as rows=1024,cols=4096;rows=8192,cols=8192", s)
	}
	return out, nil
}

// ParseDims reads "rows=1024,cols=4096".
func ParseDims(s string) (map[string]int, error) {
	m := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		n, err := strconv.Atoi(v)
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("%q: write NAME=INTEGER, e.g. rows=4096", kv)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s is given twice", k)
		}
		m[k] = n
	}
	return m, nil
}
