package cli

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
)

// The fixtures are two real runs of configs/quick.yaml on the CPU backend
// (mltop --config configs/quick.yaml --backend cpu --csv runN.csv), started
// together on a shared 2-core machine under heavy load, so both saw the
// same conditions; their intervals are wide (±10–90 %). Runs made one after
// the other there differed by up to 3× between runs, a drift no per-run
// interval covers.
const (
	compareRun1 = "internal/cli/testdata/compare/run1.csv"
	compareRun2 = "internal/cli/testdata/compare/run2.csv"
)

func statsRow(median, lo, hi float64) profiler.Result {
	return profiler.Result{
		Spec:   profiler.Spec{Kernel: "k", DType: profiler.F32},
		Status: profiler.StatusOK,
		Stats:  profiler.Stats{N: 50, Median: median, CILo: lo, CIHi: hi},
	}
}

func TestCompareOneVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new profiler.Result
		want     string
	}{
		{"tight and 5% slower", statsRow(100, 99.5, 100.5), statsRow(105, 104.5, 105.5), verdictSlower},
		{"tight and 5% faster", statsRow(100, 99.5, 100.5), statsRow(95, 94.5, 95.5), verdictFaster},
		{"5% slower within wide intervals", statsRow(100, 90, 110), statsRow(105, 95, 115), verdictSame},
		{"significant but under the threshold", statsRow(100, 99.9, 100.1), statsRow(101, 100.9, 101.1), verdictSame},
		{"no interval", statsRow(100, 0, 0), statsRow(150, 0, 0), verdictNoCI},
		{"no interval under the threshold", statsRow(100, 0, 0), statsRow(101, 0, 0), verdictSame},
		// The old interval reaches far down: the change down is not certain.
		{"asymmetric interval", statsRow(100, 70, 101), statsRow(90, 89, 91), verdictSame},
		{"asymmetric interval the other way", statsRow(100, 99, 130), statsRow(90, 89, 91), verdictFaster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compareOne(tc.old, tc.new, 0.02)
			if r.Verdict != tc.want {
				t.Errorf("verdict %q, want %q (Δ %+.4f in [%+.4f, %+.4f])", r.Verdict, tc.want, r.Delta, r.Lo, r.Hi)
			}
			if r.HasCI && !(r.Lo <= r.Delta && r.Delta <= r.Hi) {
				t.Errorf("Δ %+.4f outside its interval [%+.4f, %+.4f]", r.Delta, r.Lo, r.Hi)
			}
		})
	}
}

func TestCompareIntervalFromCIs(t *testing.T) {
	// Both medians 100 in [99, 101]: the ratio lies in [99/101, 101/99].
	r := compareOne(statsRow(100, 99, 101), statsRow(100, 99, 101), 0.02)
	if lo, hi := 99.0/101-1, 101.0/99-1; math.Abs(r.Lo-lo) > 1e-12 || math.Abs(r.Hi-hi) > 1e-12 {
		t.Errorf("interval [%+.5f, %+.5f], want [%+.5f, %+.5f] (the ratios both intervals allow)", r.Lo, r.Hi, lo, hi)
	}
}

func TestCompareMatchingAndGeomean(t *testing.T) {
	mk := func(kernel string, bq int, cache profiler.CacheMode, median float64) profiler.Result {
		r := statsRow(median, median*0.999, median*1.001)
		r.Spec = profiler.Spec{Kernel: kernel, DType: profiler.F32, Knobs: map[string]int{"BQ": bq}}
		r.Cache = cache
		return r
	}
	old := []profiler.Result{mk("a", 1, "hot", 100), mk("a", 2, "hot", 100), mk("a", 3, "hot", 100), mk("b", 1, "cold", 100)}
	unmeasured := mk("a", 3, "hot", 0)
	unmeasured.Stats = profiler.Stats{}
	unmeasured.Status = profiler.StatusInvalid
	cur := []profiler.Result{mk("a", 1, "hot", 200), mk("a", 2, "hot", 50), unmeasured, mk("b", 1, "hot", 100), mk("c", 1, "", 1)}
	c := compareResults(old, cur, 0.02)
	if len(c.Rows) != 2 {
		t.Fatalf("%d rows compared, want 2 (a BQ=1 and BQ=2): %+v", len(c.Rows), c.Rows)
	}
	if len(c.OnlyOld) != 1 || !strings.Contains(c.OnlyOld[0], "[cold]") {
		t.Errorf("only in old: %q, want b with cold cache (the cache mode is part of the match)", c.OnlyOld)
	}
	if len(c.OnlyNew) != 2 {
		t.Errorf("only in new: %q, want b [hot] and c", c.OnlyNew)
	}
	if len(c.Unmeasured) != 1 || !strings.Contains(c.Unmeasured[0], "invalid") {
		t.Errorf("unmeasured: %q, want a BQ=3 naming the new status", c.Unmeasured)
	}
	// ×2 and ×½: the geometric mean is no change.
	if len(c.Kernels) != 1 || c.Kernels[0].Specs != 2 || c.Kernels[0].Delta > 1e-12 || c.Kernels[0].Delta < -1e-12 {
		t.Errorf("kernel means %+v, want a over 2 specs with geometric mean 0", c.Kernels)
	}
	if c.Kernels[0].Slower != 1 || c.Kernels[0].Faster != 1 {
		t.Errorf("kernel means %+v, want 1 slower and 1 faster", c.Kernels)
	}
}

