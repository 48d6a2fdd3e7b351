package sink

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// OpenCSV creates path and writes the header, or, when appending (--resume,
// after ReadDoneRows checked the file), first rewrites the file without the
// rows whose specs the sweep runs again (see rewriteForResume), then
// appends to it. Its
// errors name --csv; OpenCSVVia names another way the path was given.
func OpenCSV(path string, cols Columns, appending bool) (*CSV, error) {
	return OpenCSVVia(path, cols, appending, "--csv")
}

// OpenCSVVia is OpenCSV for a path given by via: "--csv", "-o" (merge) or
// "" (the session's export prompt), which its errors name.
func OpenCSVVia(path string, cols Columns, appending bool, via string) (*CSV, error) {
	return openCSV(path, cols, appending, via, ResumeOn{})
}

// OpenCSVResuming is OpenCSV appending for a --resume on on: the rows
// on.RunsAgain (cancelled ones, and those another backend or device
// could not run) are dropped before the sweep adds their specs' new rows.
func OpenCSVResuming(path string, cols Columns, on ResumeOn) (*CSV, error) {
	return openCSV(path, cols, true, "--csv", on)
}

func openCSV(path string, cols Columns, appending bool, via string, on ResumeOn) (*CSV, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appending {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	if err := checkCSVPath(path, appending, via); err != nil {
		return nil, err
	}
	if appending {
		// Leave one row per finished spec, and a file that ends with a
		// whole line under this sweep's header, before adding to it.
		if err := rewriteForResume(path, cols, on); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the CSV file: %v: choose a writable path%s", errors.Unwrap(err), viaSuffix(via))}
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
