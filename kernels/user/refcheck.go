package user

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/profiler"
)

// PythonRef is the manifest's `check: {python: …}` file, "" when its check
// is another kind.
func (f *Family) PythonRef() string { return f.check.python }

// CheckKind is the kind of the manifest's check: "python", "against",
// "kernel" or "none".
func (f *Family) CheckKind() string { return f.check.kind() }

// RefOutput is one array a Python reference returned.
type RefOutput struct {
	Name  string
	Shape []int
	Descr string // NumPy's dtype string, "<f8"
}

// RefProblem is something wrong with what the reference returned.
type RefProblem struct {
	Error bool // an error (the run would fail), else a warning
	Msg   string
}

// CheckReference runs the Python reference on spec s with inputs from the
// manifest's initialisers (seed 1) and checks what it returned against the
// output buffers: every one present, with the buffer's shape, as numbers
// of a fitting kind. It returns an error when the reference does not run.
// An empty py is the interpreter every reference runs with
// (pyref.Interpreter: $MLTOP_PYTHON, else python3 on the PATH).
func (f *Family) CheckReference(ctx context.Context, py string, s profiler.Spec) ([]RefOutput, []RefProblem, error) {
	if f.check.python == "" {
		return nil, nil, fmt.Errorf("%s has no check: {python: …}", f.path)
	}
	if py == "" {
		var err error
		if py, err = pyref.Interpreter(); err != nil {
			return nil, nil, err
		}
	}
	plan, err := f.Plan(s, profiler.DeviceInfo{Backend: "cpu", Name: "mltop check"})
	if err != nil {
		return nil, nil, err
	}
	in := profiler.Inputs{}
	for _, b := range plan.Buffers {
		if b.Role.Reads() {
			in[b.Name] = profiler.Fill(b, 1)
		}
	}
	e, err := f.env(s)
	if err != nil {
		return nil, nil, err
	}
	call, err := f.pyCall(e, s.DType, 1<<30, 1) // every row of the tiny shape
	if err != nil {
		return nil, nil, err
	}
	shapes := map[string][]int{}
	for _, pb := range call.bufs {
		shapes[pb.b.name] = call.sent(pb)
	}
	start := time.Now()
	outs, err := f.runPythonContext(ctx, py, call, in)
	if err != nil {
		return nil, nil, err
	}
	first := time.Since(start)
	defer outs.Close()
	var got []RefOutput
	var problems []RefProblem
	for _, n := range outs.Names {
		a, err := outs.Read(n)
		if err != nil {
			return got, problems, err
		}
		got = append(got, RefOutput{Name: n, Shape: a.Shape, Descr: a.Descr})
		if bad := nonFinite(a.Data); bad > 0 {
			problems = append(problems, RefProblem{Msg: fmt.Sprintf("%s returned %s with %d NaN or Inf of %d values on this tiny shape, from finite inputs: a run passes only where the kernel gives the same NaN or Inf; unless the kernel should, fix the reference", f.check.python, n, bad, len(a.Data))})
		}
	}
	for _, b := range f.bufs {
		if b.checked() {
			problems = append(problems, f.checkRefOutput(b, got, shapes[b.name])...)
		}
	}
	for _, o := range got {
		if i := slices.IndexFunc(f.bufs, func(b ubuf) bool { return b.name == o.Name && b.scratch }); i >= 0 {
			problems = append(problems, RefProblem{Msg: fmt.Sprintf("%s returned %s, a scratch buffer, which is never compared: it is ignored (drop it from the returned dict)", f.check.python, o.Name)})
			continue
		}
		if i := slices.IndexFunc(f.bufs, func(b ubuf) bool { return b.name == o.Name && b.checked() }); i < 0 {
			problems = append(problems, RefProblem{Msg: fmt.Sprintf("%s returned %s, which is not an output buffer (outputs: %s): it is ignored", f.check.python, o.Name, strings.Join(outNames(f.bufs), ", "))})
		}
	}
	// the wrap probe's runs get the inputs at their ends: index data
	// made so (every tile's range the whole list, gaussian splatting's
	// renderCUDA) can make a reference loop far longer than on the real
	// inputs; a probe past a few times the first run is left unfinished
	pctx, cancel := context.WithTimeout(ctx, wrapProbeFloor+4*first)
	defer cancel()
	if p := f.wrapProblem(pctx, py, call, plan.Buffers, in); p != nil {
		problems = append(problems, *p)
	}
	return got, problems, nil
}

// wrapProbeFloor is the least time each wrap probe's reference gets
// beyond four times the first run's.
var wrapProbeFloor = 3 * time.Second

// narrowInts are the input buffers the reference gets in their own
// integer NumPy type (numpyDTypes: int8, uint8, int16, uint16, uint32).
func (f *Family) narrowInts(c *pyCall) []ubuf {
	var out []ubuf
	for _, pb := range c.bufs {
		if pb.b.reads() && pb.b.dtype.IsInt() && numpyDTypes[pb.b.dtype] != "" {
			out = append(out, pb.b)
		}
	}
	return out
}