// TestCompareRecordedRunsSame: two runs of one sweep are mostly the same.
func TestCompareRecordedRunsSame(t *testing.T) {
	old, err := sink.ReadCSV(compareRun1)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := sink.ReadCSV(compareRun2)
	if err != nil {
		t.Fatal(err)
	}
	c := compareResults(old, cur, 0.02)
	if len(c.Rows) != len(old) || len(c.OnlyOld)+len(c.OnlyNew)+len(c.Unmeasured) != 0 {
		t.Fatalf("%d of %d specs compared; unmatched %q %q %q", len(c.Rows), len(old), c.OnlyOld, c.OnlyNew, c.Unmeasured)
	}
	same := 0
	for _, r := range c.Rows {
		if r.Verdict == verdictSame {
			same++
		}
	}
	if float64(same) < 0.95*float64(len(c.Rows)) {
		t.Errorf("%d of %d specs same, want at least 95%%: %s", same, len(c.Rows), c.counts())
	}
}

// tightPair writes two CSVs from the recorded run: old, with every
// median's interval narrowed to ±0.5 % (what a GPU gives; the shared CPU
// that recorded the fixture gives ±5–30 %, where a 5 % change is noise),
// and new, the same with the timings of one spec (the third row)
// multiplied by factor. It returns their paths and that spec.
func tightPair(t *testing.T, factor float64) (oldPath, newPath, spec string) {
	t.Helper()
	rows, err := sink.ReadCSV(compareRun1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		st := &rows[i].Stats
		st.CILo, st.CIHi = st.Median*0.995, st.Median*1.005
	}
	dir := t.TempDir()
	oldPath, newPath = filepath.Join(dir, "old.csv"), filepath.Join(dir, "new.csv")
	if err := sink.WriteCSVFile(oldPath, rows); err != nil {
		t.Fatal(err)
	}
	st := &rows[2].Stats
	st.Min, st.P10, st.Median, st.P90, st.CILo, st.CIHi = st.Min*factor, st.P10*factor, st.Median*factor, st.P90*factor, st.CILo*factor, st.CIHi*factor
	if err := sink.WriteCSVFile(newPath, rows); err != nil {
		t.Fatal(err)
	}
	return oldPath, newPath, rows[2].Spec.String()
}

