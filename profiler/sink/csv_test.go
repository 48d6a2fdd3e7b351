package sink

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

var testCols = Columns{Knobs: []string{"WG"}, Dims: []string{"N"}, Flags: []string{"broken"}}

// richResult sets every field a CSV column holds to a value other than
// the one an empty Result encodes to.
func richResult() profiler.Result {
	return profiler.Result{
		Time:    time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Backend: "mem", Device: "test device, 4 units", Timer: "fake", Cache: profiler.CacheCold, DeviceOrdinal: 3, SMClockMHz: 1957.5, Settle: 0.5, WallSeconds: 0.8125,
		Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.BF16,
			Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"N": 500}, Flags: map[string]bool{"broken": true}},
		Status: profiler.StatusMismatch, Error: "3 of 256 outside\nworst out[7]",
		Stats: profiler.Stats{N: 42, Min: 1500, P10: 1600, Median: 1750, P90: 1900, CV: 0.0123, CILo: 1700.123456789, CIHi: 1801.5}, StopReason: profiler.StopTimeLimit,
		TFLOPS: 1.234, GBps: 456.7, PctPeakFLOP: 12.5, PctPeakBW: 45.6, PctMeasFLOP: 20.25, PctMeasBW: 50.5,
		MemoryBytes: 123456789,
		Budget: []profiler.BudgetReport{
			{Dispatch: "a", Total: 1024, Limit: 32768, CompilerTGM: 512},
			{Dispatch: "b", Total: 4096, Limit: 32768, CompilerTGM: 4000},
		},
		Occupancy: []profiler.Occupancy{
			{Dispatch: "a", Available: true, GroupsPerUnit: 8, Limiter: "threads"},
			{Dispatch: "b", Available: true, GroupsPerUnit: 3, Limiter: "tgm"},
		},
		Verdict: &profiler.Verdict{MaxAbsErr: 0.25, MaxRelErr: 0.0625, RMSErr: 0.01, ATol: 8e-3, RTol: 2e-2, RowsChecked: 256, WorstRatio: 1.0625},
		PerDispatch: []profiler.DispatchStats{
			{Name: "zero dK_acc", MedianNS: 3100, Setup: true, Stats: profiler.Stats{Median: 3100}},
			{Name: "dq", MedianNS: 1331000, Stats: profiler.Stats{Median: 1331000}},
		},
	}
}

func emptyResult() profiler.Result {
	return profiler.Result{Spec: profiler.Spec{Knobs: map[string]int{}, Dims: map[string]int{}, Flags: map[string]bool{}}}
}

// Every column of the table must read back what it writes: a column added
// to the encoder without a decoder (or with one that drops the value)
// fails here, as does one richResult does not exercise. Cells are decoded
// in the table's order, as a row is.
func TestEveryColumnDecodesWhatItEncodes(t *testing.T) {
	rich, empty := richResult(), emptyResult()
	back := emptyResult()
	table := testCols.Table()
	for _, col := range table {
		cell := col.Encode(&rich)
		if cell == col.Encode(&empty) {
			t.Errorf("column %s: richResult encodes to the empty value %q; give it a value in richResult", col.Name, cell)
		}
		if col.Decode == nil {
			t.Fatalf("column %s has no decoder", col.Name)
		}
		if err := col.Decode(&back, cell); err != nil {
			t.Errorf("column %s: decoding %q: %v", col.Name, cell, err)
		}
	}
	for _, col := range table {
		if want, got := col.Encode(&rich), col.Encode(&back); got != want {
			t.Errorf("column %s: wrote %q, read back and wrote %q", col.Name, want, got)
		}
	}
}

func TestCSVRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rt.csv")
	s, err := OpenCSV(path, testCols, false)
	if err != nil {
		t.Fatal(err)
	}
	rich := richResult()
	invalid := profiler.Result{Time: rich.Time, Backend: "mem", Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 48}},
		Status: profiler.StatusInvalid, Error: "WG=48 is not allowed"}
	for _, r := range []profiler.Result{rich, invalid} {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	got, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d rows, wrote 2", len(got))
	}
	// The file is a fixed point: what is read back writes the same rows.
	for i, r := range []profiler.Result{rich, invalid} {
		if a, b := testCols.Row(r), testCols.Row(got[i]); !slices.Equal(a, b) {
			t.Errorf("row %d:\nwrote %q\nreread %q", i, a, b)
		}
	}
	g := got[0]
	if g.Spec.Key() != rich.Spec.Key() || g.Status != profiler.StatusMismatch || g.Error != "3 of 256 outside | worst out[7]" ||
		!g.Time.Equal(rich.Time) || g.Device != rich.Device || g.Stats.Median != 1750 || g.Stats.N != 42 ||
		g.MemoryBytes != 123456789 || g.Verdict == nil || g.Verdict.RTol != 2e-2 || g.Verdict.RowsChecked != 256 {
		t.Errorf("read back %+v", g)
	}
	if tgm, lim := g.MaxTGM(); tgm != 4096 || lim != 32768 {
		t.Errorf("budget %d of %d", tgm, lim)
	}
	if o, ok := g.MinOccupancy(); !ok || o.GroupsPerUnit != 3 || o.Limiter != "tgm" {
		t.Errorf("occupancy %+v %v", o, ok)
	}
	if got[1].Verdict != nil || len(got[1].Occupancy) != 0 || got[1].Spec.Dims["N"] != 0 || got[1].Spec.Knobs["WG"] != 48 {
		t.Errorf("invalid row read back %+v", got[1])
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func csvText(rows ...[]string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(rows)
	return b.String()
}

func TestReadCSVNamesLineAndColumn(t *testing.T) {
	head := testCols.Header()
	good := testCols.Row(richResult())
	col := slices.Index(head, "median_us")
	bad := slices.Clone(good)
	bad[col] = "fast"
	path := writeFile(t, "bad.csv", csvText(head, good, bad))
	_, err := ReadCSV(path)
	var ie *profiler.InputError
	if !errors.As(err, &ie) || ie.Line != 3 || ie.Col != col+1 || !strings.Contains(err.Error(), "median_us") || !strings.Contains(err.Error(), `"fast"`) {
		t.Errorf("err %v (%+v)", err, ie)
	}
	short := writeFile(t, "short.csv", csvText(head, good[:5]))
	if _, err := ReadCSV(short); err == nil || !strings.Contains(err.Error(), "short.csv:2:") || !strings.Contains(err.Error(), "5 fields") {
		t.Errorf("short row: %v", err)
	}
	st := slices.Clone(good)
	st[slices.Index(head, "status")] = "great"
	if _, err := ReadCSV(writeFile(t, "st.csv", csvText(head, st))); err == nil || !strings.Contains(err.Error(), `unknown status "great"`) {
		t.Errorf("status: %v", err)
	}
}

func TestReadCSVForeign(t *testing.T) {
	path := writeFile(t, "foreign.csv", "name,score\nada,3\n")
	_, err := ReadCSV(path)
	if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), "not an mltop CSV") ||
		!strings.Contains(err.Error(), "median_us") || !strings.Contains(err.Error(), "foreign.csv") {
		t.Errorf("err %v", err)
	}
	if _, err := ReadCSV(writeFile(t, "empty.csv", "")); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty: %v", err)
	}
	if _, err := ReadCSV(filepath.Join(t.TempDir(), "none.csv")); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("missing: %v", err)
	}
}

// ColumnsOf reads spec columns back by what the registered families call
// them, so a report reads a CSV without the sweep that wrote it.
func TestColumnsOfHeader(t *testing.T) {
	c := ColumnsOf(testCols.Header())
	if !slices.Equal(c.Knobs, []string{"WG"}) || !slices.Equal(c.Dims, []string{"N"}) || !slices.Equal(c.Flags, []string{"broken"}) {
		t.Errorf("columns %+v", c)
	}
}

