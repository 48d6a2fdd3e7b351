package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
)

// --race refuses a factor of 1 or less, NaN and words, on the command
// line and in a sweep file, naming the value: exit 2, nothing runs.
func TestRaceRefusesBadValues(t *testing.T) {
	sw := writeFile(t, "one.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n")
	for _, v := range []string{"1", "0.5", "-1", "NaN", "abc"} {
		code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--race", v)
		if code != exitBadInput || !strings.Contains(stderr, "--race="+v+": use 0 (off) or a factor above 1, e.g. 1.1") || strings.Contains(stderr, "to run from") {
			t.Errorf("--race %s: exit %d:\n%s", v, code, stderr)
		}
	}
	bad := writeFile(t, "bad.yaml", "defaults: {race: 1}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 2, cols: 8}\n")
	if code, _, stderr := runMain(t, "--config", bad, "--backend", "cpu"); code != exitBadInput || !strings.Contains(stderr, "race=1: use 0 (off) or a factor above 1") {
		t.Errorf("race: 1 in the file: exit %d:\n%s", code, stderr)
	}
}

// `mltop run` has one spec: --race is accepted and says it has nothing
// to race against; the spec is measured as without it.
func TestRunSaysRaceHasNothingToRace(t *testing.T) {
	code, stdout, stderr := runMain(t, "run", "softmax_bwd", "--set", "rows=2,cols=8", "--backend", "cpu", "--isolate", "off", "--quiet", "--time-limit", "0.05", "--race", "1.1")
	if code != exitOK || !strings.Contains(stderr, "one spec has nothing to race against") || strings.Contains(stdout, "outpaced") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// --resume seeds the best of a shape from the file's rows: a row whose
// median is 1 ns makes every other spec of its shape clearly slower, so
// each stops outpaced at the first count with an interval, and the
// sweep's end says how many.
func TestRaceResumeSeedsTheBest(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	defaults := "defaults: {time_limit: 0.2, min_time: 0.001, warmup: 0.001, hot: true}\n"
	first := writeFile(t, "first.yaml", defaults+"sweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n")
	if code, _, stderr := runMain(t, "--config", first, "--backend", "cpu", "--isolate", "off", "--quiet", "--csv", out); code != exitOK {
		t.Fatalf("first sweep: exit %d:\n%s", code, stderr)
	}
	setMedian(t, out, "0.001") // µs: a best no CPU kernel comes near
	all := writeFile(t, "all.yaml", defaults+"sweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [64, 32, 128]}\n    dims: {rows: 2, cols: 8}\n")
	code, _, stderr := runMain(t, "--config", all, "--backend", "cpu", "--isolate", "off", "--quiet", "--csv", out, "--resume", out, "--race", "1.1")
	if code != exitOK || !strings.Contains(stderr, "mltop: 2 of 2 specs stopped early, slower than 1.1x the best of their shape (--race)") {
		t.Fatalf("resumed sweep: exit %d:\n%s", code, stderr)
	}
	rows, err := sink.ReadCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows[1:] {
		if r.StopReason != profiler.StopOutpaced || r.Stats.N != profiler.RaceMinSamples || r.Stats.CILo == 0 {
			t.Errorf("WG=%d: stopped on %q after %d samples (CI low %g), want %q after %d", r.Spec.Knobs["WG"], r.StopReason, r.Stats.N, r.Stats.CILo, profiler.StopOutpaced, profiler.RaceMinSamples)
		}
	}
}

// setMedian sets the median_us cell of every row of the CSV at path.
func setMedian(t *testing.T, path, cell string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "median_us")
	for _, rec := range recs[1:] {
		rec[col] = cell
	}
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cw := csv.NewWriter(w)
	cw.WriteAll(recs)
	if err := cw.Error(); err != nil {
		t.Fatal(err)
	}
}

// A search (mltop tune, a sweep's search: block) accepts --race and says
// it does not race.
func TestTuneSaysRaceDoesNotApply(t *testing.T) {
	code, _, stderr := runMain(t, "tune", "softmax_bwd", "--dims", "rows=2,cols=8", "--backend", "cpu", "--isolate", "off", "--quiet",
		"--budget", "2", "--time-limit", "0.02", "--min-time", "0.001", "--race", "1.1")
	if code != exitOK || !strings.Contains(stderr, "--race (race:) does not apply to a search") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}