func TestCompareGateFailsOnSlowerSpec(t *testing.T) {
	old, slowed, spec := tightPair(t, 1.05)
	code, stdout, stderr := runMain(t, "compare", old, slowed)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailed, stderr)
	}
	first := strings.Split(stdout, "\n")[4] // after old:, new:, a blank line and the header
	if !strings.Contains(first, spec) || !strings.Contains(first, verdictSlower) || !strings.Contains(first, "+5.0%") {
		t.Errorf("first row %q, want %s slower by +5.0%%; stdout:\n%s", first, spec, stdout)
	}
	if !strings.Contains(stderr, "1 spec is slower") {
		t.Errorf("stderr %q, want it to count the one slower spec", stderr)
	}
	// The same file against itself passes the gate.
	if code, _, stderr := runMain(t, "compare", compareRun1, compareRun1); code != exitOK {
		t.Errorf("a file against itself: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	// Made faster instead: no failure.
	_, faster, _ := tightPair(t, 0.95)
	if code, stdout, _ := runMain(t, "compare", old, faster); code != exitOK || !strings.Contains(stdout, verdictFaster) {
		t.Errorf("5%% faster: exit %d, want 0 with a faster row:\n%s", code, stdout)
	}
	// A threshold above the change: same.
	if code, _, stderr := runMain(t, "compare", "--threshold", "6", old, slowed); code != exitOK {
		t.Errorf("--threshold 6 over a 5%% change: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}

func TestCompareFormats(t *testing.T) {
	old, slowed, _ := tightPair(t, 1.05)
	_, md, _ := runMain(t, "compare", "--markdown", old, slowed)
	if !strings.Contains(md, "| spec | old median |") || !strings.Contains(md, "| kernel | specs | geometric mean Δ |") {
		t.Errorf("--markdown lacks its tables:\n%s", md)
	}
	_, out, _ := runMain(t, "compare", "--csv", old, slowed)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("--csv is not CSV: %v\n%s", err, out)
	}
	rows, _ := sink.ReadCSV(compareRun1)
	if len(recs) != len(rows)+1 || recs[0][len(recs[0])-1] != "verdict" {
		t.Errorf("--csv: %d records, want a header and %d rows ending in verdict:\n%s", len(recs), len(rows), out)
	}
	slower := 0
	for _, r := range recs[1:] {
		if r[len(r)-1] == verdictSlower {
			slower++
		}
	}
	if slower != 1 {
		t.Errorf("--csv: %d slower rows, want 1:\n%s", slower, out)
	}
}

func TestCompareBadInput(t *testing.T) {
	notOurs := writeFile(t, "other.csv", "a,b\n1,2\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"compare", compareRun1, "nope.csv"}, "nope.csv does not exist"},
		{"not an mltop CSV", []string{"compare", notOurs, compareRun1}, "not an mltop CSV"},
		{"one file", []string{"compare", compareRun1}, "takes two CSVs"},
		{"bad threshold", []string{"compare", "--threshold", "-1", compareRun1, compareRun1}, "--threshold -1"},
		{"both formats", []string{"compare", "--csv", "--markdown", compareRun1, compareRun1}, "pick one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runMain(t, tc.args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	// No spec in common.
	softOnly := writeFile(t, "soft.csv", onlyKernel(t, compareRun1, "softmax_bwd"))
	attnOnly := writeFile(t, "attn.csv", onlyKernel(t, compareRun1, "attn_fwd"))
	code, _, stderr := runMain(t, "compare", softOnly, attnOnly)
	if code != exitBadInput || !strings.Contains(stderr, "no spec measured in both") {
		t.Errorf("no spec in common: exit %d, stderr %q", code, stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyKernel is the CSV at path with only the header and kernel's rows.
func onlyKernel(t *testing.T, path, kernel string) string {
	lines := strings.Split(strings.TrimSpace(mustRead(t, path)), "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		if strings.Contains(l, ","+kernel+",") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// Rows timed on the CPU backend get a note that their verdicts are of the
// tool, not of kernels; GPU rows do not.
func TestCompareNotesCPUTimings(t *testing.T) {
	const note = "CPU backend's wall-clock timings"
	_, _, stderr := runMain(t, "compare", compareRun1, compareRun2)
	if !strings.Contains(stderr, note) {
		t.Errorf("CPU rows without the note; stderr:\n%s", stderr)
	}
	rows, err := sink.ReadCSV(compareRun1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Backend, rows[i].Timer = "cuda", "cupti-kernel"
	}
	gpu := filepath.Join(t.TempDir(), "gpu.csv")
	if err := sink.WriteCSVFile(gpu, rows); err != nil {
		t.Fatal(err)
	}
	if _, _, stderr := runMain(t, "compare", gpu, gpu); strings.Contains(stderr, note) {
		t.Errorf("GPU rows with the CPU note; stderr:\n%s", stderr)
	}
}

// Every row of the Markdown tables has its header's columns when split as
// GitHub splits it, at each | not escaped as \| (a spec's "| rows=…" too,
// inside backticks), and the spec's | is there, escaped.
func TestCompareMarkdownKeepsColumns(t *testing.T) {
	old, slowed, _ := tightPair(t, 1.05)
	_, md, _ := runMain(t, "compare", "--markdown", old, slowed)
	unescapedBar := regexp.MustCompile(`(^|[^\\])\|`)
	columns := func(row string) int { return len(unescapedBar.FindAllStringIndex(row, -1)) - 1 }
	tables, header := 0, -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = -1
			continue
		}
		if header < 0 {
			header = columns(line)
			tables++
			continue
		}
		if got := columns(line); got != header {
			t.Errorf("%d columns, the header has %d: %s", got, header, line)
		}
	}
	if tables != 2 || !strings.Contains(md, `\| `) {
		t.Errorf("want 2 tables and specs with an escaped \\|:\n%s", md)
	}
}

// The table prints every time of a comparison in one unit: µs, or ms for
// all when one reaches 10 ms.
func TestCompareTimesOneUnit(t *testing.T) {
	short := []compareRow{{Old: 35_100, New: 9_131_900}}
	if got := compareTimes(short)(9_131_900); got != "9131.9 µs" {
		t.Errorf("short: %q", got)
	}
	long := []compareRow{{Old: 35_100, New: 9_131_900}, {Old: 10_820_000, New: 10_000_000}}
	tm := compareTimes(long)
	if a, b := tm(9_131_900), tm(10_820_000); a != "9.132 ms" || b != "10.820 ms" {
		t.Errorf("long: %q %q", a, b)
	}
	if got := tm(35_100); got != "0.035 ms" {
		t.Errorf("long, a short row: %q", got)
	}
}
