package sink

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// A row --race stopped early reads "ok*" and the table ends with the
// footnote; a row stopped for another reason, or a failed row with the
// outpaced reason, is plain and prints no footnote.
func TestTableMarksOutpacedRows(t *testing.T) {
	row := func(bq int, status profiler.Status, stop string) profiler.Result {
		return profiler.Result{Spec: profiler.Spec{Kernel: "k", DType: profiler.F32, Knobs: map[string]int{"BQ": bq}},
			Status: status, StopReason: stop, Stats: profiler.Stats{N: 10, Median: 1000}}
	}
	for _, c := range []struct {
		name       string
		rows       []profiler.Result
		marked     int
		wantFooter bool
	}{
		{"outpaced", []profiler.Result{row(1, profiler.StatusOK, profiler.StopPrecision), row(2, profiler.StatusOK, profiler.StopOutpaced)}, 1, true},
		{"none outpaced", []profiler.Result{row(1, profiler.StatusOK, profiler.StopPrecision), row(2, profiler.StatusOK, profiler.StopTimeLimit)}, 0, false},
		{"a mismatch stopped outpaced", []profiler.Result{row(1, profiler.StatusMismatch, profiler.StopOutpaced)}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			tab := NewTable(&b)
			for _, r := range c.rows {
				if err := tab.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			tab.Close()
			out := b.String()
			if got := strings.Count(out, " ok"+OutpacedMark+" "); got != c.marked {
				t.Errorf("%d rows marked, want %d:\n%s", got, c.marked, out)
			}
			if got := strings.HasSuffix(out, OutpacedFootnote+"\n"); got != c.wantFooter {
				t.Errorf("footnote %v, want %v:\n%s", got, c.wantFooter, out)
			}
		})
	}
	if got := StatusCell(row(1, profiler.StatusOK, profiler.StopOutpaced)); got != "ok*" {
		t.Errorf("StatusCell = %q, want ok*", got)
	}
}
