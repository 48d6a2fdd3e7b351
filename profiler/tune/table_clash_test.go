package tune

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

// clashFamily has a dim and a knob named like a tuning table's own
// columns (a user kernel's dim may be named device or value now that
// names of CSV columns are free).
type clashFamily struct{ tuneFamily }

func (clashFamily) Name() string { return "test_tune_clash" }
func (clashFamily) Schema() profiler.Schema {
	return profiler.Schema{DTypes: []profiler.DType{profiler.F32},
		Knobs: []profiler.Param{{Name: "value", Values: []int{1, 2}, Default: 1}, {Name: "WG", Values: []int{64, 128}, Default: 64}},
		Dims:  []profiler.Param{{Name: "device", Default: 8, Min: 1, Max: 1 << 30}, {Name: "n", Default: 8, Min: 1, Max: 1 << 30}}}
}

func init() { profiler.Register(clashFamily{}) }

// Such a dim or knob is written dim.device / knob.value and reads back as
// itself, beside the table's device and value columns.
func TestTableCSVWithNamesOfItsColumns(t *testing.T) {
	tb, err := NewTable("test_tune_clash", MedianUS, profiler.DeviceInfo{Name: "Test GPU", Backend: "cuda"}, "v0.9.0", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	tb.Entries = append(tb.Entries, Entry{DType: profiler.F32, Dims: map[string]int{"device": 4096, "n": 77}, Knobs: map[string]int{"value": 2, "WG": 128}, Value: 10, MedianUS: 10})
	var c bytes.Buffer
	if err := tb.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(c.String(), "\n"); head != "kernel,dtype,dim.device,n,knob.value,WG,objective,value,median_us,ci_lo_us,ci_hi_us,tied,device,verdict" {
		t.Errorf("header %s", head)
	}
	path := filepath.Join(t.TempDir(), "table.csv")
	os.WriteFile(path, c.Bytes(), 0o644)
	back, err := ReadTableCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	e := back.Entries[0]
	if e.Dims["device"] != 4096 || e.Dims["n"] != 77 || e.Knobs["value"] != 2 || e.Knobs["WG"] != 128 || back.Device != "Test GPU" || e.Value != 10 {
		t.Errorf("read back %+v, device %q", e, back.Device)
	}
}
