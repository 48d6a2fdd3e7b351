package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// checkedRows is what a reference checks of one output: its rows, in
// words (profiler.DescribeRows), and how many elements.
type checkedRows struct {
	buffer string
	rows   string
	elems  int
}

// rowsChecked is profiler.DescribeRows, or "all" for an output of one
// row (a 1-D output is one row).
func rowsChecked(pick []int, total int, seed uint64) string {
	if total == 1 && len(pick) == 1 {
		return "all"
	}
	return profiler.DescribeRows(pick, total, seed)
}

// describeChecked is a reference's Rows: which rows of which outputs it
// checks, then source ("python reference"). With several outputs each
// names its element count, so that a summary's total adds up:
// "all 128 rows of y (16384 elements) and of z (8192 elements) (python
// reference)"; outputs whose rows differ each say theirs.
func describeChecked(parts []checkedRows, source string) string {
	switch len(parts) {
	case 0:
		return source
	case 1:
		return parts[0].rows + " of " + parts[0].buffer + " (" + source + ")"
	}
	items := make([]string, len(parts))
	for i, p := range parts {
		item := "of " + p.buffer + " (" + profiler.Plural(p.elems, "element", "elements") + ")"
		if i == 0 || p.rows != parts[i-1].rows {
			item = p.rows + " " + item
		}
		items[i] = item
	}
	last := len(items) - 1
	return fmt.Sprintf("%s and %s (%s)", strings.Join(items[:last], ", "), items[last], source)
}
