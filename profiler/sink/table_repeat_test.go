package sink

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// TestTableSaysARepeatedReasonOnce: rows that fail for the same reason
// print it once and a count; another reason is printed again.
func TestTableSaysARepeatedReasonOnce(t *testing.T) {
	var b bytes.Buffer
	tab := NewTable(&b)
	row := func(bq int, status profiler.Status, reason string) profiler.Result {
		return profiler.Result{Spec: profiler.Spec{Kernel: "k", DType: profiler.F32, Knobs: map[string]int{"BQ": bq}}, Status: status, Error: reason}
	}
	for i, r := range []profiler.Result{
		row(1, profiler.StatusInvalid, "too big"),
		row(2, profiler.StatusInvalid, "too big"),
		row(3, profiler.StatusInvalid, "too big"),
		row(4, profiler.StatusInvalid, "no such tile"),
		row(5, profiler.StatusOK, ""),
		row(6, profiler.StatusInvalid, "no such tile"),
		row(7, profiler.StatusInvalid, "no such tile"),
	} {
		if err := tab.Write(r); err != nil {
			t.Fatal(i, err)
		}
	}
	tab.Close()
	out := b.String()
	for want, n := range map[string]int{"└ too big": 1, "└ no such tile": 2, "└ the same for the 2 rows above": 1, "└ the same for the row above": 1} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%q %d times, want %d:\n%s", want, got, n, out)
		}
	}
	if !strings.HasSuffix(out, "└ the same for the row above\n") {
		t.Errorf("Close should end with the last count:\n%s", out)
	}
}
