package sink

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// clashCols has spec columns named like fixed columns (a dim n beside the
// sample count n, a knob status, a flag time) and a name that is a knob of
// one kernel and a dim of another (BM).
var clashCols = Columns{Knobs: []string{"status", "BM", "WG"}, Dims: []string{"n", "BM", "N"}, Flags: []string{"time", "broken"}}

func clashResult(n, wg int, st profiler.Status) profiler.Result {
	r := richResult()
	r.Spec = profiler.Spec{Kernel: "clash", DType: profiler.F16,
		Knobs: map[string]int{"status": 3, "BM": 64, "WG": wg},
		Dims:  map[string]int{"n": n, "BM": 7, "N": 9},
		Flags: map[string]bool{"time": true, "broken": false}}
	r.Status = st
	return r
}

// A spec column named like a fixed column is written under its kind's
// prefix, and reads back as that kind's entry of its own name: a dim n
// does not take the sample count's column, nor a knob BM a dim BM's.
func TestSpecColumnsNamedLikeFixedColumns(t *testing.T) {
	head := clashCols.Header()
	for _, h := range []string{"knob.status", "knob.BM", "WG", "dim.n", "dim.BM", "N", "flag.time", "broken", "n", "status", "time"} {
		if !slices.Contains(head, h) {
			t.Errorf("header lacks %s: %v", h, head)
		}
	}
	for i, h := range head {
		if slices.Contains(head[:i], h) {
			t.Errorf("header has %s twice: %v", h, head)
		}
	}
	if got := ColumnsOf(head); !slices.Equal(got.Knobs, clashCols.Knobs) || !slices.Equal(got.Dims, clashCols.Dims) || !slices.Equal(got.Flags, clashCols.Flags) {
		t.Errorf("ColumnsOf(%v) = %+v, want %+v", head, got, clashCols)
	}
	r := clashResult(1024, 32, profiler.StatusOK)
	row := clashCols.Row(r)
	cell := func(h string) string { return row[slices.Index(head, h)] }
	if cell("dim.n") != "1024" || cell("n") != "42" || cell("knob.status") != "3" || cell("status") != "ok" || cell("flag.time") != "1" || cell("knob.BM") != "64" || cell("dim.BM") != "7" {
		t.Errorf("row %v", row)
	}
	path := filepath.Join(t.TempDir(), "clash.csv")
	if err := os.WriteFile(path, []byte(csvText(head, row)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV(path)
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadCSV: %v, %d rows", err, len(got))
	}
	if got[0].Spec.Key() != r.Spec.Key() || got[0].Stats.N != 42 || got[0].Status != profiler.StatusOK {
		t.Errorf("read back %s n=%d %s, want %s n=42 ok", got[0].Spec.Key(), got[0].Stats.N, got[0].Status, r.Spec.Key())
	}
	if again := clashCols.Row(got[0]); !slices.Equal(again, row) {
		t.Errorf("wrote %q\nread back and wrote %q", row, again)
	}
}

// --resume and merge read such a file back: the resumed spec is done,
// and two shards merge by spec.
func TestResumeAndMergeWithAClashingDim(t *testing.T) {
	a := writeShard(t, "a.csv", clashCols, clashResult(1024, 32, profiler.StatusOK), clashResult(2048, 32, profiler.StatusCancelled))
	done, err := ReadDone(a, clashCols)
	if err != nil || len(done) != 1 || !done[clashResult(1024, 32, profiler.StatusOK).Spec.Key()] {
		t.Fatalf("ReadDone: %v, %v", done, err)
	}
	// reopening for --resume keeps the header and appends
	s, err := OpenCSV(a, clashCols, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(clashResult(2048, 32, profiler.StatusOK)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b := writeShard(t, "b.csv", clashCols, clashResult(1024, 64, profiler.StatusOK))
	m, err := MergeCSV([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Results) != 3 || !slices.Equal(m.Cols.Dims, clashCols.Dims) {
		t.Fatalf("merged %d results, columns %+v", len(m.Results), m.Cols)
	}
	var ns []int
	for _, r := range m.Results {
		ns = append(ns, r.Spec.Dims["n"])
		if r.Status != profiler.StatusOK || r.Stats.N != 42 {
			t.Errorf("%s: %s n=%d", r.Spec.Key(), r.Status, r.Stats.N)
		}
	}
	if !slices.Equal(ns, []int{1024, 2048, 1024}) {
		t.Errorf("dims n %v", ns)
	}
	out := filepath.Join(t.TempDir(), "m.csv")
	if err := WriteMerged(out, m); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(out)
	if first, _, _ := strings.Cut(string(text), "\n"); !strings.Contains(first, ",dim.n,") {
		t.Errorf("merged header %s", first)
	}
}
