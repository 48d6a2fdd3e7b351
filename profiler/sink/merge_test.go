package sink

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func scaleResult(wg, n int, st profiler.Status, dev int) profiler.Result {
	r := richResult()
	r.Spec = profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": wg}, Dims: map[string]int{"N": n}, Flags: map[string]bool{}}
	r.Status, r.DeviceOrdinal = st, dev
	if st != profiler.StatusOK {
		r.Error = "it broke"
	}
	return r
}

func writeShard(t *testing.T, name string, cols Columns, rows ...profiler.Result) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	s, err := OpenCSV(path, cols, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	return path
}

func TestMergeDropsDuplicatesKeepingTheFirstOK(t *testing.T) {
	a := writeShard(t, "a.csv", testCols,
		scaleResult(32, 100, profiler.StatusOK, 0),
		scaleResult(64, 100, profiler.StatusCrashed, 1), // rerun in b: ok there wins
		scaleResult(128, 100, profiler.StatusTimeout, 0))
	b := writeShard(t, "b.csv", testCols,
		scaleResult(64, 100, profiler.StatusOK, 2),
		scaleResult(32, 100, profiler.StatusMismatch, 3), // a's ok row stays
		scaleResult(128, 100, profiler.StatusCrashed, 2), // neither ok: a's (first) stays
		scaleResult(32, 200, profiler.StatusOK, 1))
	m, err := MergeCSV([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 7 || m.Duplicates != 3 || len(m.Results) != 4 {
		t.Fatalf("rows %d duplicates %d results %d", m.Rows, m.Duplicates, len(m.Results))
	}
	want := []struct {
		wg, n int
		st    profiler.Status
		dev   int
	}{{32, 100, profiler.StatusOK, 0}, {64, 100, profiler.StatusOK, 2}, {128, 100, profiler.StatusTimeout, 0}, {32, 200, profiler.StatusOK, 1}}
	for i, w := range want {
		r := m.Results[i]
		if r.Spec.Knobs["WG"] != w.wg || r.Spec.Dims["N"] != w.n || r.Status != w.st || r.DeviceOrdinal != w.dev {
			t.Errorf("result %d: WG=%d N=%d %s on %d, want %+v", i, r.Spec.Knobs["WG"], r.Spec.Dims["N"], r.Status, r.DeviceOrdinal, w)
		}
	}
	out := filepath.Join(t.TempDir(), "all.csv")
	if err := WriteMerged(out, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(out)
	if err != nil || len(back) != 4 {
		t.Fatalf("merged file: %d rows, %v", len(back), err)
	}
	for i := range back {
		if got, w := testCols.Row(back[i]), testCols.Row(m.Results[i]); strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
	// never over an existing file
	if err := WriteMerged(out, m); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second write: %v", err)
	}
}

func TestMergeMissingSpecs(t *testing.T) {
	a := writeShard(t, "a.csv", testCols, scaleResult(32, 100, profiler.StatusOK, 0), scaleResult(64, 999, profiler.StatusOK, 0))
	m, err := MergeCSV([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	var want []profiler.Spec
	for _, wg := range []int{32, 64, 128} {
		want = append(want, scaleResult(wg, 100, profiler.StatusOK, 0).Spec)
	}
	missing, extra := m.Missing(want)
	if len(missing) != 2 || missing[0].Knobs["WG"] != 64 || missing[1].Knobs["WG"] != 128 || extra != 1 {
		t.Errorf("missing %v, extra %d", missing, extra)
	}
	if s := SpecList(missing, 1); !strings.Contains(s, "WG=64") || !strings.Contains(s, "and 1 more") || strings.Contains(s, "WG=128") {
		t.Errorf("list:\n%s", s)
	}
}

func TestMergeRejectsOtherColumns(t *testing.T) {
	a := writeShard(t, "a.csv", testCols, scaleResult(32, 100, profiler.StatusOK, 0))
	other := Columns{Knobs: []string{"WG"}, Dims: []string{"N", "M"}, Flags: testCols.Flags}
	b := writeShard(t, "b.csv", other, scaleResult(64, 100, profiler.StatusOK, 0))
	_, err := MergeCSV([]string{a, b})
	var ie *profiler.InputError
	if !errors.As(err, &ie) || ie.File != b || !strings.Contains(err.Error(), "only b.csv has M") {
		t.Fatalf("err %v", err)
	}
	// a file that is not an mltop CSV, and none at all
	c := writeFile(t, "c.csv", "x,y\n1,2\n")
	if _, err := MergeCSV([]string{a, c}); !errors.As(err, &ie) || ie.File != c || !strings.Contains(err.Error(), "not an mltop CSV") {
		t.Errorf("foreign file: %v", err)
	}
	if _, err := MergeCSV(nil); err == nil {
		t.Error("no inputs accepted")
	}
}

// A CSV written before the device_ordinal column reads; the column is 0.
func TestDecoderReadsCSVWithoutDeviceOrdinal(t *testing.T) {
	head := testCols.Header()
	row := testCols.Row(scaleResult(32, 100, profiler.StatusOK, 5))
	var h2, r2 []string
	for i := range head {
		if head[i] != "device_ordinal" {
			h2, r2 = append(h2, head[i]), append(r2, row[i])
		}
	}
	if len(h2) != len(head)-1 {
		t.Fatal("no device_ordinal column in the table")
	}
	got, err := ReadCSV(writeFile(t, "old.csv", csvText(h2, r2)))
	if err != nil || len(got) != 1 || got[0].DeviceOrdinal != 0 || got[0].Spec.Knobs["WG"] != 32 {
		t.Fatalf("%v %+v", err, got)
	}
}
