package run

import (
	"fmt"
	"math"

	"github.com/mltop/mltop/profiler"
)

// Verify compares got (decoded device outputs by buffer name) against the
// reference checks.
func Verify(ref *profiler.Reference, got map[string][]float32, tol profiler.Tolerance) profiler.Verdict {
	v := profiler.Verdict{ATol: tol.ATol, RTol: tol.RTol, RowsChecked: ref.RowsChecked, RowsTotal: ref.RowsTotal, Rows: ref.Rows}
	if ref.Unchecked {
		v.Unchecked, v.Pass = true, true
		return v
	}
	var sq float64
	worst := -1.0
	for _, c := range ref.Checks {
		out := got[c.Buffer]
		tol := tol
		if c.Tol != nil {
			tol = *c.Tol
		}
		for k, idx := range c.Index {
			want := c.Want[k]
			if idx >= len(out) {
				v.Mismatches++
				continue
			}
			g := float64(out[idx])
			v.Checked++
			if math.IsNaN(g) || math.IsInf(g, 0) {
				if !(math.IsNaN(want) && math.IsNaN(g)) && !(math.IsInf(want, 0) && g == want) {
					v.NaNInf++
					v.Mismatches++
					if worst < math.Inf(1) {
						worst = math.Inf(1)
						v.Worst = fmt.Sprintf("%s[%d]=%v want %.6g", c.Buffer, idx, g, want)
					}
				}
				continue
			}
			d := math.Abs(g - want)
			sq += d * d
			if d > v.MaxAbsErr {
				v.MaxAbsErr = d
			}
			if aw := math.Abs(want); aw > 0 {
				if r := d / aw; r > v.MaxRelErr && aw > tol.ATol {
					v.MaxRelErr = r
				}
			}
			if d > tol.ATol+tol.RTol*math.Abs(want) {
				v.Mismatches++
			}
			if d > worst {
				worst = d
				v.Worst = fmt.Sprintf("%s[%d]=%.6g want %.6g", c.Buffer, idx, g, want)
			}
		}
	}
	if v.Checked > 0 {
		v.RMSErr = math.Sqrt(sq / float64(v.Checked))
	}
	v.Pass = v.Mismatches == 0 && v.NaNInf == 0 && v.Checked > 0
	return v
}