func TestResumeIgnoresOnlyACutLastRow(t *testing.T) {
	head := testCols.Header()
	r1 := richResult()
	r2 := richResult()
	r2.Spec.Knobs = map[string]int{"WG": 32}
	row1, row2 := testCols.Row(r1), testCols.Row(r2)
	// killed while writing row 2: it is ignored, row 1 is done
	path := writeFile(t, "cut.csv", csvText(head, row1)+strings.Join(row2[:7], ","))
	done, err := ReadDone(path, testCols)
	if err != nil || !done[r1.Spec.Key()] || done[r2.Spec.Key()] || len(done) != 1 {
		t.Errorf("done %v, %v", done, err)
	}
	// a damaged row before the last is an error naming its line
	bad := slices.Clone(row1)
	bad[slices.Index(head, "WG")] = "x"
	path = writeFile(t, "bad.csv", csvText(head, bad, row2))
	_, err = ReadDone(path, testCols)
	if err == nil || !strings.Contains(err.Error(), "bad.csv:2:9: column WG") {
		t.Errorf("err %v", err)
	}
}

// FuzzDecoder: no input makes the decoder panic; every error is an
// InputError, and one about a row names its line.
func FuzzDecoder(f *testing.F) {
	head := strings.Join(testCols.Header(), ",") + "\n"
	f.Add(head + strings.Join(testCols.Row(richResult()), ",") + "\n")
	f.Add(head + "x,y\n")
	f.Add(csvText(clashCols.Header(), clashCols.Row(clashResult(1024, 32, profiler.StatusOK)))) // dim.n, knob.BM beside dim.BM
	f.Add(head + `"unterminated` + "\n")
	f.Add("name,score\n1,2\n")
	f.Add("")
	notRun := profiler.Result{Spec: profiler.Spec{Kernel: "test_scale", Knobs: map[string]int{"WG": 48}}, Status: profiler.StatusInvalid}
	f.Add(head + strings.Join(testCols.Row(notRun), ",") + "\n")
	if old, err := os.ReadFile("testdata/previous-version.csv"); err == nil {
		f.Add(string(old))
	}
	f.Fuzz(func(t *testing.T, src string) {
		d, err := NewDecoder(strings.NewReader(src), "f.csv", nil)
		if err != nil {
			if !profiler.IsInputError(err) {
				t.Fatalf("header error is not an InputError: %v", err)
			}
			return
		}
		for range 1000 {
			r, err := d.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var ie *profiler.InputError
				if !errors.As(err, &ie) || ie.Line < 2 || !strings.Contains(err.Error(), "f.csv:") {
					t.Fatalf("row error without a line: %v", err)
				}
				continue
			}
			// What was read writes a row that reads back as itself.
			row := d.Spec.Row(r)
			d2, err := NewDecoder(strings.NewReader(csvText(d.Spec.Header(), row)), "g.csv", &d.Spec)
			if err != nil {
				t.Fatalf("rewritten header: %v", err)
			}
			r2, err := d2.Next()
			if err != nil {
				t.Fatalf("row %q does not read back: %v", row, err)
			}
			if again := d2.Spec.Row(r2); !slices.Equal(again, row) {
				t.Fatalf("wrote %q\nread back and wrote %q", row, again)
			}
		}
	})
}

func TestDispatchMediansRoundTrip(t *testing.T) {
	ds := []profiler.DispatchStats{
		{Name: "delta", MedianNS: 31200},
		{Name: "zero_dW", MedianNS: 3100, Setup: true},
		{Name: "dq", MedianNS: 1331000},
		{Name: "dkv", MedianNS: 1868400},
		{Name: "zero dV_acc", MedianNS: 0.5, Setup: true},
	}
	cell := EncodeDispatchMedians(ds)
	if want := "delta=31.2;zero_dW*=3.1;dq=1331;dkv=1868.4;zero dV_acc*=0.0005"; cell != want {
		t.Errorf("encoded %q, want %q", cell, want)
	}
	back, err := DecodeDispatchMedians(cell)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(ds) {
		t.Fatalf("decoded %d dispatches, want %d", len(back), len(ds))
	}
	for i, d := range ds {
		b := back[i]
		if b.Name != d.Name || b.Setup != d.Setup || math.Abs(b.MedianNS-d.MedianNS) > 1e-9*d.MedianNS || b.Stats.Median != b.MedianNS {
			t.Errorf("dispatch %d: got %+v, want %+v", i, b, d)
		}
	}
	if got := EncodeDispatchMedians(nil); got != "" {
		t.Errorf("no dispatches encode to %q, want empty", got)
	}
	// Separators in a name cannot break the cell.
	odd := EncodeDispatchMedians([]profiler.DispatchStats{{Name: "a;b=c", MedianNS: 1000}})
	if back, err := DecodeDispatchMedians(odd); err != nil || len(back) != 1 || back[0].Name != "a_b_c" {
		t.Errorf("%q decodes to %+v, %v", odd, back, err)
	}
	for _, bad := range []string{"dq", "dq=", "=3", "dq=x", "dq=-1", "dq=3;", "dq=NaN", "*=1"} {
		if _, err := DecodeDispatchMedians(bad); err == nil || !strings.Contains(err.Error(), "dispatch medians") {
			t.Errorf("%q: error %v, want one naming dispatch medians", bad, err)
		}
	}
}

