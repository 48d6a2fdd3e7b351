package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func sampleResults(t *testing.T) []profiler.Result {
	r := run.NewRunner(&enginetest.MemBackend{})
	var out []profiler.Result
	for _, wg := range []int{32, 64} {
		out = append(out, r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": 500}}, enginetest.QuickOptions(), nil))
	}
	out = append(out, r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": 48}}, enginetest.QuickOptions(), nil))
	return out
}

func TestCSVSinkAndResume(t *testing.T) {
	results := sampleResults(t)
	specs := []profiler.Spec{results[0].Spec, results[1].Spec}
	cols := ColumnsFor(specs)
	path := filepath.Join(t.TempDir(), "out.csv")
	s, err := OpenCSV(path, cols, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(results[0]); err != nil {
		t.Fatal(err)
	}
	// flushed per row: the file holds the row before Close
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("after one Write the file has %d lines:\n%s", len(lines), data)
	}
	wantHead := "time,backend,device,device_ordinal,timer,cache,kernel,dtype,WG,N,broken,drift,n,min_us,p10_us,median_us,p90_us,mean_us,ci_lo_us,ci_hi_us,cv,stop_reason,tflops,gbps,pct_peak_flops,pct_peak_bw,pct_measured_flops,pct_measured_bw,tgm_bytes,tgm_limit,compiler_tgm,occupancy,occupancy_limiter,memory_bytes,max_abs_err,max_rel_err,rms_err,worst_over_bound,tol,rows_checked,status,error,dispatch_medians_us,sm_clock_mhz,settle_s,wall_s"
	if lines[0] != wantHead {
		t.Errorf("header\n%s\nwant\n%s", lines[0], wantHead)
	}
	row := strings.Split(lines[1], ",")
	at := func(name string) string { return row[slices.Index(strings.Split(wantHead, ","), name)] }
	if row[1] != "mem" || row[3] != "0" || row[5] != "cold" || row[6] != "test_scale" || row[8] != "32" || row[9] != "500" || row[10] != "0" || at("status") != "ok" || at("occupancy") != "64" || at("occupancy_limiter") != "threads" ||
		at("stop_reason") == "" || at("ci_lo_us") == "" || at("ci_hi_us") == "" || at("mean_us") != "1.0011" {
		t.Errorf("row %v", row)
	}
	s.Write(results[2]) // invalid row with an error
	s.Close()

	done, err := ReadDone(path, cols)
	if err != nil {
		t.Fatal(err)
	}
	if !done[results[0].Spec.Key()] || done[results[1].Spec.Key()] || len(done) != 2 {
		t.Errorf("done %v", done)
	}
	// appending keeps the rows and adds no second header
	s2, err := OpenCSV(path, cols, true)
	if err != nil {
		t.Fatal(err)
	}
	s2.Write(results[1])
	s2.Close()
	data, _ = os.ReadFile(path)
	if n := strings.Count(string(data), "time,backend"); n != 1 {
		t.Errorf("%d headers after append", n)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("%d lines after append:\n%s", n, data)
	}
}

func TestResumeRejectsOtherColumns(t *testing.T) {
	// An mltop CSV of another sweep: the difference is named.
	path := filepath.Join(t.TempDir(), "old.csv")
	other := ColumnsFor([]profiler.Spec{{Kernel: "test_scale"}})
	other.Knobs = append(other.Knobs, "BQ")
	os.WriteFile(path, []byte(strings.Join(other.Header(), ",")+"\n"), 0o644)
	_, err := ReadDone(path, ColumnsFor([]profiler.Spec{{Kernel: "test_scale"}}))
	if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), "columns differ") || !strings.Contains(err.Error(), "extra BQ") {
		t.Errorf("err %v", err)
	}
	// A file mltop did not write: said so, not a diff of every column.
	foreign := filepath.Join(t.TempDir(), "foreign.csv")
	os.WriteFile(foreign, []byte("time,backend,kernel,BQ\n"), 0o644)
	_, err = ReadDone(foreign, ColumnsFor([]profiler.Spec{{Kernel: "test_scale"}}))
	if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), "foreign.csv:1: not an mltop CSV (the header lacks device, timer,") ||
		!strings.Contains(err.Error(), "a new path to --csv without --resume") || strings.Contains(err.Error(), "columns differ") {
		t.Errorf("foreign: %v", err)
	}
	if d, err := ReadDone(filepath.Join(t.TempDir(), "new.csv"), Columns{}); err != nil || len(d) != 0 {
		t.Errorf("missing file: %v %v", d, err)
	}
}

func TestOpenCSVUnwritable(t *testing.T) {
	_, err := OpenCSV("/nonexistent-dir/x.csv", Columns{}, false)
	if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), "/nonexistent-dir/x.csv") || !strings.Contains(err.Error(), "writable path") {
		t.Errorf("err %v", err)
	}
}

