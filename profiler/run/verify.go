package run

import (
	"fmt"
	"math"
	"slices"
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
	return verifyWith(ref, tol, func(ci int) checkView {
		out := got[ref.Checks[ci].Buffer]
		return checkView{vals: out, elems: int64(len(out))}
	})
}

// checkView is the device's values of one check: by buffer index, or
// (aligned) vals[k] for the check's element k; elems is the buffer's
// length (an index outside it is a mismatch). fill, when set, sets
// vals[lo:hi] before those elements are compared (decoding on the cores
// that compare).
type checkView struct {
	vals    []float32
	vals64  []float64 // instead of vals, for values float32 cannot hold (profiler.DType.Wide)
	aligned bool
	elems   int64
	fill    func(lo, hi int)
}

// at is the device's value of element k of the check, at buffer index idx.
func (cv *checkView) at(k, idx int) float64 {
	if !cv.aligned {
		k = idx
	}
	if cv.vals64 != nil {
		return cv.vals64[k]
	}
	return float64(cv.vals[k])
}

// verifyChunk is how many elements one goroutine compares: a 256-row check
// of a 4096-wide output (1 M elements) took 40 ms on one core.
const verifyChunk = 1 << 16

// verifyWith is Verify with each check's values from view.
func verifyWith(ref *profiler.Reference, tol profiler.Tolerance, view func(ci int) checkView) profiler.Verdict {
	v := profiler.Verdict{ATol: tol.ATol, RTol: tol.RTol, RowsChecked: ref.RowsChecked, RowsTotal: ref.RowsTotal, Rows: ref.Rows}
	if ref.Unchecked {
		v.Unchecked, v.Pass = true, true
		return v
	}
	var total tally
	total.worst = -1
	for ci := range ref.Checks {
		c := &ref.Checks[ci]
		ctol := tol
		if c.Tol != nil {
			ctol = *c.Tol
		}
		v.Growth = v.Growth || c.Growth != nil
		cv := view(ci)
		parts := make([]tally, (len(c.Index)+verifyChunk-1)/verifyChunk)
		parallelChunks(len(c.Index), verifyChunk, 0, false, func(lo, hi int) {
			if cv.fill != nil {
				cv.fill(lo, hi)
			}
			parts[lo/verifyChunk] = compareRange(c, ci, cv, ctol, lo, hi)
		})
		for _, p := range parts {
			total.add(p)
		}
	}
	v.Checked, v.Mismatches, v.NaNInf = total.checked, total.mismatches, total.nanInf
	v.MaxAbsErr, v.MaxRelErr = total.maxAbs, total.maxRel
	if total.worst >= 0 {
		w := total.at
		c := &ref.Checks[w.ci]
		ctol := tol
		if c.Tol != nil {
			ctol = *c.Tol
		}
		v.WorstRatio = w.ratio
		v.ATol, v.RTol = ctol.ATol, ctol.RTol // the summary names the worst output's bound
		if w.nanInf {
			v.Worst = fmt.Sprintf("%s%s=%v want %.9g", c.Buffer, elemName(c, c.Index[w.k]), w.g, c.Want[w.k])
		} else {
			v.Worst = describeElem(c, w.k, c.Index[w.k], w.g, ctol, w.d, w.bound)
		}
	}
	if v.Checked > 0 {
		v.RMSErr = math.Sqrt(total.sq / float64(v.Checked))
	}
	v.Pass = v.Mismatches == 0 && v.NaNInf == 0 && v.Checked > 0
	if !v.Pass && total.mismatches > 0 && total.lowExplained == total.mismatches {
		v.Hint = strings.Join(total.lowHints, "; ")
	}
	return v
}

// mismatchText is a failed verdict as a result's error says it: how many
// elements are outside their bound, the bound's parts (growth only where
// an output has it) and the worst element.
func mismatchText(v profiler.Verdict) string {
	growth := ""
	if v.Growth {
		growth = " + growth"
	}
	return fmt.Sprintf("%d of %d checked elements outside their bound atol %.3g + rtol %.3g·|ref|%s (%d NaN/Inf); worst %s", v.Mismatches, v.Checked, v.ATol, v.RTol, growth, v.NaNInf, v.Worst)
}

