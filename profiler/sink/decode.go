package sink

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

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
		ns, err := parseMicros(val)
		if !ok || name == "" || err != nil || ns < 0 || math.IsNaN(ns) || math.IsInf(ns, 0) {
			return nil, fmt.Errorf("%q is not a list of dispatch medians like \"zero_dW*=3.1;rmsnorm_bwd=50.2\" (name, * for a setup step, = median in µs; ; between dispatches)", part)
		}
		out = append(out, profiler.DispatchStats{Name: name, MedianNS: ns, Setup: setup, Stats: profiler.Stats{Median: ns}})
	}
	return out, nil
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

// parseOptInt and parseOptFloat read an empty cell as "not measured":
// nothing is set.
func parseOptInt(cell string, dst *int) error {
	if cell == "" {
		return nil
	}
	return parseInt(cell, dst)
}

func parseOptFloat(cell string, dst *float64) error {
	if cell == "" {
		return nil
	}
	return parseFloat(cell, dst)
}

// parseBudgetInt sets one field of the row's one BudgetReport; an empty
// cell sets nothing (and makes no report).
func parseBudgetInt(r *profiler.Result, cell string, field func(b *profiler.BudgetReport) *int) error {
	if cell == "" {
		return nil
	}
	var v int
	if err := parseInt(cell, &v); err != nil {
		return err
	}
	*field(budget(r)) = v
	return nil
}

// parseMicros reads a µs cell as ns. A decimal is read with its exponent
// raised by 3, so that what fmicros wrote comes back as the very float64
// (and a 4-digit cell of an older mltop as the nearest one to its value).
func parseMicros(cell string) (float64, error) {
	us, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of µs", cell)
	}
	if strings.Trim(cell, "0123456789.+-eE") != "" || math.IsInf(us, 0) || math.IsNaN(us) {
		return us * 1e3, nil // "inf", "nan", a hex float
	}
	mant, exp := cell, 0
	if i := strings.IndexAny(cell, "eE"); i >= 0 {
		mant = cell[:i]
		if exp, err = strconv.Atoi(cell[i+1:]); err != nil {
			return us * 1e3, nil
		}
	}
	ns, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(exp+3), 64)
	if err != nil {
		return us * 1e3, nil
	}
	return ns, nil
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
	// record is the row Next read last, as its cells.
	record []string
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
	d.record = rec
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