func TestBenchSink(t *testing.T) {
	var buf bytes.Buffer
	s := NewBench(&buf)
	for _, r := range sampleResults(t) {
		s.Write(r)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "goos: ") || !strings.Contains(out, "\ncpu: test device\n") {
		t.Errorf("header:\n%s", out)
	}
	var lines int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "BenchmarkTest_scale/dtype=f32/WG=32/N=500\t") {
			lines++
			f := strings.Split(l, "\t")
			if len(f) != 5 || !strings.HasSuffix(f[2], " ns/op") || !strings.HasSuffix(f[3], " TFLOP/s") || !strings.HasSuffix(f[4], " GB/s") {
				t.Errorf("line %q", l)
			}
		}
	}
	if lines != 10 {
		t.Errorf("%d lines for one spec, want 10 chunks:\n%s", lines, out)
	}
	if !strings.Contains(out, "# BenchmarkTest_scale/dtype=f32/WG=48/N=1000: invalid") {
		t.Errorf("invalid spec not noted:\n%s", out)
	}
}

// Unchecked rows were measured: their numbers are printed (benchstat reads
// them), with a comment saying the outputs were not verified.
func TestBenchSinkUnchecked(t *testing.T) {
	r := sampleResults(t)[0]
	r.Status = profiler.StatusUnchecked
	var buf bytes.Buffer
	s := NewBench(&buf)
	if err := s.Write(r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	name := BenchName(r.Spec)
	if n := strings.Count(out, "\n"+name+"\t"); n != 10 {
		t.Errorf("%d benchmark lines for an unchecked spec, want 10:\n%s", n, out)
	}
	if !strings.Contains(out, "# "+name+": unchecked") {
		t.Errorf("unchecked spec not noted:\n%s", out)
	}
}

func TestJSONAndTableSinks(t *testing.T) {
	results := sampleResults(t)
	var buf bytes.Buffer
	j := NewJSON(&buf)
	for _, r := range results {
		j.Write(r)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d JSON lines", len(lines))
	}
	var back profiler.Result
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || back.Status != profiler.StatusOK || back.Stats.N != results[0].Stats.N || back.Verdict.RowsChecked != 256 {
		t.Errorf("round trip: %v %+v", err, back)
	}
	buf.Reset()
	tab := NewTable(&buf)
	for _, r := range results {
		tab.Write(r)
	}
	out := buf.String()
	if !strings.Contains(out, "median ") || !strings.Contains(out, "test_scale f32 WG=32 | N=500") || !strings.Contains(out, "└ WG=48 is not allowed") {
		t.Errorf("table:\n%s", out)
	}
	block := FormatResult(results[0])
	for _, want := range []string{"timing (fake)", "median 1.00 µs", "threadgroup memory — scale (32 threads)", "red_smem", "of 32768 B limit", "occupancy — scale", "limited by threads", "correctness vs float64 reference: PASS", "256 of 500 rows"} {
		if !strings.Contains(block, want) {
			t.Errorf("result block lacks %q:\n%s", want, block)
		}
	}
	// A spec that stopped on its time limit says how far the median is
	// good and what would tighten it; one that reached precision does not.
	r := results[0]
	r.StopReason = profiler.StopTimeLimit
	r.Stats.CILo, r.Stats.CIHi = 0.97*r.Stats.Median, 1.03*r.Stats.Median
	if b := FormatResult(r); !strings.Contains(b, "did not reach the --noise target before the time limit: it is good to ±3.00%; a longer --time-limit") {
		t.Errorf("time-limit block:\n%s", b)
	}
	r.StopReason = profiler.StopPrecision
	if b := FormatResult(r); strings.Contains(b, "did not reach") {
		t.Errorf("precision block:\n%s", b)
	}
	// Five samples have no interval (CIHi 0): the block must not claim
	// ±0.00%, and says why there is none and what gives one.
	r.StopReason = profiler.StopTimeLimit
	r.Stats.N, r.Stats.CILo, r.Stats.CIHi = 5, 0, 0
	b := FormatResult(r)
	for _, want := range []string{"median 1.00 µs (no 95% CI: fewer than 6 samples)", "the time limit came after 5 samples, fewer than the 6 a 95% interval of the median needs", "a longer --time-limit"} {
		if !strings.Contains(b, want) {
			t.Errorf("5-sample block lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(b, "±0.00%") || strings.Contains(b, "± 0.00%") {
		t.Errorf("5-sample block claims a zero interval:\n%s", b)
	}
}

func TestOpenCSVKeepsExistingRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.csv")
	WriteCSVFile(path, sampleResults(t)[:1])
	before, _ := os.ReadFile(path)
	_, err := OpenCSV(path, Columns{}, false)
	if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), "--resume "+path) {
		t.Errorf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(before) {
		t.Errorf("the file changed: %q", b)
	}
	// A file that is not an mltop CSV, or a directory: no advice to resume it.
	yaml := filepath.Join(dir, "res.yaml")
	os.WriteFile(yaml, []byte("sweeps: []\n"), 0o644)
	for _, p := range []string{yaml, dir} {
		_, err := OpenCSV(p, Columns{}, false)
		if err == nil || !profiler.IsInputError(err) || strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v", p, err)
		}
	}
	if _, err := OpenCSV(dir, Columns{}, false); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := OpenCSV(yaml, Columns{}, false); err == nil || !strings.Contains(err.Error(), "not an mltop CSV") {
		t.Errorf("yaml: %v", err)
	}
}

