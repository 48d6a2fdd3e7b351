package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Merged is the union of several mltop CSVs (the shards of one sweep).
type Merged struct {
	Header     []string          // the first file's header
	Cols       Columns           // its spec columns
	Results    []profiler.Result // one per spec, in order of first appearance
	Rows       int               // rows read in all
	Duplicates int               // rows dropped because their spec was already there
}

// MergeCSV reads the mltop CSVs at paths through the decoder. Every file
// must have the same columns as the first (in any order), or the error names
// the file and the columns that differ. Rows of one spec (Spec.Key) are kept
// once: the first row whose status is ok, else the first row — files are
// read in the order given, so list a rerun's file first to prefer it when
// neither is ok.
func MergeCSV(paths []string) (*Merged, error) {
	if len(paths) == 0 {
		return nil, &profiler.InputError{Msg: "no CSV files to merge: give the shards' CSVs, e.g. mltop merge shard-*.csv -o all.csv"}
	}
	m := &Merged{}
	at := map[string]int{} // key → index in m.Results
	for _, path := range paths {
		rows, head, cols, err := readAll(path)
		if err != nil {
			return nil, err
		}
		if m.Header == nil {
			m.Header, m.Cols = head, cols
		} else if !sameSet(head, m.Header) {
			return nil, &profiler.InputError{File: path, Field: "header", Msg: fmt.Sprintf("its columns differ from %s's (%s): merge the CSVs of one sweep, written by one mltop version", paths[0], mergeDiff(filepath.Base(path), filepath.Base(paths[0]), head, m.Header))}
		}
		for _, r := range rows {
			m.Rows++
			k := r.Spec.Key()
			i, seen := at[k]
			if !seen {
				at[k] = len(m.Results)
				m.Results = append(m.Results, r)
				continue
			}
			m.Duplicates++
			if m.Results[i].Status != profiler.StatusOK && r.Status == profiler.StatusOK {
				m.Results[i] = r
			}
		}
	}
	return m, nil
}

func readAll(path string) ([]profiler.Result, []string, Columns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, Columns{}, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the CSV: %v", errors.Unwrap(err))}
	}
	defer f.Close()
	d, err := NewDecoder(f, path, nil)
	if err != nil {
		return nil, nil, Columns{}, err
	}
	var out []profiler.Result
	for {
		r, err := d.Next()
		if err == io.EOF {
			return out, d.Header(), d.Spec, nil
		}
		if err != nil {
			return nil, nil, Columns{}, err
		}
		out = append(out, r)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// Missing lists the keys of want that m has no row for, in want's order,
// and counts m's rows whose spec want does not hold.
func (m *Merged) Missing(want []profiler.Spec) (missing []profiler.Spec, extra int) {
	have := map[string]bool{}
	for _, r := range m.Results {
		have[r.Spec.Key()] = true
	}
	wanted := map[string]bool{}
	for _, s := range want {
		k := s.Key()
		if !have[k] && !wanted[k] {
			missing = append(missing, s)
		}
		wanted[k] = true
	}
	for k := range have {
		if !wanted[k] {
			extra++
		}
	}
	return missing, extra
}

// WriteMerged writes m to path, which must not exist yet (or be empty).
func WriteMerged(path string, m *Merged) error {
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return &profiler.InputError{File: path, Msg: "the output exists and is not empty: merge into a new path (mltop never replaces measurements)"}
	}
	s, err := OpenCSVVia(path, m.Cols, false, "-o")
	if err != nil {
		return err
	}
	for _, r := range m.Results {
		if err := s.Write(r); err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}

// SpecList prints up to n specs, one a line, and how many more there are.
func SpecList(specs []profiler.Spec, n int) string {
	var b strings.Builder
	for i, s := range specs {
		if i == n {
			fmt.Fprintf(&b, "  … and %d more\n", len(specs)-n)
			break
		}
		fmt.Fprintf(&b, "  %s\n", s.String())
	}
	return b.String()
}

// mergeDiff names the columns each of two headers has and the other lacks.
func mergeDiff(file, first string, have, want []string) string {
	var parts []string
	for _, d := range []struct {
		name string
		a, b []string
	}{{file, have, want}, {first, want, have}} {
		var only []string
		for _, c := range d.a {
			if !slices.Contains(d.b, c) {
				only = append(only, c)
			}
		}
		if len(only) > 0 {
			parts = append(parts, fmt.Sprintf("only %s has %s", d.name, strings.Join(only, ",")))
		}
	}
	if len(parts) == 0 {
		return "same names in another order"
	}
	return strings.Join(parts, "; ")
}