func FuzzDispatchMedians(f *testing.F) {
	f.Add("delta=31.2;zero_dW*=3.1;dq=1331")
	f.Add("a=1e+06")
	f.Fuzz(func(t *testing.T, cell string) {
		ds, err := DecodeDispatchMedians(cell)
		if err != nil {
			return
		}
		again, err := DecodeDispatchMedians(EncodeDispatchMedians(ds))
		if err != nil || len(again) != len(ds) {
			t.Fatalf("%q: re-encoded cell does not decode: %v", cell, err)
		}
		for i := range ds {
			if again[i].Setup != ds[i].Setup || math.Abs(again[i].MedianNS-ds[i].MedianNS) > 1e-5*ds[i].MedianNS {
				t.Fatalf("%q: dispatch %d %+v became %+v", cell, i, ds[i], again[i])
			}
		}
	})
}

// A CSV written before dispatch_medians_us existed still reads.
func TestCSVWithoutDispatchMediansReads(t *testing.T) {
	head := testCols.Header()
	row := testCols.Row(richResult())
	i := slices.Index(head, DispatchMediansColumn)
	if i < 0 {
		t.Fatal("no dispatch_medians_us column")
	}
	head, row = slices.Delete(head, i, i+1), slices.Delete(row, i, i+1)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(head)
	w.Write(row)
	w.Flush()
	d, err := NewDecoder(&b, "old.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if r.PerDispatch != nil || r.Stats.Median != 1750 {
		t.Errorf("read %+v", r)
	}
}

// Appending to a file whose last line a kill left unfinished starts the
// next row on a line of its own: a cut row is dropped (its spec runs
// again), a whole row missing only its newline is kept, and the file
// reads back whole either way.
func TestAppendAfterAnUnfinishedLastLine(t *testing.T) {
	head := testCols.Header()
	r1, r2, r3 := richResult(), richResult(), richResult()
	r2.Spec.Knobs = map[string]int{"WG": 32}
	r3.Spec.Knobs = map[string]int{"WG": 128}
	row1, row2 := testCols.Row(r1), testCols.Row(r2)
	for _, c := range []struct {
		name, text string
		want       []string // spec keys done after appending r3
	}{
		{"cut row", csvText(head, row1) + strings.Join(row2[:7], ","), []string{r1.Spec.Key(), r3.Spec.Key()}},
		{"whole row without its newline", strings.TrimSuffix(csvText(head, row1, row2), "\n"), []string{r1.Spec.Key(), r2.Spec.Key(), r3.Spec.Key()}},
		{"ends with a newline", csvText(head, row1), []string{r1.Spec.Key(), r3.Spec.Key()}},
	} {
		path := writeFile(t, "a.csv", c.text)
		s, err := OpenCSV(path, testCols, true)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := s.Write(r3); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s.Close()
		done, err := ReadDone(path, testCols)
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Errorf("%s: %v\n%s", c.name, err, data)
			continue
		}
		if len(done) != len(c.want) {
			t.Errorf("%s: done %v, want %v", c.name, done, c.want)
		}
		for _, k := range c.want {
			if !done[k] {
				t.Errorf("%s: %s not done: %v", c.name, k, done)
			}
		}
	}
}
