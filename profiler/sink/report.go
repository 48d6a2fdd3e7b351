package sink

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mltop/mltop/profiler"
)

// WriteReport prints a family's report: each section's text as it is, then
// its table with the columns right-aligned two spaces apart.
func WriteReport(w io.Writer, rep profiler.Report) error {
	for _, sec := range rep {
		if _, err := io.WriteString(w, sec.Text); err != nil {
			return err
		}
		if len(sec.Table) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for _, row := range sec.Table {
			// Each cell ends in a tab: AlignRight aligns only terminated cells.
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
