package tune

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// IsTableHeader says whether a CSV header is a tuning table's (WriteCSV).
func IsTableHeader(head []string) bool {
	return len(head) > 2 && head[0] == "kernel" && head[1] == "dtype" && slices.Contains(head, "objective") && slices.Contains(head, "verdict")
}

// ReadTableCSV reads a tuning table WriteCSV wrote. The kernel must be
// registered: its schema says which columns are dims and which knobs.
func ReadTableCSV(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(recs) == 0 || !IsTableHeader(recs[0]) {
		return nil, fmt.Errorf("%s is not a tuning table (mltop tune --table FILE.csv writes one)", path)
	}
	head := recs[0]
	if len(recs) == 1 {
		return nil, fmt.Errorf("%s holds no entries", path)
	}
	fam, err := profiler.Lookup(recs[1][0])
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sc := fam.Schema()
	t := &Table{Kernel: fam.Name()}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
		dim, knob := h, h
		if n, ok := strings.CutPrefix(h, "dim."); ok {
			dim, knob = n, ""
		} else if n, ok := strings.CutPrefix(h, "knob."); ok {
			dim, knob = "", n
		} else if slices.Contains(tableFixed, h) {
			continue
		}
		if _, ok := sc.Dim(dim); ok {
			t.DimNames = append(t.DimNames, dim)
		} else if _, ok := sc.Knob(knob); ok {
			t.KnobNames = append(t.KnobNames, knob)
		}
	}
	for line, rec := range recs[1:] {
		if err := t.readEntry(rec, col); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line+2, err)
		}
	}
	return t, nil
}

func (t *Table) readEntry(rec []string, col map[string]int) error {
	if len(rec) != len(col) {
		return fmt.Errorf("%d fields, the header has %d", len(rec), len(col))
	}
	e := Entry{DType: profiler.DType(rec[col["dtype"]]), Dims: map[string]int{}, Knobs: map[string]int{}, Verdict: rec[col["verdict"]], Tied: rec[col["tied"]] == "true"}
	t.Objective, t.Device = Objective(rec[col["objective"]]), rec[col["device"]]
	for _, group := range []struct {
		names  []string
		m      map[string]int
		prefix string
	}{{t.DimNames, e.Dims, "dim."}, {t.KnobNames, e.Knobs, "knob."}} {
		for _, n := range group.names {
			h := tableHead(group.prefix, n)
			v, err := strconv.Atoi(rec[col[h]])
			if err != nil {
				return fmt.Errorf("column %s: %q is not an integer", h, rec[col[h]])
			}
			group.m[n] = v
		}
	}
	for _, f := range []struct {
		name string
		dst  *float64
	}{{"value", &e.Value}, {"median_us", &e.MedianUS}, {"ci_lo_us", &e.CILoUS}, {"ci_hi_us", &e.CIHiUS}} {
		if cell := rec[col[f.name]]; cell != "" {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return fmt.Errorf("column %s: %q is not a number", f.name, cell)
			}
			*f.dst = v
		}
	}
	t.Entries = append(t.Entries, e)
	return nil
}

// firstRecord reads a CSV's header.
func firstRecord(r io.Reader) ([]string, error) { return csv.NewReader(r).Read() }

// IsTableFile says whether the CSV at path is a tuning table.
func IsTableFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, err := firstRecord(f)
	return err == nil && IsTableHeader(head)
}
