package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
)

// Outpaced rows stay out of a kernel's geometric mean unless asked; a
// kernel whose every row is outpaced has no mean.
func TestKernelMeansLeaveOutpacedOut(t *testing.T) {
	row := func(kernel string, delta float64, outpaced bool) compareRow {
		return compareRow{Spec: profiler.Spec{Kernel: kernel}, Delta: delta, Outpaced: outpaced, Verdict: verdictSame}
	}
	rows := []compareRow{row("a", 0.10, false), row("a", 1.00, true), row("b", 0.50, true)}
	for _, c := range []struct {
		name         string
		withOutpaced bool
		want         []kernelMean
	}{
		{"left out", false, []kernelMean{{Kernel: "a", Specs: 1, Delta: 0.10, LeftOut: 1}, {Kernel: "b", LeftOut: 1}}},
		{"counted", true, []kernelMean{{Kernel: "a", Specs: 2, Delta: math.Sqrt(1.1*2) - 1}, {Kernel: "b", Specs: 1, Delta: 0.50}}},
	} {
		got := kernelMeans(rows, c.withOutpaced)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %+v, want %+v", c.name, got, c.want)
		}
		for i, w := range c.want {
			g := got[i]
			if g.Kernel != w.Kernel || g.Specs != w.Specs || g.LeftOut != w.LeftOut || math.Abs(g.Delta-w.Delta) > 1e-12 {
				t.Errorf("%s: %+v, want %+v", c.name, g, w)
			}
		}
	}
	if got := meanText(kernelMeans(rows, false)[1]); !strings.Contains(got, "every one outpaced") || !strings.Contains(got, "1 outpaced left out") {
		t.Errorf("meanText of an all-outpaced kernel: %q", got)
	}
}

// mltop compare marks an outpaced row (in either file) with *, says so
// under the table and leaves it out of the mean by default; with
// --outpaced-in-mean it counts; --csv and --markdown carry it too.
func TestCompareMarksOutpacedRows(t *testing.T) {
	old, _, spec := tightPair(t, 1.0)
	rows, err := sink.ReadCSV(old)
	if err != nil {
		t.Fatal(err)
	}
	// the new file: one spec 50 % slower, stopped early by --race
	st := &rows[2].Stats
	st.Min, st.P10, st.Median, st.P90, st.CILo, st.CIHi = st.Min*1.5, st.P10*1.5, st.Median*1.5, st.P90*1.5, st.CILo*1.5, st.CIHi*1.5
	rows[2].StopReason = profiler.StopOutpaced
	raced := filepath.Join(t.TempDir(), "raced.csv")
	if err := sink.WriteCSVFile(raced, rows); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runMain(t, "compare", old, raced)
	var marked string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, spec) {
			marked = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(marked), verdictSlower+"*") {
		t.Errorf("the outpaced row is not marked: %q\n%s", marked, out)
	}
	kernel := rows[2].Spec.Kernel
	for _, want := range []string{"* outpaced (--race) in one file", "left out of the geometric means (1 spec; --outpaced-in-mean counts them)", kernel, "+0.0% over", "1 outpaced left out"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	_, counted, _ := runMain(t, "compare", "--outpaced-in-mean", old, raced)
	if strings.Contains(counted, "left out") || !strings.Contains(counted, "counted in the geometric means") || strings.Contains(meanLine(counted, kernel), "+0.0%") {
		t.Errorf("--outpaced-in-mean:\n%s", counted)
	}
	_, csvOut, _ := runMain(t, "compare", "--csv", old, raced)
	if !strings.Contains(csvOut, ",outpaced,verdict\n") || strings.Count(csvOut, ",true,slower\n") != 1 {
		t.Errorf("--csv:\n%s", csvOut)
	}
	_, md, _ := runMain(t, "compare", "--markdown", old, raced)
	if !strings.Contains(md, "| slower* |") || !strings.Contains(md, `\* outpaced`) || !strings.Contains(md, "(+1 outpaced)") {
		t.Errorf("--markdown:\n%s", md)
	}
}

// meanLine is the geometric-mean line of kernel in compare's table.
func meanLine(out, kernel string) string {
	_, means, _ := strings.Cut(out, "geometric mean of new/old per kernel:")
	for _, l := range strings.Split(means, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), kernel+" ") {
			return l
		}
	}
	return ""
}