// TestCSVErrorsNameHowThePathCame: the same refusals name --csv for a
// sweep, -o for merge and no flag for the session's export prompt, and
// only --csv is told to --resume.
func TestCSVErrorsNameHowThePathCame(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.csv")
	WriteCSVFile(old, sampleResults(t)[:1])
	missing := filepath.Join(dir, "no", "x.csv")
	for _, c := range []struct {
		path, via, want, not string
	}{
		{old, "--csv", "add to it with --resume " + old, ""},
		{old, "-o", "the CSV file exists and is not empty: choose a new path for -o (mltop never replaces measurements)", "--resume"},
		{old, "", "the CSV file exists and is not empty: choose a new path (mltop", "--"},
		{missing, "--csv", "does not exist: create it, or choose a writable path for --csv", ""},
		{missing, "-o", "does not exist: create it, or choose a writable path for -o", "--csv"},
		{missing, "", "does not exist: create it, or choose a writable path", "--csv"},
		{dir, "-o", "is a directory: give a file path for -o, e.g.", "--csv"},
	} {
		_, err := OpenCSVVia(c.path, Columns{}, false, c.via)
		if err == nil || !profiler.IsInputError(err) || !strings.Contains(err.Error(), c.want) || c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%s via %q: %v\nwant %q, without %q", c.path, c.via, err, c.want, c.not)
		}
	}
	if err := WriteCSVFile(old, sampleResults(t)[:1]); err == nil || strings.Contains(err.Error(), "--") {
		t.Errorf("export over rows: %v", err)
	}
}

func TestResumeRerunsCancelledSpecs(t *testing.T) {
	results := sampleResults(t)
	cols := ColumnsFor([]profiler.Spec{results[0].Spec})
	path := filepath.Join(t.TempDir(), "c.csv")
	s, _ := OpenCSV(path, cols, false)
	cancelled := results[1]
	cancelled.Status = profiler.StatusCancelled
	s.Write(results[0])
	s.Write(cancelled)
	s.Close()
	done, err := ReadDone(path, cols)
	if err != nil || !done[results[0].Spec.Key()] || done[cancelled.Spec.Key()] {
		t.Errorf("done %v, %v", done, err)
	}
}

// TestTableFitKeepsDifferingParts: on a narrow terminal the parts that
// differ between a kernel's rows come first and survive the cut; piped,
// nothing is cut however long the spec.
func TestTableFitKeepsDifferingParts(t *testing.T) {
	mk := func(wg, n int) profiler.Result {
		return profiler.Result{Spec: profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}}, Status: profiler.StatusOK}
	}
	results := []profiler.Result{mk(32, 100000000001), mk(32, 100000000002), mk(64, 100000000001)}
	var specs []profiler.Spec
	for _, r := range results {
		specs = append(specs, r.Spec)
	}
	var buf bytes.Buffer
	tab := NewTable(&buf)
	tab.Fit(60, specs)
	for _, r := range results {
		tab.Write(r)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 || lines[0] != "every row: test_scale f32" {
		t.Fatalf("table:\n%s", buf.String())
	}
	for i, want := range []string{"WG=32 N=100000000001", "WG=32 N=100000000002", "WG=64 N=100000000001"} {
		if !strings.HasPrefix(lines[2+i], want) {
			t.Errorf("row %q lacks %q first", lines[2+i], want)
		}
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 60 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	// Piped: the whole spec, even past the 64-column default.
	buf.Reset()
	long := mk(32, 1)
	long.Spec.Kernel = strings.Repeat("k", 70)
	NewTable(&buf).Write(long)
	if !strings.Contains(buf.String(), long.Spec.String()) {
		t.Errorf("cut:\n%s", buf.String())
	}
}

// TestMergeDiffNamesBothSides: merge says which columns each file has
// that the other lacks, not only the missing ones.
func TestMergeDiffNamesBothSides(t *testing.T) {
	got := mergeDiff("b.csv", "a.csv", []string{"time", "WG", "rows"}, []string{"time", "BQ", "rows"})
	if got != "only b.csv has WG; only a.csv has BQ" {
		t.Errorf("got %q", got)
	}
	if got := mergeDiff("b.csv", "a.csv", []string{"time", "BQ", "extra"}, []string{"time", "BQ"}); got != "only b.csv has extra" {
		t.Errorf("extra only: %q", got)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"attn_fwd", 8, "attn_fwd"},
		{"attn_fwd", 9, "attn_fwd"},
		{"attn_fwd", 5, "attn…"},
		{"µs±σ done", 4, "µs±…"}, // runes, not bytes
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