// tally is a verdict over some elements; at is its worst element.
type tally struct {
	checked, mismatches, nanInf int
	// lowExplained counts the mismatches within their bound at the
	// check's Growth.LowEps; lowHints are those checks' LowHints, each once.
	lowExplained       int
	lowHints           []string
	sq, maxAbs, maxRel float64
	worst              float64 // the worst element's score; -1: none yet
	at                 worstElem
}

type worstElem struct {
	ci, k       int
	g, d, bound float64
	ratio       float64
	nanInf      bool
}

// add merges q into t; on equal scores the earlier element (t's) stays.
func (t *tally) add(q tally) {
	t.checked += q.checked
	t.mismatches += q.mismatches
	t.nanInf += q.nanInf
	t.lowExplained += q.lowExplained
	for _, h := range q.lowHints {
		if !slices.Contains(t.lowHints, h) {
			t.lowHints = append(t.lowHints, h)
		}
	}
	t.sq += q.sq
	t.maxAbs = max(t.maxAbs, q.maxAbs)
	t.maxRel = max(t.maxRel, q.maxRel)
	if q.worst > t.worst {
		t.worst, t.at = q.worst, q.at
	}
}

// compareRange compares elements [lo, hi) of check c.
func compareRange(c *profiler.Check, ci int, cv checkView, tol profiler.Tolerance, lo, hi int) tally {
	t := tally{worst: -1}
	var low *profiler.Growth // the check's growth at LowEps, when it has one
	if g := c.Growth; g != nil && g.LowEps > g.Eps {
		low = g.WithEps(g.LowEps)
	}
	for k := lo; k < hi; k++ {
		idx, want := c.Index[k], c.Want[k]
		if idx < 0 || int64(idx) >= cv.elems {
			t.mismatches++
			continue
		}
		g := cv.at(k, idx)
		t.checked++
		if math.IsNaN(g) || math.IsInf(g, 0) {
			if !(math.IsNaN(want) && math.IsNaN(g)) && !(math.IsInf(want, 0) && g == want) {
				t.nanInf++
				t.mismatches++
				if t.worst < math.Inf(1) { // a NaN or Inf ranks above every ratio
					t.worst = math.Inf(1)
					t.at = worstElem{ci: ci, k: k, g: g, ratio: math.Inf(1), nanInf: true}
				}
			}
			continue
		}
		d := math.Abs(g - want)
		t.sq += d * d
		// Compared, not max(): a NaN (a finite value against a NaN, or
		// the relative error against an Inf) is left out, as Verify
		// always did.
		if d > t.maxAbs {
			t.maxAbs = d
		}
		if aw := math.Abs(want); aw > 0 && aw > tol.ATol {
			if r := d / aw; r > t.maxRel {
				t.maxRel = r
			}
		}
		bound := c.Bound(k, tol)
		if d > bound {
			t.mismatches++
			if low != nil && d <= bound-c.Growth.Term(k)+low.Term(k) {
				t.lowExplained++
				if len(t.lowHints) == 0 {
					t.lowHints = []string{c.Growth.LowHint}
				}
			}
		}
		ratio := 0.0
		switch {
		case d == 0:
		case bound > 0:
			ratio = d / bound
		default:
			ratio = math.Inf(1)
		}
		// Rank by the ratio: the element nearest to, or furthest past, its
		// bound (past a zero bound ranks above every finite ratio).
		score := min(ratio, math.MaxFloat64)
		if score > t.worst {
			t.worst = score
			t.at = worstElem{ci: ci, k: k, g: g, d: d, bound: bound, ratio: ratio}
		}
	}
	return t
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
	gs, ws := digits(g, want)
	fmt.Fprintf(&b, "%s%s=%s want %s |Δ|=%.2g %s bound %.2g (atol %.2g + rtol·|want| %.2g", c.Buffer, elemName(c, idx), gs, ws, d, rel, bound, tol.ATol, tol.RTol*math.Abs(want))
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

// digits writes got and want with 9 significant digits, or 17 where 9
// would write two different values alike (an f64 output).
func digits(g, want float64) (string, string) {
	gs, ws := fmt.Sprintf("%.9g", g), fmt.Sprintf("%.9g", want)
	if gs == ws && g != want {
		gs, ws = fmt.Sprintf("%.17g", g), fmt.Sprintf("%.17g", want)
	}
	return gs, ws
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
