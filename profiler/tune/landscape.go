package tune

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
)

// LoadLandscape reads a recorded landscape: the mltop CSV at path, gzipped
// when its name ends in .gz. Rows recorded before the CSV had a wall_s
// column take their wall time from the JSON lines the same sweep wrote
// beside it (NAME.jsonl or NAME.jsonl.gz for NAME.csv[.gz]), joined by
// spec; a row that has no wall time either way keeps 0 (see MissingWall).
func LoadLandscape(path string) ([]profiler.Result, error) {
	rows, err := readMaybeGzip(path, func(r io.Reader) ([]profiler.Result, error) {
		d, err := sink.NewDecoder(r, path, nil)
		if err != nil {
			return nil, err
		}
		var out []profiler.Result
		for {
			row, err := d.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			out = append(out, row)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s holds no rows to replay", path)
	}
	if MissingWall(rows) == 0 {
		return rows, nil
	}
	jsonl, ok := jsonLinesBeside(path)
	if !ok {
		return rows, nil
	}
	walls, err := readWalls(jsonl)
	if err != nil {
		return nil, err
	}
	for k := range rows {
		if rows[k].WallSeconds <= 0 {
			rows[k].WallSeconds = walls[rows[k].Spec.Key()]
		}
	}
	return rows, nil
}

// WriteLandscape writes rows as an mltop CSV at path, gzipped when its
// name ends in .gz, replacing the file whole (a temporary file renamed):
// a landscape whose wall times LoadLandscape joined from JSON lines can be
// kept as one file with its wall_s column.
func WriteLandscape(path string, rows []profiler.Result) error {
	specs := make([]profiler.Spec, len(rows))
	for k, r := range rows {
		specs[k] = r.Spec
		// The columns come from the family's schema: without it the knob,
		// dim and flag cells would be lost.
		if _, err := profiler.Lookup(r.Spec.Kernel); err != nil {
			return &profiler.InputError{File: path, Msg: fmt.Sprintf("kernel %q is not a family this mltop knows: register the user kernel's folder first (-kernel DIR)", r.Spec.Kernel)}
		}
	}
	cols := sink.ColumnsFor(specs)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the landscape: %v", err)}
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	var w io.Writer = tmp
	var z *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		z, _ = gzip.NewWriterLevel(tmp, gzip.BestCompression)
		w = z
	}
	cw := csv.NewWriter(w)
	cw.Write(cols.Header())
	for _, r := range rows {
		cw.Write(cols.Row(r))
	}
	cw.Flush()
	err = cw.Error()
	if z != nil && err == nil {
		err = z.Close()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot write the landscape: %v", err)}
	}
	return nil
}

// MissingWall counts the measured rows without a wall time: a replay
// would count their measurements as free.
func MissingWall(rows []profiler.Result) int {
	n := 0
	for _, r := range rows {
		if r.Stats.N > 0 && r.WallSeconds <= 0 {
			n++
		}
	}
	return n
}

// jsonLinesBeside is the JSON lines file of the sweep that wrote the CSV
// at path, if one is there.
func jsonLinesBeside(path string) (string, bool) {
	stem := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".csv")
	for _, p := range []string{stem + ".jsonl", stem + ".jsonl.gz"} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// readWalls reads each spec's wall time from a sweep's JSON lines (one
// Result per line); the last line of a spec wins.
func readWalls(path string) (map[string]float64, error) {
	return readMaybeGzip(path, func(r io.Reader) (map[string]float64, error) {
		walls := map[string]float64{}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for line := 1; sc.Scan(); line++ {
			var row struct {
				Spec profiler.Spec `json:"spec"`
				Wall float64       `json:"wall_s"`
			}
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				return nil, fmt.Errorf("%s:%d: not a JSON result line (mltop --json writes them): %v", path, line, err)
			}
			walls[row.Spec.Key()] = row.Wall
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return walls, nil
	})
}

// readMaybeGzip opens path, through gzip when its name ends in .gz, and
// hands it to read.
func readMaybeGzip[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, &profiler.InputError{File: path, Msg: fmt.Sprintf("cannot read the landscape: %v", err)}
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return zero, &profiler.InputError{File: path, Msg: fmt.Sprintf("not a gzip file (%v): give the file as gzip wrote it, or without .gz", err)}
		}
		defer z.Close()
		r = z
	}
	return read(r)
}

// LandscapeShape is one search a recorded landscape holds: the rows of
// one shape (kernel, dtype, dims, flags, knobs held fixed) and the knobs
// that vary over them.
type LandscapeShape struct {
	Base  profiler.Spec // the shape, with the knobs held fixed
	Knobs []search.Knob // the knobs that vary, values ascending
	Rows  []profiler.Result
}

// LandscapeShapes splits rows into their shapes: each distinct kernel,
// dtype, dims and flags is a search of its own (attention's causal and
// not), over the knobs whose values vary in the whole file, in the
// family's schema order.
func LandscapeShapes(rows []profiler.Result) []LandscapeShape {
	values := map[string]map[int]bool{}
	for _, r := range rows {
		for k, v := range r.Spec.Knobs {
			if values[k] == nil {
				values[k] = map[int]bool{}
			}
			values[k][v] = true
		}
	}
	var knobs []search.Knob
	for _, name := range schemaOrder(rows, slices.Sorted(maps.Keys(values))) {
		if len(values[name]) > 1 {
			knobs = append(knobs, search.Knob{Name: name, Values: slices.Sorted(maps.Keys(values[name]))})
		}
	}
	var out []LandscapeShape
	at := map[string]int{}
	for _, r := range rows {
		base := r.Spec.Clone()
		for _, k := range knobs {
			delete(base.Knobs, k.Name)
		}
		key := base.Key()
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, LandscapeShape{Base: base, Knobs: knobs})
		}
		out[i].Rows = append(out[i].Rows, r)
	}
	return out
}

// schemaOrder sorts knob names as the rows' family declares them (names
// it does not declare last, in the order given).
func schemaOrder(rows []profiler.Result, names []string) []string {
	if len(rows) == 0 {
		return names
	}
	f, err := profiler.Lookup(rows[0].Spec.Kernel)
	if err != nil {
		return names
	}
	pos := func(name string) int {
		for i, p := range f.Schema().Knobs {
			if p.Name == name {
				return i
			}
		}
		return len(f.Schema().Knobs)
	}
	slices.SortStableFunc(names, func(a, b string) int { return pos(a) - pos(b) })
	return names
}
