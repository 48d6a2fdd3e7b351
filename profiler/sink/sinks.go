package sink

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Columns are the spec-dependent CSV columns: the union of knob, dim and
// flag names over a sweep, in schema order.
type Columns struct {
	Knobs, Dims, Flags []string
}

// ColumnsFor builds the union over specs.
func ColumnsFor(specs []profiler.Spec) Columns {
	var c Columns
	add := func(list *[]string, name string) {
		if !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for _, s := range specs {
		f, err := profiler.Lookup(s.Kernel)
		if err != nil {
			continue
		}
		sc := f.Schema()
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
	return c
}

var csvHead = []string{"time", "backend", "device", "timer", "kernel", "dtype"}
var csvTail = []string{"n", "min_us", "p10_us", "median_us", "p90_us", "cv", "tflops", "gbps", "pct_peak_flops", "pct_peak_bw", "pct_measured_flops", "pct_measured_bw",
	"tgm_bytes", "tgm_limit", "compiler_tgm", "occupancy", "occupancy_limiter", "memory_bytes",
	"max_abs_err", "max_rel_err", "rms_err", "tol", "rows_checked", "status", "error"}

// Header is the CSV header for these columns.
func (c Columns) Header() []string {
	h := slices.Clone(csvHead)
	h = append(h, c.Knobs...)
	h = append(h, c.Dims...)
	h = append(h, c.Flags...)
	return append(h, csvTail...)
}

// Row renders r under the header.
func (c Columns) Row(r profiler.Result) []string {
	row := []string{r.Time.UTC().Format("2006-01-02T15:04:05Z"), r.Backend, r.Device, r.Timer, r.Spec.Kernel, string(r.Spec.DType)}
	for _, k := range c.Knobs {
		row = append(row, optInt(r.Spec.Knobs, k))
	}
	for _, d := range c.Dims {
		row = append(row, optInt(r.Spec.Dims, d))
	}
	for _, f := range c.Flags {
		v, ok := r.Spec.Flags[f]
		switch {
		case !ok:
			row = append(row, "")
		case v:
			row = append(row, "1")
		default:
			row = append(row, "0")
		}
	}
	us := func(ns float64) string { return fnum(ns/1e3, 4) }
	st := r.Stats
	tgm, lim := r.MaxTGM()
	compilerTGM := 0
	for _, b := range r.Budget {
		compilerTGM = max(compilerTGM, b.CompilerTGM)
	}
	occ, occLim := "n/a", ""
	if o, ok := r.MinOccupancy(); ok {
		occ, occLim = strconv.Itoa(o.GroupsPerUnit), o.Limiter
	}
	row = append(row, strconv.Itoa(st.N), us(st.Min), us(st.P10), us(st.Median), us(st.P90), fnum(st.CV, 4),
		fnum(r.TFLOPS, 4), fnum(r.GBps, 4), fnum(r.PctPeakFLOP, 3), fnum(r.PctPeakBW, 3), fnum(r.PctMeasFLOP, 3), fnum(r.PctMeasBW, 3),
		strconv.Itoa(tgm), strconv.Itoa(lim), strconv.Itoa(compilerTGM), occ, occLim, strconv.FormatInt(r.MemoryBytes, 10))
	if v := r.Verdict; v != nil {
		row = append(row, fnum(v.MaxAbsErr, 4), fnum(v.MaxRelErr, 4), fnum(v.RMSErr, 4),
			fmt.Sprintf("atol=%g rtol=%g", v.ATol, v.RTol), strconv.Itoa(v.RowsChecked))
	} else {
		row = append(row, "", "", "", "", "")
	}
	return append(row, string(r.Status), oneLine(r.Error))
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

// CSV writes one row per Result and flushes after each, so a killed
// sweep loses at most the running spec.
type CSV struct {
	f    *os.File
	w    *csv.Writer
	cols Columns
}

// OpenCSV creates path (or appends to it when appending, after the header
// has been checked by ReadDone) and writes the header to a new file.
func OpenCSV(path string, cols Columns, appending bool) (*CSV, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appending {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	} else if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		// Never replace measurements silently.
		return nil, &profiler.InputError{File: path, Msg: "the CSV file exists and is not empty: add to it with --resume " + path + ", or choose a new path"}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the CSV file: %v: choose a writable path with --csv", errors.Unwrap(err))}
	}
	s := &CSV{f: f, w: csv.NewWriter(f), cols: cols}
	st, _ := f.Stat()
	if !appending || st.Size() == 0 {
		if err := s.w.Write(cols.Header()); err != nil {
			return nil, err
		}
		s.w.Flush()
	}
	return s, s.w.Error()
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
	s, err := OpenCSV(path, ColumnsFor(specs), false)
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
// in it. A missing file is fine (nothing done yet).
func ReadDone(path string, cols Columns) (map[string]bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the --resume file: %v", err)}
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("not a CSV file: %v", err)}
	}
	want := cols.Header()
	if !slices.Equal(head, want) {
		return nil, &profiler.InputError{File: path, Field: "header", Msg: fmt.Sprintf("its columns differ from this sweep's (%s)\n  file:  %s\n  sweep: %s\nuse the CSV this sweep wrote, or a new --csv path without --resume", diffCols(head, want), strings.Join(head, ","), strings.Join(want, ","))}
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[h] = i
	}
	done := map[string]bool{}
	line := 1
	for {
		rec, err := r.Read()
		line++
		if err == io.EOF {
			break
		}
		if err != nil || len(rec) != len(head) {
			// A row cut short by a kill: ignore it, the spec runs again.
			continue
		}
		if rec[idx["status"]] == string(profiler.StatusCancelled) {
			continue // stopped by the user before it was measured: run it again
		}
		s := profiler.Spec{Kernel: rec[idx["kernel"]], DType: profiler.DType(rec[idx["dtype"]]), Knobs: map[string]int{}, Dims: map[string]int{}, Flags: map[string]bool{}}
		for _, k := range cols.Knobs {
			if v, err := strconv.Atoi(rec[idx[k]]); err == nil {
				s.Knobs[k] = v
			}
		}
		for _, k := range cols.Dims {
			if v, err := strconv.Atoi(rec[idx[k]]); err == nil {
				s.Dims[k] = v
			}
		}
		for _, k := range cols.Flags {
			switch rec[idx[k]] {
			case "1":
				s.Flags[k] = true
			case "0":
				s.Flags[k] = false
			}
		}
		done[s.Key()] = true
	}
	return done, nil
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

// JSON writes one Result per line.
type JSON struct {
	enc *json.Encoder
	c   io.Closer
}

// NewJSON writes JSON lines to w.
func NewJSON(w io.Writer) *JSON {
	s := &JSON{enc: json.NewEncoder(w)}
	if c, ok := w.(io.Closer); ok && w != os.Stdout {
		s.c = c
	}
	return s
}

// Write encodes one line.
func (s *JSON) Write(r profiler.Result) error { return s.enc.Encode(r) }

// Close closes the writer when it owns it.
func (s *JSON) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

// Bench prints Go benchmark lines that benchstat reads: one line per
// chunk of samples (up to 10 chunks, like -count=10), with ns/op, TFLOP/s
// and GB/s.
type Bench struct {
	w      io.Writer
	header bool
}

// NewBench writes to w.
func NewBench(w io.Writer) *Bench { return &Bench{w: w} }

// BenchName is the benchmark name of a spec: Benchmark<Kernel>/dtype=…/K=V….
func BenchName(s profiler.Spec) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	b.WriteString(strings.ToUpper(s.Kernel[:1]) + s.Kernel[1:])
	b.WriteString("/dtype=" + string(s.DType))
	for _, m := range []map[string]int{s.Knobs, s.Dims} {
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(&b, "/%s=%d", k, m[k])
		}
	}
	for _, k := range sortedKeys(s.Flags) {
		if s.Flags[k] {
			b.WriteString("/" + k)
		}
	}
	return b.String()
}

