package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

func TestSearchMarkRoundTrip(t *testing.T) {
	for _, c := range []struct {
		m    *profiler.SearchMark
		cell string
	}{
		{nil, ""},
		{&profiler.SearchMark{Step: 12, Fidelity: 1}, "12"},
		{&profiler.SearchMark{Step: 3, Fidelity: 1.0 / 9}, "3@1/9"},
		{&profiler.SearchMark{Step: 4, Fidelity: 0.4}, "4@0.4"},
		{&profiler.SearchMark{Final: true, Fidelity: 1}, "final"},
	} {
		if got := EncodeSearchMark(c.m); got != c.cell {
			t.Errorf("EncodeSearchMark(%+v) = %q, want %q", c.m, got, c.cell)
		}
		back, err := DecodeSearchMark(c.cell)
		if err != nil || (back == nil) != (c.m == nil) || (back != nil && (back.Step != c.m.Step || back.Final != c.m.Final || back.Fidelity-c.m.Fidelity > 1e-12 || c.m.Fidelity-back.Fidelity > 1e-12)) {
			t.Errorf("DecodeSearchMark(%q) = %+v, %v: want %+v", c.cell, back, err, c.m)
		}
	}
	for _, bad := range []string{"x", "0", "-1", "3@", "3@2", "3@1/0", "final2"} {
		if _, err := DecodeSearchMark(bad); err == nil || !strings.Contains(err.Error(), "search step") {
			t.Errorf("DecodeSearchMark(%q) = %v: want an error", bad, err)
		}
	}
}

// A search's CSV has search_step last and reads back through ReadCSV;
// other CSVs do not have it.
func TestSearchStepColumnIsOptional(t *testing.T) {
	cols := Columns{Knobs: []string{"WG"}, Dims: []string{"rows"}}
	if strings.Contains(strings.Join(cols.Header(), ","), SearchStepColumn) {
		t.Fatal("a CSV without a search has a search_step column")
	}
	cols.Search = true
	h := cols.Header()
	if h[len(h)-1] != SearchStepColumn {
		t.Fatalf("search_step is not the last column: %v", h)
	}
	path := filepath.Join(t.TempDir(), "tune.csv")
	c, err := OpenCSV(path, cols, false)
	if err != nil {
		t.Fatal(err)
	}
	res := profiler.Result{Time: time.Unix(0, 0), Spec: profiler.Spec{Kernel: "k", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 8}},
		Status: profiler.StatusOK, Stats: profiler.Stats{N: 3, Median: 1000}, Search: &profiler.SearchMark{Step: 7, Fidelity: 1.0 / 3}}
	if err := c.Write(res); err != nil {
		t.Fatal(err)
	}
	c.Close()
	rows, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Search == nil || rows[0].Search.Step != 7 || rows[0].Search.Fidelity > 0.34 || rows[0].Search.Fidelity < 0.33 {
		t.Errorf("read back %+v", rows[0].Search)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), ",7@1/3\n") {
		t.Errorf("the row does not end in 7@1/3:\n%s", raw)
	}
}
