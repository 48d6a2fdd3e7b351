package sink

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestWriteReport(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  profiler.Report
		want string
	}{
		{"empty", nil, ""},
		{"text only", profiler.Report{{Text: "a\n"}, {Text: "b\n"}}, "a\nb\n"},
		{"table right-aligned", profiler.Report{{Text: "T\n", Table: [][]string{{"D", "Speedup"}, {"128", "0.67x"}}}},
			"T\n    D  Speedup\n  128    0.67x\n"},
		{"text after a table", profiler.Report{{Table: [][]string{{"x"}}}, {Text: "end\n"}}, "  x\nend\n"},
	} {
		var b strings.Builder
		if err := WriteReport(&b, c.rep); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, b.String(), c.want)
		}
	}
}
