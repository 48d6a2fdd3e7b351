package sink

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// ResumeOn is where a --resume runs: its backend and, when one device
// runs the sweep, that device's name. The zero ResumeOn runs again only
// cancelled rows.
type ResumeOn struct{ Backend, Device string }

// RunsAgain says whether --resume on on runs the spec of row d again: a
// cancelled row (stopped by the user before it was measured), and a row
// that another backend or device could not run (invalid, error,
// compile_error: this one may), where the file names them and on is
// known. Every other row is an outcome of the spec (a crash or a timeout
// would happen again) and is kept.
func (on ResumeOn) RunsAgain(d DoneRow) bool {
	if d.Status == profiler.StatusCancelled {
		return true
	}
	if !RanElsewhere(d.Status) || d.Backend == "" || on.Backend == "" {
		return false
	}
	return d.Backend != on.Backend || (on.Device != "" && d.Device != "" && d.Device != on.Device)
}

// RanElsewhere says whether a row of status st says only that the
// backend or device that wrote it could not run the spec: another may.
func RanElsewhere(st profiler.Status) bool {
	return st == profiler.StatusInvalid || st == profiler.StatusError || st == profiler.StatusCompileError
}

// ReadDone reads an existing CSV for --resume: it checks that its header is
// the one this sweep writes (or that of an older mltop, which lacks some
// of its columns) and returns the keys of specs already in it. A missing
// or empty file is fine (nothing done yet). The last row may be cut short
// by a kill: it is ignored and its spec runs again; a bad row before it is
// an error naming its line and column. Cancelled rows are not done.
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
// Status, StopReason and Median (ns) are its outcome, which seeds the
// best of its shape for --race; Backend and Device say where it was
// recorded ("" in a file without those columns).
type DoneRow struct {
	Backend    string
	Device     string
	Cache      profiler.CacheMode
	Settle     float64
	Status     profiler.Status
	StopReason string
	Median     float64
}

// DoneRowOf is how and where the row r (read back from a CSV) was
// measured.
func DoneRowOf(r profiler.Result) DoneRow {
	return DoneRow{Backend: r.Backend, Device: r.Device, Cache: r.Cache, Settle: r.Settle, Status: r.Status, StopReason: r.StopReason, Median: r.Stats.Median}
}

// Result is the row's outcome as a Result: its status, stop reason and
// median, the rest empty.
func (d DoneRow) Result() profiler.Result {
	return profiler.Result{Status: d.Status, StopReason: d.StopReason, Cache: d.Cache, Settle: d.Settle, Stats: profiler.Stats{Median: d.Median}}
}

// ReadDoneRows is ReadDone with how and where each done spec was
// measured (the row's cache, settle_s, backend and device columns): a
// caller resuming on a ResumeOn skips the rows it does not RunsAgain. It
// only reads: OpenCSV (OpenCSVResuming), appending, drops the rows of
// specs that run again.
func ReadDoneRows(path string, cols Columns) (map[string]DoneRow, error) {
	rf, err := readResumeFile(path, cols, ResumeOn{})
	if err != nil {
		return nil, err
	}
	return rf.done, nil
}

// resumeFile is what --resume finds in its file.
type resumeFile struct {
	raw  []byte     // the file as it is
	head []string   // its header (nil for a missing or empty file)
	kept [][]string // the records of done specs, under head
	done map[string]DoneRow
}

// readResumeFile reads path, keeping the rows that a resume on on does
// not run again.
func readResumeFile(path string, cols Columns, on ResumeOn) (*resumeFile, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &resumeFile{done: map[string]DoneRow{}}, nil
	}
	if err != nil {
		return nil, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the --resume file: %v", err)}
	}
	rf := &resumeFile{raw: raw, done: map[string]DoneRow{}}
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.FieldsPerRecord = -1
	head, err := readHeader(cr, path)
	if err == io.EOF {
		return rf, nil
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
	if !sameOrOlderHeader(head, want) {
		return nil, headerMismatch(path, head, want)
	}
	d, err := newDecoder(cr, head, path, &cols)
	if err != nil {
		return nil, err
	}
	rf.head = head
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
			pending = err // the last row, cut short by a kill: its spec runs again
			continue
		}
		row := DoneRowOf(r)
		if on.RunsAgain(row) {
			continue
		}
		rf.done[r.Spec.Key()] = row
		rf.kept = append(rf.kept, d.record)
	}
	return rf, nil
}

// sameOrOlderHeader says whether head is want, or want without some
// optional columns (a file an older mltop wrote for the same sweep).
func sameOrOlderHeader(head, want []string) bool {
	var w []string
	for _, c := range want {
		if slices.Contains(head, c) || !slices.Contains(optionalColumns, c) {
			w = append(w, c)
		}
	}
	return slices.Equal(head, w)
}

// content is the file --resume leaves before appending: this sweep's
// header, then the kept rows, each cell under its column (empty in a
// column an older header lacks).
func (rf *resumeFile) content(want []string) []byte {
	from := make([]int, len(want)) // want's column → the file's, or -1
	for i, c := range want {
		from[i] = slices.Index(rf.head, c)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(want)
	row := make([]string, len(want))
	for _, rec := range rf.kept {
		for i, j := range from {
			row[i] = ""
			if j >= 0 {
				row[i] = rec[j]
			}
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// The steps of the atomic rewrite, for tests that simulate a kill
// between them.
const (
	stepTempWritten = "temp written"
	stepTempSynced  = "temp synced"
	stepRenamed     = "renamed"
)

// crashAt is called after each step of rewriteForResume; an error stops
// the rewrite right there, leaving everything as a kill would. Only tests
// set it.
var crashAt = func(step string) error { return nil }

// rewriteForResume leaves the --resume file at path holding exactly the
// rows a resume on on does not run again, under this sweep's header: the
// rows of specs that run again (on.RunsAgain; a last row cut short by a
// kill) go,
// so the rerun's row is the spec's only one. Where that changes the file,
// the new content is written to a temporary file in the same folder,
// synced, and renamed over path, so a kill at any instant leaves either
// the old file or the new one whole. A missing or empty file is left
// alone.
func rewriteForResume(path string, cols Columns, on ResumeOn) error {
	rf, err := readResumeFile(path, cols, on)
	if err != nil || rf.head == nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // rename over the file, not over a link to it
	}
	removeStaleTemps(path)
	want := rf.content(cols.Header())
	if bytes.Equal(want, rf.raw) {
		return nil
	}
	return replaceFile(path, want)
}

// tempPattern names the temporary files of the rewrite of path: hidden,
// next to it.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".resume-*" }

// removeStaleTemps removes what a rewrite killed before its rename left.
func removeStaleTemps(path string) {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, f := range stale {
		os.Remove(f)
	}
}

// replaceFile replaces path's content with data atomically: temp file in
// the same folder, fsync, rename, fsync of the folder.
func replaceFile(path string, data []byte) error {
	fail := func(err error) error {
		return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot rewrite the --resume file without its unfinished rows: %v: free space in its folder or make it writable (the file is unchanged)", err)}
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fail(err)
	}
	if err := crashAt(stepTempWritten); err != nil {
		return err
	}
	err = tmp.Chmod(mode)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fail(err)
	}
	if err := crashAt(stepTempSynced); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fail(err)
	}
	if err := crashAt(stepRenamed); err != nil {
		return err
	}
	// The rename is durable once the folder is synced; where a folder
	// cannot be synced (some systems), the rename still happened.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
