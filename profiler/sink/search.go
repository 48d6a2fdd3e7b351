package sink

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// SearchStepColumn holds where a row stands in a search: "12" for the
// search's 12th measurement, "12@1/9" for one measured with a ninth of the
// time limit (successive halving), "final" for a contender's
// re-measurement, empty for a row no search asked for. Only CSVs written
// by a search have it (Columns.Search).
const SearchStepColumn = "search_step"

var searchStepColumn = Column{SearchStepColumn, func(r *profiler.Result) string { return EncodeSearchMark(r.Search) },
	func(r *profiler.Result, cell string) error {
		m, err := DecodeSearchMark(cell)
		if err != nil {
			return err
		}
		r.Search = m
		return nil
	}}

// EncodeSearchMark renders m as the search_step cell ("" for nil).
func EncodeSearchMark(m *profiler.SearchMark) string {
	switch {
	case m == nil:
		return ""
	case m.Final:
		return "final"
	case m.Fidelity <= 0 || m.Fidelity >= 1:
		return strconv.Itoa(m.Step)
	}
	if inv := 1 / m.Fidelity; math.Abs(inv-math.Round(inv)) < 1e-9 {
		return fmt.Sprintf("%d@1/%d", m.Step, int(math.Round(inv)))
	}
	return fmt.Sprintf("%d@%s", m.Step, strconv.FormatFloat(m.Fidelity, 'g', -1, 64))
}

// DecodeSearchMark reads a search_step cell.
func DecodeSearchMark(cell string) (*profiler.SearchMark, error) {
	if cell == "" {
		return nil, nil
	}
	if cell == "final" {
		return &profiler.SearchMark{Final: true, Fidelity: 1}, nil
	}
	bad := fmt.Errorf("%q is not a search step: mltop writes a step number (12), a brief one (12@1/9) or final", cell)
	step, fid, brief := strings.Cut(cell, "@")
	n, err := strconv.Atoi(step)
	if err != nil || n < 1 {
		return nil, bad
	}
	m := &profiler.SearchMark{Step: n, Fidelity: 1}
	if !brief {
		return m, nil
	}
	if num, den, ok := strings.Cut(fid, "/"); ok {
		a, err1 := strconv.ParseFloat(num, 64)
		b, err2 := strconv.Atoi(den)
		if err1 != nil || err2 != nil || b < 1 {
			return nil, bad
		}
		m.Fidelity = a / float64(b)
	} else if m.Fidelity, err = strconv.ParseFloat(fid, 64); err != nil {
		return nil, bad
	}
	if !(m.Fidelity > 0 && m.Fidelity <= 1) {
		return nil, bad
	}
	return m, nil
}
