package sink

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// cellOf is the cell r writes in the named column.
func cellOf(t *testing.T, r profiler.Result, name string) string {
	t.Helper()
	i := slices.Index(testCols.Header(), name)
	if i < 0 {
		t.Fatalf("no column %s", name)
	}
	return testCols.Row(r)[i]
}

// Each measurement column holds its figure in a timed row and nothing in a
// row that was not timed; the budget, memory and verdict columns are empty
// where there is nothing to report.
func TestColumnCellsMeasuredAndNot(t *testing.T) {
	timed := richResult()
	timed.Stats.Median = 1234567.891
	timed.Stats.Mean = 1240001.5
	few := richResult() // timed, but below 6 samples: no interval
	few.Stats.N, few.Stats.CILo, few.Stats.CIHi = 3, 0, 0
	unchecked := richResult()
	unchecked.Verdict = &profiler.Verdict{Unchecked: true, Pass: true}
	notRun := profiler.Result{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 48}},
		Status: profiler.StatusInvalid, Error: "WG=48 is not allowed"}
	crashed := notRun
	crashed.Status, crashed.MemoryBytes = profiler.StatusCrashed, 4096
	crashedAfter := crashed // a spec that ran and crashed still took its time
	crashedAfter.WallSeconds = 3.25
	for _, c := range []struct {
		row       string
		r         profiler.Result
		col, want string
	}{
		{"timed", timed, "n", "42"},
		{"timed", timed, "min_us", "1.5"},
		{"timed", timed, "median_us", "1234.567891"},
		{"timed", timed, "ci_lo_us", "1.700123456789"},
		{"timed", timed, "ci_hi_us", "1.8015"},
		{"timed", timed, "cv", "0.0123"},
		{"timed", timed, "stop_reason", "time limit"},
		{"timed", timed, "tflops", "1.234"},
		{"timed", timed, "gbps", "456.7"},
		{"timed", timed, "pct_peak_flops", "12.5"},
		{"timed", timed, "pct_measured_flops", "20.25"},
		{"timed", timed, "tgm_bytes", "4096"},
		{"timed", timed, "compiler_tgm", "4000"},
		{"timed", timed, "memory_bytes", "123456789"},
		{"timed", timed, "worst_over_bound", "1.0625"},
		{"timed", timed, "sm_clock_mhz", "1957.5"},
		{"timed", timed, "wall_s", "0.8125"},
		{"few samples", few, "n", "3"},
		{"few samples", few, "ci_lo_us", ""},
		{"few samples", few, "ci_hi_us", ""},
		{"few samples", few, "median_us", "1.75"},
		{"unchecked", unchecked, "worst_over_bound", ""},
		{"unchecked", unchecked, "max_abs_err", "0"},
		{"invalid", notRun, "n", ""},
		{"invalid", notRun, "min_us", ""},
		{"invalid", notRun, "p10_us", ""},
		{"invalid", notRun, "median_us", ""},
		{"invalid", notRun, "p90_us", ""},
		{"invalid", notRun, "mean_us", ""},
		{"timed", timed, "mean_us", "1240.0015"},
		{"invalid", notRun, "ci_lo_us", ""},
		{"invalid", notRun, "ci_hi_us", ""},
		{"invalid", notRun, "cv", ""},
		{"invalid", notRun, "stop_reason", ""},
		{"invalid", notRun, "tflops", ""},
		{"invalid", notRun, "gbps", ""},
		{"invalid", notRun, "pct_peak_flops", ""},
		{"invalid", notRun, "pct_peak_bw", ""},
		{"invalid", notRun, "pct_measured_flops", ""},
		{"invalid", notRun, "pct_measured_bw", ""},
		{"invalid", notRun, "tgm_bytes", ""},
		{"invalid", notRun, "tgm_limit", ""},
		{"invalid", notRun, "compiler_tgm", ""},
		{"invalid", notRun, "memory_bytes", ""},
		{"invalid", notRun, "worst_over_bound", ""},
		{"invalid", notRun, "max_abs_err", ""},
		{"invalid", notRun, "sm_clock_mhz", ""},
		{"invalid", notRun, "wall_s", ""},
		{"invalid", notRun, "occupancy", "n/a"},
		{"invalid", notRun, "device_ordinal", "0"},
		{"crashed", crashed, "n", ""},
		{"crashed", crashed, "median_us", ""},
		{"crashed", crashed, "memory_bytes", "4096"},
		{"crashed after 3 s", crashedAfter, "wall_s", "3.25"},
	} {
		if got := cellOf(t, c.r, c.col); got != c.want {
			t.Errorf("%s row, column %s: %q, want %q", c.row, c.col, got, c.want)
		}
	}
}

