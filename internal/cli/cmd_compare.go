package cli

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
)

const (
	compareSummary = "compare two sweeps' CSVs spec by spec (a regression gate)"
	compareHelp    = `  mltop compare OLD.csv NEW.csv [--threshold 2] [--csv | --markdown] [--outpaced-in-mean]
                                        per spec the change of the median with its 95% interval,
                                        faster/slower/same, a geometric mean per kernel; exit 1
                                        when a spec is slower beyond the threshold (%); rows --race
                                        stopped early are marked * and left out of the means
`
)

type compareArgs struct {
	threshold      float64
	csv, markdown  bool
	outpacedInMean bool
}

func (a *compareArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.Float64Var(&a.threshold, "threshold", 2, "")
	fs.BoolVar(&a.csv, "csv", false, "")
	fs.BoolVar(&a.markdown, "markdown", false, "")
	fs.BoolVar(&a.outpacedInMean, "outpaced-in-mean", false, "")
}

// runCompare is `mltop compare OLD.csv NEW.csv`: exit 1 when a spec got
// slower beyond the threshold, 2 on bad input (a file missing or not an
// mltop CSV, no spec in common), else 0.
func runCompare(_ context.Context, s *session, a *compareArgs, pos []string) error {
	if len(pos) != 2 {
		return badInput("compare takes two CSVs written by sweeps, got %d argument(s): mltop compare old.csv new.csv", len(pos))
	}
	if a.threshold < 0 || a.threshold >= 100 || a.threshold != a.threshold {
		return badInput("--threshold %g: give a percentage from 0 to 100, e.g. --threshold 2", a.threshold)
	}
	if a.csv && a.markdown {
		return badInput("--csv and --markdown both given: pick one output format")
	}
	old, err := readCompareCSV(pos[0])
	if err != nil {
		return err
	}
	cur, err := readCompareCSV(pos[1])
	if err != nil {
		return err
	}
	c := compareResults(old, cur, a.threshold/100)
	if a.outpacedInMean {
		c.Kernels, c.OutpacedInMean = kernelMeans(c.Rows, true), true
	}
	if len(c.Rows) == 0 {
		return badInput("%s and %s have no spec measured in both (%d only in the first, %d only in the second, %d not measured in one): compare two runs of one sweep", pos[0], pos[1], len(c.OnlyOld), len(c.OnlyNew), len(c.Unmeasured))
	}
	switch {
	case a.csv:
		err = writeCompareCSV(s.stdout, c)
	case a.markdown:
		writeCompareMarkdown(s.stdout, c, pos[0], pos[1])
	default:
		writeCompareTable(s.stdout, c, pos[0], pos[1])
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.stderr, "mltop: %s compared: %s (threshold %g%%)\n", profiler.Plural(len(c.Rows), "spec", "specs"), c.counts(), a.threshold)
	if hostTimed(old) || hostTimed(cur) {
		fmt.Fprintln(s.stderr, "mltop: these rows are "+cpuTimingCaveat+": the verdicts check the tool and the sweep, not kernels (docs/measuring.md)")
	}
	if n := c.slower(); n > 0 {
		return &exitError{code: exitFailed, msg: fmt.Sprintf("%s slower than in %s beyond the %g%% threshold", profiler.Plural(n, "spec is", "specs are"), pos[0], a.threshold)}
	}
	return nil
}

// hostTimed says whether any measured row was timed on the CPU backend.
// cpuTimingCaveat is what the CPU backend's times are, said wherever they
// are compared (compare, tune).
const cpuTimingCaveat = "the CPU backend's wall-clock timings of Go code, which share the cores with everything else on the machine (their samples scatter by 10–30%)"

func hostTimed(rows []profiler.Result) bool {
	for _, r := range rows {
		if r.Backend == "cpu" && r.Stats.N > 0 {
			return true
		}
	}
	return false
}

// readCompareCSV reads an mltop CSV; a missing file or one that is not an
// mltop CSV is bad input.
func readCompareCSV(path string) ([]profiler.Result, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, badInput("%s does not exist: give the CSVs of two sweeps (mltop --config sweep.yaml --csv %s)", path, path)
	}
	rows, err := sink.ReadCSV(path)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if len(rows) == 0 {
		return nil, badInput("%s has a header and no rows: nothing to compare", path)
	}
	return rows, nil
}