// Write prints the lines of one result; failed specs print nothing (benchstat
// has no way to say "failed") but a comment line.
func (s *Bench) Write(r profiler.Result) error {
	if !s.header {
		fmt.Fprintf(s.w, "goos: %s\ngoarch: %s\npkg: mltop/%s\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, r.Backend, r.Device)
		s.header = true
	}
	if r.Status != profiler.StatusOK || len(r.Samples) == 0 {
		_, err := fmt.Fprintf(s.w, "# %s: %s %s\n", BenchName(r.Spec), r.Status, oneLine(r.Error))
		return err
	}
	chunks := min(10, len(r.Samples))
	per := len(r.Samples) / chunks
	for c := 0; c < chunks; c++ {
		part := r.Samples[c*per : (c+1)*per]
		var sum float64
		for _, v := range part {
			sum += v
		}
		mean := sum / float64(len(part))
		line := fmt.Sprintf("%s\t%d\t%.1f ns/op", BenchName(r.Spec), len(part), mean)
		if r.FLOPs > 0 {
			line += fmt.Sprintf("\t%.4g TFLOP/s", r.FLOPs/mean/1e3)
		}
		if r.Bytes > 0 {
			line += fmt.Sprintf("\t%.4g GB/s", r.Bytes/mean)
		}
		if _, err := fmt.Fprintln(s.w, line); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing.
func (s *Bench) Close() error { return nil }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