// An empty cell reads back as "not measured": the fields stay at their
// zero value and no budget or verdict appears.
func TestEmptyCellsReadAsNotMeasured(t *testing.T) {
	notRun := profiler.Result{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 48}},
		Status: profiler.StatusCompileError, Error: "syntax error"}
	var b bytes.Buffer
	b.WriteString(strings.Join(testCols.Header(), ",") + "\n")
	b.WriteString(strings.Join(testCols.Row(notRun), ",") + "\n")
	d, err := NewDecoder(&b, "e.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats != (profiler.Stats{}) || r.TFLOPS != 0 || r.GBps != 0 || r.Budget != nil || r.Verdict != nil || r.MemoryBytes != 0 || r.StopReason != "" || r.Status != profiler.StatusCompileError {
		t.Errorf("read back %+v", r)
	}
}

// Every float comes back bit for bit: the µs columns through the decimal
// shift, the others through the shortest representation.
func TestFloatsRoundTripExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []float64{1750, 0.1, 1, 1e-3, 123456789.123456789, math.Nextafter(1750, 2000), 5e-324, math.MaxFloat64, 1e30, 3.0000000000000004}
	for range 2000 {
		values = append(values, math.Exp(rng.Float64()*60-20))
	}
	for _, v := range values {
		for _, sign := range []float64{1, -1} {
			ns := sign * v
			cell := fmicros(ns)
			back, err := parseMicros(cell)
			if err != nil || back != ns {
				t.Fatalf("%v ns wrote %q, read back %v (%v)", ns, cell, back, err)
			}
		}
		r := richResult()
		r.Stats.Min, r.Stats.Median, r.Stats.CILo, r.TFLOPS, r.Verdict.MaxRelErr = v, v*1.5, v/3, v/7, v/11
		d, err := NewDecoder(strings.NewReader(csvText(testCols.Header(), testCols.Row(r))), "x.csv", nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		if g.Stats.Min != r.Stats.Min || g.Stats.Median != r.Stats.Median || g.Stats.CILo != r.Stats.CILo || g.TFLOPS != r.TFLOPS || g.Verdict.MaxRelErr != r.Verdict.MaxRelErr {
			t.Fatalf("v=%v: read back %+v, %v, %v", v, g.Stats, g.TFLOPS, g.Verdict.MaxRelErr)
		}
	}
	// plain decimals for ordinary durations
	for ns, want := range map[float64]string{1750: "1.75", 1331000: "1331", 0.5: "0.0005", 12345678.9: "12345.6789", 1e30: "1e27"} {
		if got := fmicros(ns); got != want {
			t.Errorf("fmicros(%v) = %q, want %q", ns, got, want)
		}
	}
}

// testdata/previous-version.csv was written by the mltop before the
// stop_reason, ci_* and worst_over_bound columns: 4-digit values, 0 in the
// cells of a row that was not timed. It reads, and resumes.
func TestPreviousVersionFileReads(t *testing.T) {
	rows, err := ReadCSV("testdata/previous-version.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	ok, invalid, cancelled, big := rows[0], rows[1], rows[2], rows[3]
	if ok.Stats.Median != 1235e3 || ok.Stats.N != 42 || ok.TFLOPS != 1.235 || ok.StopReason != "" || ok.Stats.CIHi != 0 || ok.Verdict == nil || ok.Verdict.WorstRatio != 0 || ok.Status != profiler.StatusMismatch {
		t.Errorf("mismatch row read back %+v", ok)
	}
	if ok.WallSeconds != 0 {
		t.Errorf("the file has no wall_s column, yet the row reads %g s wall", ok.WallSeconds)
	}
	if invalid.Stats.N != 0 || invalid.Stats.Median != 0 || invalid.Status != profiler.StatusInvalid {
		t.Errorf("invalid row read back %+v", invalid)
	}
	if cancelled.Status != profiler.StatusCancelled || big.Stats.Median != 12350e3 || big.Status != profiler.StatusOK {
		t.Errorf("rows read back %+v\n%+v", cancelled, big)
	}
	// --resume upgrades it: this version's header, the cancelled row gone,
	// the kept rows' cells unchanged under their columns.
	path := writeFile(t, "old.csv", string(mustRead(t, "testdata/previous-version.csv")))
	done, err := ReadDone(path, testCols)
	if err != nil || len(done) != 3 || done[cancelled.Spec.Key()] {
		t.Fatalf("done %v, %v", done, err)
	}
	s, err := OpenCSV(path, testCols, true)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 3 || again[0].Stats.Median != 1235e3 || again[2].Stats.Median != 12350e3 {
		t.Errorf("after the upgrade: %+v", again)
	}
	if head := strings.SplitN(string(mustRead(t, path)), "\n", 2)[0]; head != strings.Join(testCols.Header(), ",") {
		t.Errorf("header after the upgrade:\n%s", head)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A stop_reason mltop does not write is refused, naming the ones it does.
func TestStopReasonRefusesUnknown(t *testing.T) {
	row := testCols.Row(richResult())
	row[slices.Index(testCols.Header(), StopReasonColumn)] = "bored"
	d, err := NewDecoder(strings.NewReader(csvText(testCols.Header(), row)), "s.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); err == nil || !strings.Contains(err.Error(), `"bored"`) || !strings.Contains(err.Error(), "time limit") {
		t.Errorf("err %v", err)
	}
}
