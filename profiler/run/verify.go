package run

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Verify compares got (decoded device outputs by buffer name) against the
// reference checks. Element k of a check passes when |got−want| ≤
// Check.Bound(k, tol): the elementwise atol + rtol·|want| plus the growth
// term of the computation that formed it (README "Tolerances"). Worst names
// the element with the largest |got−want|/bound, and the bound's parts.
func Verify(ref *profiler.Reference, got map[string][]float32, tol profiler.Tolerance) profiler.Verdict {
	return verifyWith(ref, tol, func(ci, k int) (float32, bool) {
		out, idx := got[ref.Checks[ci].Buffer], ref.Checks[ci].Index[k]
		if idx < 0 || idx >= len(out) {
			return 0, false
		}
		return out[idx], true
	})
}

// verifyWith is Verify with the device's value of element k of check ci
// from value (false: the index is outside its buffer, a mismatch).
func verifyWith(ref *profiler.Reference, tol profiler.Tolerance, value func(ci, k int) (float32, bool)) profiler.Verdict {
	v := profiler.Verdict{ATol: tol.ATol, RTol: tol.RTol, RowsChecked: ref.RowsChecked, RowsTotal: ref.RowsTotal, Rows: ref.Rows}
	if ref.Unchecked {
		v.Unchecked, v.Pass = true, true
		return v
	}
	var sq float64
	worst := -1.0
	for ci := range ref.Checks {
		c := &ref.Checks[ci]
		tol := tol
		if c.Tol != nil {
			tol = *c.Tol
		}
		for k, idx := range c.Index {
			want := c.Want[k]
			gv, ok := value(ci, k)
			if !ok {
				v.Mismatches++
				continue
			}
			g := float64(gv)
			v.Checked++
			if math.IsNaN(g) || math.IsInf(g, 0) {
				if !(math.IsNaN(want) && math.IsNaN(g)) && !(math.IsInf(want, 0) && g == want) {
					v.NaNInf++
					v.Mismatches++
					if worst < math.Inf(1) {
						worst = math.Inf(1)
						v.WorstRatio = math.Inf(1)
						v.Worst = fmt.Sprintf("%s%s=%v want %.9g", c.Buffer, elemName(c, idx), g, want)
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
			bound := c.Bound(k, tol)
			if d > bound {
				v.Mismatches++
			}
			ratio := 0.0
			switch {
			case d == 0:
			case bound > 0:
				ratio = d / bound
			default:
				ratio = math.Inf(1)
			}
			// Rank by the ratio: the element nearest to, or furthest past,
			// its bound (past a zero bound ranks above every finite ratio).
			score := ratio
			if math.IsInf(ratio, 1) {
				score = math.MaxFloat64
			}
			if score > worst {
				worst = score
				v.WorstRatio = ratio
				v.Worst = describeElem(c, k, idx, g, tol, d, bound)
			}
		}
	}
	if v.Checked > 0 {
		v.RMSErr = math.Sqrt(sq / float64(v.Checked))
	}
	v.Pass = v.Mismatches == 0 && v.NaNInf == 0 && v.Checked > 0
	return v
}

// describeElem renders one element against its bound, with enough digits
// to see the difference: `dX[3,17]=-72.54991 want -72.54988 |Δ|=3.1e-05 >
// bound 2.2e-05 (atol 1e-05 + rtol·|want| 0 + growth 1.2e-05 = 2·(0 +
// eps 6e-08·√8192)·mag 1.1, n=8192)`.
func describeElem(c *profiler.Check, k, idx int, g float64, tol profiler.Tolerance, d, bound float64) string {
	want := c.Want[k]
	rel := "≤"
	if d > bound {
		rel = ">"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s=%.9g want %.9g |Δ|=%.2g %s bound %.2g (atol %.2g + rtol·|want| %.2g", c.Buffer, elemName(c, idx), g, want, d, rel, bound, tol.ATol, tol.RTol*math.Abs(want))
	if gr := c.Growth; gr != nil {
		m := gr.Scale
		if gr.Mag != nil {
			m = gr.Mag[k]
		}
		fmt.Fprintf(&b, " + growth %.2g = %g·(%.2g + eps %.2g·√n)·mag %.3g, n=%d", gr.Term(k), float64(profiler.GrowthC), gr.TermEps, gr.Eps, m, max(gr.N, 1))
	}
	b.WriteString(")")
	return b.String()
}

// elemName is "[i,j]" from the check's Dims, or "[flat]".
func elemName(c *profiler.Check, idx int) string {
	if len(c.Dims) == 0 {
		return "[" + strconv.Itoa(idx) + "]"
	}
	parts := make([]string, len(c.Dims))
	rest := idx
	for i := len(c.Dims) - 1; i >= 0; i-- {
		if c.Dims[i] <= 0 {
			return "[" + strconv.Itoa(idx) + "]"
		}
		parts[i] = strconv.Itoa(rest % c.Dims[i])
		rest /= c.Dims[i]
	}
	if rest != 0 {
		return "[" + strconv.Itoa(idx) + "]"
	}
	return "[" + strings.Join(parts, ",") + "]"
}
