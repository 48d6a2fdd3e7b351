package sink

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

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