// atEnds is in with each of the named inputs set to its smallest and
// largest value in turn (randint's bounds, else the least and greatest
// value it was filled with), so that a wrap shows on any shape, however
// tiny; ends says which values each got ("w: -128, 127").
func atEnds(bufs []profiler.BufferSpec, in profiler.Inputs, names []string) (out profiler.Inputs, ends []string) {
	out = maps.Clone(in)
	for _, b := range bufs {
		vals, ok := in[b.Name]
		if !ok || len(vals) == 0 || !slices.Contains(names, b.Name) {
			continue
		}
		// by value: a buffer's slots may be integer patterns (IntBits)
		lo, hi := profiler.Value(b, vals[0]), profiler.Value(b, vals[0])
		for _, v := range vals {
			lo, hi = min(lo, profiler.Value(b, v)), max(hi, profiler.Value(b, v))
		}
		if b.Init == profiler.InitInts {
			lo, hi = b.Lo, b.Hi-1
		}
		slo, shi := float32(lo), float32(hi)
		if b.Bits() {
			slo, shi = profiler.IntSlot(b, int64(lo)), profiler.IntSlot(b, int64(hi))
		}
		e := make([]float32, len(vals))
		for i := range e {
			e[i] = slo
			if i%2 == 1 {
				e[i] = shi
			}
		}
		out[b.Name] = e
		ends = append(ends, fmt.Sprintf("%s: %.10g, %.10g", b.Name, lo, hi))
	}
	return out, ends
}

// wrapProblem runs the reference twice more, with every input that it
// gets in a narrow integer NumPy type set to that input's ends: once so,
// once as int64; it says where an output then differs. NumPy computes on
// an int8 array in int8 and wraps (an int8 array minus 3 turns -127 into
// 126), where C promotes a narrow integer to int before any arithmetic: a
// reference that dequantizes as (w - zero_point) * scale is wrong in
// nearly every row, and only a GPU run would show it. A reference that
// fails on either run (one that insists on its dtype) is not questioned.
func (f *Family) wrapProblem(ctx context.Context, py string, call *pyCall, bufs []profiler.BufferSpec, in profiler.Inputs) *RefProblem {
	narrow := f.narrowInts(call)
	if len(narrow) == 0 {
		return nil
	}
	var names, typed []string
	for _, b := range narrow {
		names = append(names, b.name)
		typed = append(typed, fmt.Sprintf("%s (%s)", b.name, numpyDTypes[b.dtype]))
	}
	ends, values := atEnds(bufs, in, names)
	outs, err := f.runPythonContext(ctx, py, call, ends)
	if err != nil {
		return nil
	}
	defer outs.Close()
	wide := *call
	wide.wideInts = true
	wouts, err := f.runPythonContext(ctx, py, &wide, ends)
	if err != nil {
		return nil
	}
	defer wouts.Close()
	for _, b := range f.bufs {
		if !b.checked() || !slices.Contains(outs.Names, b.name) || !slices.Contains(wouts.Names, b.name) {
			continue
		}
		a, err := outs.Read(b.name)
		if err != nil {
			continue
		}
		w, err := wouts.Read(b.name)
		if err != nil || !slices.Equal(a.Shape, w.Shape) {
			continue
		}
		for i := range a.Data {
			if x, y := a.Data[i], w.Data[i]; !sameValue(x, y) {
				return &RefProblem{Msg: fmt.Sprintf("%s's %s changes when its integer inputs %s come as int64: with each at its ends (%s), %s is %.9g as sent, %.9g as int64. NumPy computes on narrow integer arrays in their own type and wraps (int8 -127 - 3 is 126), where C promotes them to int first: widen each before arithmetic (inputs[%q].astype(np.int64), or np.float64)",
					f.check.python, b.name, strings.Join(typed, ", "), strings.Join(values, "; "), elemName(b.name, a.Shape, i), x, y, names[0])}
			}
		}
	}
	return nil
}

// sameValue is x == y up to the last bits of float64 (NumPy may take
// another path for int64 operands), NaN equal to NaN.
func sameValue(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	return math.Abs(x-y) <= 1e-12*max(math.Abs(x), math.Abs(y))
}

// elemName writes the element at flat index i of an array of shape as
// "res[1, 2]".
func elemName(name string, shape []int, i int) string {
	idx := make([]string, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = fmt.Sprint(i % shape[k])
			i /= shape[k]
		}
	}
	return name + "[" + strings.Join(idx, ", ") + "]"
}

// checkRefOutput checks the array returned for output buffer b.
func (f *Family) checkRefOutput(b ubuf, got []RefOutput, shape []int) []RefProblem {
	i := slices.IndexFunc(got, func(o RefOutput) bool { return o.Name == b.name })
	if i < 0 {
		var names []string
		for _, o := range got {
			names = append(names, o.Name)
		}
		return []RefProblem{{Error: true, Msg: fmt.Sprintf("%s returned no %s (it returned %s): return a dict with every output buffer (out: true)", f.check.python, b.name, orNothing(names))}}
	}
	o := got[i]
	if !slices.Equal(o.Shape, shape) {
		return []RefProblem{{Error: true, Msg: fmt.Sprintf("%s returned %s with shape %v, but the buffer's shape is %v: return an array of the buffer's shape", f.check.python, b.name, o.Shape, shape)}}
	}
	kind := strings.TrimLeft(o.Descr, "<>|=")
	switch {
	case strings.HasPrefix(kind, "b"):
		return []RefProblem{{Error: true, Msg: fmt.Sprintf("%s returned %s as booleans (%s): return numbers", f.check.python, b.name, o.Descr)}}
	case b.dtype.IsInt() && strings.HasPrefix(kind, "f"):
		return []RefProblem{{Msg: fmt.Sprintf("%s returned %s as %s, but the buffer is %s: return integers", f.check.python, b.name, o.Descr, b.dtype)}}
	case !b.dtype.IsInt() && !strings.HasPrefix(kind, "f"):
		return []RefProblem{{Msg: fmt.Sprintf("%s returned %s as %s (integers), but the buffer holds floats: compute the reference in float64", f.check.python, b.name, o.Descr)}}
	}
	return nil
}

func orNothing(names []string) string {
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// nonFinite counts the NaN and ±Inf values of vs.
func nonFinite(vs []float64) int {
	n := 0
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	return n
}
