package tune

import (
	"bytes"
	"compress/gzip"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
)

func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(data)
	z.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonLines is rows as a sweep's --json writes them, each with the wall
// time wall(k).
func jsonLines(t *testing.T, rows []profiler.Result, wall func(k int) float64) []byte {
	t.Helper()
	var b bytes.Buffer
	j := sink.NewJSON(&b)
	for k, r := range rows {
		r.WallSeconds = wall(k)
		if err := j.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// A landscape recorded before wall_s: gzipped or not, its rows take their
// wall times from the JSON lines beside it (plain or gzipped) by spec;
// without them the measured rows are counted as missing a wall time.
func TestLoadLandscapeJoinsWallTimes(t *testing.T) {
	csvText := mustRead(t, cpuLandscape)
	rows := must(sink.ReadCSV(cpuLandscape))
	measured := 0
	for _, r := range rows {
		if r.Stats.N > 0 {
			measured++
		}
	}
	// the JSON lines in reverse order: the join is by spec, not by line
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	lines := jsonLines(t, rev, func(k int) float64 { return float64(len(rows) - k) })
	for _, c := range []struct {
		name, csv, jsonl string
		missing          int
	}{
		{"csv and jsonl", "l.csv", "l.jsonl", 0},
		{"csv.gz and jsonl", "l.csv.gz", "l.jsonl", 0},
		{"csv.gz and jsonl.gz", "l.csv.gz", "l.jsonl.gz", 0},
		{"csv.gz alone", "l.csv.gz", "", measured},
		{"jsonl of another name", "l.csv.gz", "other.jsonl", measured},
	} {
		dir := t.TempDir()
		put := func(name string, data []byte) {
			if strings.HasSuffix(name, ".gz") {
				writeGzip(t, filepath.Join(dir, name), data)
			} else if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		put(c.csv, csvText)
		if c.jsonl != "" {
			put(c.jsonl, lines)
		}
		got, err := LoadLandscape(filepath.Join(dir, c.csv))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != len(rows) || MissingWall(got) != c.missing {
			t.Errorf("%s: %d rows, %d without a wall time: want %d and %d", c.name, len(got), MissingWall(got), len(rows), c.missing)
		}
		if c.missing == 0 {
			for k, r := range got {
				if r.WallSeconds != float64(k+1) {
					t.Fatalf("%s: row %d (%s) has %g s, the JSON line of its spec %d", c.name, k, r.Spec, r.WallSeconds, k+1)
				}
			}
		}
	}
}

// A CSV with the wall_s column needs no JSON lines, and its own cells win
// over theirs.
func TestLoadLandscapeWallColumnWins(t *testing.T) {
	rows := must(sink.ReadCSV(cpuLandscape))
	for k := range rows {
		rows[k].WallSeconds = 0.5 + float64(k)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "w.csv")
	if err := sink.WriteCSVFile(path, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.jsonl"), jsonLines(t, rows, func(int) float64 { return 99 }), 0o644); err != nil {
		t.Fatal(err)
	}
	got := must(LoadLandscape(path))
	for k, r := range got {
		if r.WallSeconds != 0.5+float64(k) {
			t.Fatalf("row %d: %g s, want the CSV's %g", k, r.WallSeconds, 0.5+float64(k))
		}
	}
}

// Broken inputs are errors naming the file (and line) and what to do.
func TestLoadLandscapeBadInput(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "a.csv.gz")
	os.WriteFile(notGzip, mustRead(t, cpuLandscape), 0o644)
	badJSON := filepath.Join(dir, "b.csv")
	os.WriteFile(badJSON, mustRead(t, cpuLandscape), 0o644)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("{\"spec\":{}}\n{not json\n"), 0o644)
	empty := filepath.Join(dir, "c.csv")
	os.WriteFile(empty, []byte(strings.Join(sink.FixedColumns(), ",")+"\n"), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none.csv.gz"), "none.csv.gz: cannot read the landscape"},
		{notGzip, "a.csv.gz: not a gzip file"},
		{badJSON, "b.jsonl:2: not a JSON result line"},
		{empty, "c.csv holds no rows to replay"},
	} {
		if _, err := LoadLandscape(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", filepath.Base(c.path), err, c.want)
		}
	}
}

// A landscape splits into one search per shape (attention's causal and
// not), over the knobs that vary, in the schema's order; knobs that never
// vary stay in the shape.
func TestLandscapeShapes(t *testing.T) {
	row := func(causal bool, bq, bk int) profiler.Result {
		return profiler.Result{Spec: profiler.Spec{Kernel: "attn_fwd", DType: profiler.BF16,
			Knobs: map[string]int{"WN": 2, "BK": bk, "BQ": bq, "WM": 4}, Dims: map[string]int{"D": 128}, Flags: map[string]bool{"causal": causal}}}
	}
	rows := []profiler.Result{row(false, 32, 16), row(true, 32, 16), row(false, 64, 16), row(true, 64, 32), row(false, 32, 64)}
	got := LandscapeShapes(rows)
	if len(got) != 2 {
		t.Fatalf("%d shapes, want causal and not", len(got))
	}
	want := []search.Knob{{Name: "BQ", Values: []int{32, 64}}, {Name: "BK", Values: []int{16, 32, 64}}}
	for k, sh := range got {
		if !sameKnobs(sh.Knobs, want) {
			t.Errorf("shape %d searches %v, want %v (schema order, values ascending)", k, sh.Knobs, want)
		}
		if sh.Base.Flags["causal"] != (k == 1) || sh.Base.Knobs["WN"] != 2 || sh.Base.Knobs["WM"] != 4 || len(sh.Base.Knobs) != 2 {
			t.Errorf("shape %d: base %s, want causal=%v with WN=2 WM=4 held", k, sh.Base, k == 1)
		}
	}
	if len(got[0].Rows) != 3 || len(got[1].Rows) != 2 {
		t.Errorf("%d and %d rows, want 3 and 2", len(got[0].Rows), len(got[1].Rows))
	}
}

// A space built once serves many searches of the shape (the same outcome
// as building it each time); one built for other knobs is refused.
func TestSearchSharesASpace(t *testing.T) {
	rep, _ := cpuReplay(t)
	cfg := cpuConfig("tpe", "30", 4)
	sp := must(SpaceOf(rep.Device(), cfg))
	fresh := must(Search(context.Background(), rep, cfg, nil))
	cfg.Space = sp
	shared := must(Search(context.Background(), rep, cfg, nil))
	if fresh.Winner().Spec.Key() != shared.Winner().Spec.Key() || fresh.Measured != shared.Measured || shared.Space != sp.Size() {
		t.Errorf("shared space: winner %s after %d, fresh: %s after %d", shared.Winner().Spec, shared.Measured, fresh.Winner().Spec, fresh.Measured)
	}
	cfg.Knobs = cfg.Knobs[:3]
	if _, err := Search(context.Background(), rep, cfg, nil); err == nil || !strings.Contains(err.Error(), "built for other knobs") {
		t.Errorf("a space of other knobs: %v", err)
	}
}

// The targets catch each way of missing them.
func TestTargetMiss(t *testing.T) {
	good := strategyFigures{gap: 0.01, evalsTo: 40, wallTo: 50, evals: 100}
	random := strategyFigures{gap: 0.015, evalsTo: 90, wallTo: 120, evals: 100}
	inf := func(f strategyFigures) strategyFigures { f.evalsTo, f.wallTo = math.Inf(1), math.Inf(1); return f }
	for _, c := range []struct {
		name string
		f, r strategyFigures
		want string
	}{
		{"meets them", good, random, ""},
		{"random never gets there", good, inf(random), ""},
		{"gap over 2 %", strategyFigures{gap: 0.021, evalsTo: 40, wallTo: 50, evals: 100}, random, "median gap 2.10%"},
		{"more evaluations than the share", strategyFigures{gap: 0.01, evalsTo: 40, wallTo: 50, evals: 101}, random, "want ≤ 100"},
		{"never within 2 %", inf(good), random, "want ≤ 100"},
		{"too much wall time", strategyFigures{gap: 0.01, evalsTo: 40, wallTo: 301, evals: 100}, random, "want ≤ 300 s"},
		{"random nearer", good, strategyFigures{gap: 0.005, evalsTo: 90, wallTo: 120}, "want better"},
		{"random sooner", good, strategyFigures{gap: 0.015, evalsTo: 40, wallTo: 120}, "want better"},
		{"random quicker", good, strategyFigures{gap: 0.015, evalsTo: 90, wallTo: 49}, "want better"},
	} {
		got := targetMiss(c.f, c.r, 100, 300)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The figures' counts: every row up to the first full measurement within
// the target, brief ones included; a brief measurement does not count as
// reaching it.
func TestToWithin(t *testing.T) {
	r := func(median, wall, fidelity float64) profiler.Result {
		return profiler.Result{Status: profiler.StatusOK, Stats: profiler.Stats{N: 10, Median: median}, WallSeconds: wall,
			Search: &profiler.SearchMark{Fidelity: fidelity}}
	}
	rows := []profiler.Result{r(200, 1, 1), {Status: profiler.StatusInvalid, WallSeconds: 0.5}, r(100, 0.25, 1.0/9), r(101, 2, 1)}
	if n, w := toWithin(rows, 102); n != 4 || w != 3.75 {
		t.Errorf("%g evaluations, %g s: want 4 and 3.75", n, w)
	}
	if n, _ := toWithin(rows, 99); !math.IsInf(n, 1) {
		t.Errorf("never within: %g evaluations, want +Inf", n)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 3 {
		t.Errorf("median %g, want the upper middle 3", m)
	}
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("median %g, want 3", m)
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

// The replay answers with the recorded row, wall time included, for a
// full spec and for one that leaves a knob at its default.
func TestReplayAnswersRecordedWall(t *testing.T) {
	rows := must(sink.ReadCSV(cpuLandscape))
	var row profiler.Result
	for _, r := range rows {
		if r.Status == profiler.StatusOK {
			row = r
			break
		}
	}
	row.WallSeconds = 1.25
	rep, _ := cpuReplay(t)
	rep = NewReplay(rep.Device(), []profiler.Result{row})
	partial := row.Spec.Clone()
	delete(partial.Knobs, "ST") // the default, 0
	for _, s := range []profiler.Spec{row.Spec, partial} {
		got := rep.Run(context.Background(), s, profiler.DefaultOptions(), nil)
		if got.Status != profiler.StatusOK || got.WallSeconds != 1.25 || got.Stats.Median != row.Stats.Median {
			t.Errorf("%s: %s, %g s, median %g: want the recorded ok row, 1.25 s, %g", s, got.Status, got.WallSeconds, got.Stats.Median, row.Stats.Median)
		}
	}
	if n := rep.Runs[row.Spec.Key()]; n != 2 {
		t.Errorf("%d runs counted under the full spec, want 2", n)
	}
}

// WriteLandscape writes what LoadLandscape joined as one file (gzipped or
// not) that reads back cell for cell, wall times included, and replaces
// the file it read.
func TestWriteLandscapeFoldsWallTimes(t *testing.T) {
	rows := must(sink.ReadCSV(cpuLandscape))
	for _, name := range []string{"w.csv.gz", "w.csv"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		os.WriteFile(path, mustRead(t, cpuLandscape), 0o644)
		if strings.HasSuffix(name, ".gz") {
			writeGzip(t, path, mustRead(t, cpuLandscape))
		}
		os.WriteFile(filepath.Join(dir, "w.jsonl"), jsonLines(t, rows, func(k int) float64 { return 0.125 * float64(k+1) }), 0o644)
		joined := must(LoadLandscape(path))
		if err := WriteLandscape(path, joined); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "w.jsonl"))
		back := must(LoadLandscape(path))
		cols := sink.ColumnsFor([]profiler.Spec{rows[0].Spec})
		if len(back) != len(rows) || MissingWall(back) != 0 {
			t.Fatalf("%s: %d rows, %d without a wall time", name, len(back), MissingWall(back))
		}
		for k := range back {
			if want, got := cols.Row(joined[k]), cols.Row(back[k]); !slices.Equal(want, got) || back[k].WallSeconds != 0.125*float64(k+1) {
				t.Fatalf("%s row %d reads back\n%q\nwant\n%q", name, k, got, want)
			}
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, mode %v", name, err, fi.Mode())
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "w.csv*.*")); len(left) > 1 || (len(left) == 1 && left[0] != path) {
			t.Errorf("%s: temporary files left: %v", name, left)
		}
	}
	if err := WriteLandscape(filepath.Join(t.TempDir(), "no", "x.csv"), rows); err == nil || !strings.Contains(err.Error(), "cannot write the landscape") {
		t.Errorf("a missing folder: %v", err)
	}
	unknown := []profiler.Result{{Spec: profiler.Spec{Kernel: "not_registered", Knobs: map[string]int{"BM": 64}}, Status: profiler.StatusOK}}
	path := filepath.Join(t.TempDir(), "u.csv")
	if err := WriteLandscape(path, unknown); err == nil || !strings.Contains(err.Error(), `kernel "not_registered" is not a family`) {
		t.Errorf("an unknown kernel: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("an unknown kernel's rows were written")
	}
}