func writeCompareTable(w io.Writer, c comparison, oldPath, newPath string) {
	fmt.Fprintf(w, "old: %s\nnew: %s\n\n", oldPath, newPath)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(compareHeader, "\t"))
	times := compareTimes(c.Rows)
	for _, r := range sortRows(c.Rows) {
		fmt.Fprintln(tw, strings.Join(compareCells(r, times), "\t"))
	}
	tw.Flush()
	if note := c.outpacedNote(); note != "" {
		fmt.Fprintln(w, note)
	}
	fmt.Fprintln(w, "\ngeometric mean of new/old per kernel:")
	for _, k := range c.Kernels {
		fmt.Fprintf(w, "  %-20s %s (%d slower, %d faster)\n", k.Kernel, meanText(k), k.Slower, k.Faster)
	}
	writeUnmatched(w, c, "  ")
}

// writeUnmatched lists the specs that could not be compared.
func writeUnmatched(w io.Writer, c comparison, indent string) {
	for _, part := range []struct {
		title string
		specs []string
	}{
		{"only in the old file", c.OnlyOld},
		{"only in the new file", c.OnlyNew},
		{"not measured in both (no median)", c.Unmeasured},
	} {
		if len(part.specs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s, %s:\n", profiler.Plural(len(part.specs), "spec", "specs"), part.title)
		for _, s := range part.specs {
			fmt.Fprintf(w, "%s%s\n", indent, s)
		}
	}
}

func writeCompareMarkdown(w io.Writer, c comparison, oldPath, newPath string) {
	fmt.Fprintf(w, "Compared `%s` (old) with `%s` (new): %s, threshold %g%%.\n\n", oldPath, newPath, c.counts(), 100*c.Threshold)
	fmt.Fprintf(w, "%s|%s\n", markdownRow(compareHeader...), strings.Repeat(" --- |", len(compareHeader)))
	times := compareTimes(c.Rows)
	for _, r := range sortRows(c.Rows) {
		cells := compareCells(r, times)
		cells[0] = "`" + cells[0] + "`"
		fmt.Fprint(w, markdownRow(cells...))
	}
	if note := c.outpacedNote(); note != "" {
		fmt.Fprintf(w, "\n%s\n", strings.Replace(note, outpacedMark, `\`+outpacedMark, 1))
	}
	fmt.Fprintln(w, "\n| kernel | specs | geometric mean Δ | slower | faster |\n| --- | --- | --- | --- | --- |")
	for _, k := range c.Kernels {
		mean := "-"
		if k.Specs > 0 {
			mean = pctSigned(k.Delta)
		}
		specs := strconv.Itoa(k.Specs)
		if k.LeftOut > 0 {
			specs += fmt.Sprintf(" (+%d outpaced)", k.LeftOut)
		}
		fmt.Fprint(w, markdownRow(k.Kernel, specs, mean, strconv.Itoa(k.Slower), strconv.Itoa(k.Faster)))
	}
	writeUnmatched(w, c, "- ")
}

// markdownRow is one row of a GitHub (GFM) table, ending in a newline.
// GFM splits a row at every | that is not escaped, inside backticks too,
// so a spec's "| rows=256" is written "\| rows=256" (shown as |).
func markdownRow(cells ...string) string {
	escaped := make([]string, len(cells))
	for i, c := range cells {
		escaped[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(escaped, " | ") + " |\n"
}

// writeCompareCSV writes one row per compared spec; relative columns are
// percentages; the verdict stays the last column.
func writeCompareCSV(w io.Writer, c comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel", "spec", "cache", "old_median_us", "new_median_us", "delta_pct", "lo_pct", "hi_pct", "outpaced", "verdict"})
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 3, 64) }
	us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 3, 64) }
	for _, r := range c.Rows {
		lo, hi := "", ""
		if r.HasCI {
			lo, hi = pct(r.Lo), pct(r.Hi)
		}
		cw.Write([]string{r.Spec.Kernel, r.Spec.String(), string(r.Cache), us(r.Old), us(r.New), pct(r.Delta), lo, hi, strconv.FormatBool(r.Outpaced), r.Verdict})
	}
	cw.Flush()
	return cw.Error()
}
