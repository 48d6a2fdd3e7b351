package user

import (
	"fmt"
	"math"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// An output with `terms: N` is a reduction of N terms per element. Its
// bound grows, besides atol + rtol·|want|, by the rounding a correct
// reduction accumulates (profiler.Growth with TermEps 0):
//
//	2 · eps_acc · √N · (|want| + ‖terms‖₂)
//
// ‖terms‖₂ is the square root of the reference applied to the squared
// inputs: exact for sums, dot products and matmuls, whose terms are
// products of one element of each input. `magnitude: want` drops it (for
// references that are not multilinear). eps_acc is f32's unit roundoff,
// or the dtype's with `accumulate: T`.

// needsNorms says whether some output needs ‖terms‖₂ (a second reference
// run on squared inputs).
func (f *Family) needsNorms() bool {
	for _, b := range f.bufs {
		if b.checked() && b.growth != nil && !b.growth.magWant {
			return true
		}
	}
	return false
}

// squared is in with every float input squared (integer ones, such as
// ids, are kept).
func (f *Family) squared(in profiler.Inputs) profiler.Inputs {
	out := profiler.Inputs{}
	for _, b := range f.bufs {
		vals, ok := in[b.name]
		if !ok {
			continue
		}
		if b.dtype.IsInt() {
			out[b.name] = vals
			continue
		}
		sq := make([]float32, len(vals))
		for i, v := range vals {
			sq[i] = v * v
		}
		out[b.name] = sq
	}
	return out
}

// growthFor is the growth of check c of output b (spec dtype dt, env e).
// squares holds, by flat index, the reference's output on squared inputs
// (nil with magnitude: want).
func growthFor(b ubuf, c profiler.Check, dt profiler.DType, e map[string]any, squares func(idx int) float64) (*profiler.Growth, error) {
	g := b.growth
	n, err := reductionLength(b, e)
	if err != nil {
		return nil, err
	}
	acc := profiler.F32
	if g.accT || !g.accF32 && bufferDType(b, dt) == profiler.F64 { // a double output sums in double unless told
		acc = bufferDType(b, dt)
	}
	gr := &profiler.Growth{Eps: kit.Unit(acc), N: int(n), Mag: make([]float64, len(c.Want))}
	if store := bufferDType(b, dt); !g.accT && kit.Unit(store) > gr.Eps {
		// A kernel that sums in its f16/bf16 output type (an mma with an
		// f16 accumulator, __hadd) fails the f32 bound while correct: the
		// verdict says so when that explains every mismatch.
		gr.LowEps = kit.Unit(store)
		gr.LowHint = fmt.Sprintf("every mismatch is within the rounding of a sum in %s: if the kernel sums in %s (an mma with an %s accumulator, __hadd), set `accumulate: T` on buffer %s", store, store, store, b.name)
	}
	for k, w := range c.Want {
		gr.Mag[k] = math.Abs(w)
		if squares != nil {
			gr.Mag[k] += math.Sqrt(math.Abs(squares(c.Index[k])))
		}
	}
	return gr, nil
}

// addGrowth sets the growth of the checks of outputs with terms. squares
// returns the reference's output on squared inputs, by buffer (called only
// when needsNorms).
func (f *Family) addGrowth(ref *profiler.Reference, dt profiler.DType, e map[string]any, squares func() (map[string]func(int) float64, error)) error {
	var sq map[string]func(int) float64
	if f.needsNorms() {
		var err error
		if sq, err = squares(); err != nil {
			return fmt.Errorf("‖terms‖₂ (the reference run on squared inputs, for `terms:`): %w", err)
		}
	}
	for i := range ref.Checks {
		c := &ref.Checks[i]
		for _, b := range f.bufs {
			if b.name != c.Buffer || b.growth == nil {
				continue
			}
			var s func(int) float64
			if !b.growth.magWant {
				if s = sq[b.name]; s == nil {
					return fmt.Errorf("the reference on squared inputs returned no %s", b.name)
				}
			}
			g, err := growthFor(b, *c, dt, e, s)
			if err != nil {
				return err
			}
			c.Growth = g
		}
	}
	return nil
}

// bufferDType is b's element type at spec dtype dt.
func bufferDType(b ubuf, dt profiler.DType) profiler.DType {
	if b.dtype != "" {
		return b.dtype
	}
	return dt
}

// reductionLength is output b's `terms:` at env e; below 1 is an error
// naming the expression and its values. The plan refuses such a spec, so
// `mltop check` says it before a GPU run does.
func reductionLength(b ubuf, e map[string]any) (int64, error) {
	n, err := b.growth.terms.Int(e)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("buffer %s: terms '%s' is %d%s: the reduction length must be ≥ 1; give the number of terms summed into each element (e.g. terms: cols)", b.name, b.growth.terms.Source(), n, forValues(e, b.growth.terms))
	}
	return n, nil
}
