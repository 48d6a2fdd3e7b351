package user

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// pyBuf is one buffer as the Python reference sees it.
type pyBuf struct {
	b     ubuf
	shape []int // the whole buffer's
	rowed bool  // rows: independent sends only the picked rows of it
}

// pyCall is one Python reference of a spec: the buffers, the rows picked
// (of the leading dimension with rows: independent, else of the flattened
// [elements/cols, cols] view of each output) and the dims.
type pyCall struct {
	bufs     []pyBuf
	dims     map[string]any
	dt       profiler.DType // the spec's
	lead     int            // rows: independent: the outputs' leading extent
	leadExpr string         // and its expression
	pick     []int          // rows: independent: the rows sent
	wideInts bool           // send every integer input as int64, none in its own NumPy type
}

func (f *Family) referencePython(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	py, err := pyref.Interpreter()
	if err != nil {
		return nil, err
	}
	e, err := f.env(s)
	if err != nil {
		return nil, err
	}
	call, err := f.pyCall(e, s.DType, maxRows, seed)
	if err != nil {
		return nil, err
	}
	if !f.check.rowsIndependent {
		f.warnPythonBytes(call)
	}
	outs, err := f.runPython(py, call, in)
	if err != nil {
		return nil, err
	}
	defer outs.Close()
	ref, _, err := f.pythonChecks(outs, call, maxRows, seed)
	if err != nil {
		return nil, err
	}
	err = f.addGrowth(ref, s.DType, e, func() (map[string]func(int) float64, error) {
		sq, err := f.runPython(py, call, f.squared(in))
		if err != nil {
			return nil, err
		}
		defer sq.Close()
		_, at, err := f.pythonChecks(sq, call, maxRows, seed)
		return at, err
	})
	return ref, err
}

func (f *Family) pyCall(e map[string]any, dt profiler.DType, maxRows int, seed uint64) (*pyCall, error) {
	c := &pyCall{dims: map[string]any{"dtype": string(dt)}, dt: dt}
	for k, v := range e {
		if k != f.dtypeName() {
			c.dims[k] = v
		}
	}
	f.roundHalfValues(c.dims, dt)
	for _, b := range f.bufs {
		sh, err := f.shapeOf(b, e)
		if err != nil {
			return nil, err
		}
		c.bufs = append(c.bufs, pyBuf{b: b, shape: sh})
		if c.lead == 0 && b.checked() {
			c.lead, c.leadExpr = sh[0], leadingExpr(b)
		}
	}
	if f.check.rowsIndependent {
		c.pick = profiler.SampleRows(c.lead, maxRows, seed)
		for i := range c.bufs {
			// a buffer whose leading dimension is the outputs' one, by its
			// expression: a weight of [hidden] beside outputs of [tokens,
			// hidden] is whole at tokens == hidden too; a global is
			// whole-kernel data
			b := c.bufs[i]
			c.bufs[i].rowed = b.shape[0] == c.lead && leadingExpr(b.b) == c.leadExpr && b.b.symbol == nil
		}
	}
	return c, nil
}

// leadingExpr is the expression of b's leading extent, without spaces.
func leadingExpr(b ubuf) string {
	if len(b.shape) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(b.shape[0].Source()), "")
}

// sent is the shape buffer pb has in Python.
func (c *pyCall) sent(pb pyBuf) []int {
	sh := slices.Clone(pb.shape)
	if pb.rowed {
		sh[0] = len(c.pick)
	}
	return sh
}

// rowSize is the elements in one row of the leading dimension of shape.
func rowSize(shape []int) int {
	n := 1
	for _, x := range shape[1:] {
		n *= x
	}
	return n
}

func (f *Family) runPython(py string, c *pyCall, in profiler.Inputs) (*pyref.Outputs, error) {
	return f.runPythonContext(context.Background(), py, c, in)
}

// runPythonContext is runPython, stopped when ctx is done.
func (f *Family) runPythonContext(ctx context.Context, py string, c *pyCall, in profiler.Inputs) (*pyref.Outputs, error) {
	var inputs []pyref.Input
	for _, pb := range c.bufs {
		if !pb.b.reads() {
			continue
		}
		n := 1
		for _, x := range pb.shape {
			n *= x
		}
		vals := in[pb.b.name]
		if vals == nil {
			vals = make([]float32, n) // zero-initialised inputs are not in the runner's cache
		}
		if len(vals) != n {
			return nil, fmt.Errorf("input %s has %d values, its shape %v holds %d", pb.b.name, len(vals), pb.shape, n)
		}
		if pb.rowed {
			rs := rowSize(pb.shape)
			part := make([]float32, 0, len(c.pick)*rs)
			for _, r := range c.pick {
				part = append(part, vals[r*rs:(r+1)*rs]...)
			}
			vals = part
		}
		np := numpyDTypes[pb.b.dtype]
		if c.wideInts && pb.b.dtype.IsInt() {
			np = ""
		}
		in := pyref.Input{Name: pb.b.name, Shape: c.sent(pb), Data: vals, Int: pb.b.dtype.IsInt(), NumPy: np}
		if sp := pb.b.slotSpec(c.dt); sp.Bits() {
			// integer patterns (i32, u32, i64, u64): the exact values
			in.Ints = make([]int64, len(vals))
			for i, v := range vals {
				in.Ints[i] = profiler.IntValue(sp, v)
			}
		}
		inputs = append(inputs, in)
	}
	return pyref.RunContext(ctx, py, f.check.python, c.dims, inputs)
}

// pythonChecks compares the sampled rows of each output buffer with the
// array the Python reference returned for it. It also returns, per
// output, the returned value at a flat index of the whole buffer (for
// the checked elements).
func (f *Family) pythonChecks(outs *pyref.Outputs, call *pyCall, maxRows int, seed uint64) (*profiler.Reference, map[string]func(int) float64, error) {
	ref := &profiler.Reference{}
	at := map[string]func(int) float64{}
	var checked []checkedRows
	for _, pb := range call.bufs {
		b := pb.b
		if !b.checked() {
			continue
		}
		if !slices.Contains(outs.Names, b.name) {
			return nil, nil, fmt.Errorf("check: python: %s returned no %s (it returned %s): return a dict with every output buffer (out: true or inout: true)", f.check.python, b.name, strings.Join(outs.Names, ", "))
		}
		a, err := outs.Read(b.name)
		if err != nil {
			return nil, nil, err
		}
		want := call.sent(pb)
		if !slices.Equal(a.Shape, want) {
			if pb.rowed && len(a.Shape) > 0 && slices.Equal(a.Shape[1:], want[1:]) {
				return nil, nil, fmt.Errorf("check: python: %s returned %d rows of %s, but was sent %d (rows: independent): return one row per row of the inputs it got", f.check.python, a.Shape[0], b.name, want[0])
			}
			return nil, nil, fmt.Errorf("check: python: %s returned %s with shape %v (dtype %s), but the buffer's shape is %v: return an array of the buffer's shape", f.check.python, b.name, a.Shape, a.Descr, want)
		}
		ch, pos := f.outputCheck(pb, call, a.Data, maxRows, seed)
		data := a.Data
		at[b.name] = func(idx int) float64 { return data[pos(idx)] }
		if ref.RowsTotal == 0 {
			ref.RowsTotal, ref.RowsChecked = ch.rows, len(ch.pick)
		}
		checked = append(checked, checkedRows{b.name, rowsChecked(ch.pick, ch.rows, seed), len(ch.Index)})
		ref.Checks = append(ref.Checks, ch.Check)
	}
	ref.Rows = describeChecked(checked, "python reference")
	return ref, at, nil
}

type outCheck struct {
	profiler.Check
	rows int
	pick []int
}

// outputCheck picks the checked elements of output pb from data (what
// Python returned) and says where a flat index of the whole buffer lies in
// data.
func (f *Family) outputCheck(pb pyBuf, call *pyCall, data []float64, maxRows int, seed uint64) (outCheck, func(int) int) {
	ch := outCheck{Check: profiler.Check{Buffer: pb.b.name, Tol: f.tolFor(pb.b, call.dt)}}
	if len(pb.shape) > 1 { // a mismatch names the element as y[35,96], not y[4576]
		ch.Dims = slices.Clone(pb.shape)
	}
	if pb.rowed {
		rs := rowSize(pb.shape)
		ch.rows, ch.pick = pb.shape[0], call.pick
		where := map[int]int{}
		for k, r := range call.pick {
			where[r] = k
			for c := range rs {
				ch.Index = append(ch.Index, r*rs+c)
				ch.Want = append(ch.Want, data[k*rs+c])
			}
		}
		return ch, func(idx int) int { return where[idx/rs]*rs + idx%rs }
	}
	cols := max(pb.shape[len(pb.shape)-1], 1)
	ch.rows = len(data) / cols
	ch.pick = profiler.SampleRows(ch.rows, maxRows, seed)
	for _, r := range ch.pick {
		for c := range cols {
			ch.Index = append(ch.Index, r*cols+c)
			ch.Want = append(ch.Want, data[r*cols+c])
		}
	}
	return ch, func(idx int) int { return idx }
}

// pythonBytesWarn is the float64 exchange above which a reference without
// rows: independent is warned about.
const pythonBytesWarn = 1 << 30

var warned sync.Map // manifest path + shape → true: warn once

// pythonBytes is what Python receives and returns, in float64 bytes
// (scratch buffers, neither sent nor returned, are not counted).
func (c *pyCall) pythonBytes() int64 {
	var t int64
	for _, pb := range c.bufs {
		if !pb.b.reads() && !pb.b.checked() {
			continue
		}
		n := int64(1)
		for _, x := range c.sent(pb) {
			n *= int64(x)
		}
		t += 8 * n
	}
	return t
}

// pythonNote is the warning about a large exchange, "" below the limit.
func (f *Family) pythonNote(c *pyCall) string {
	if f.check.rowsIndependent || c.pythonBytes() <= pythonBytesWarn {
		return ""
	}
	return fmt.Sprintf("check: python: %s receives and returns %s of float64 arrays for this shape: if each output row depends only on the same rows of the inputs, add `rows: independent` under check so that only the checked rows are sent", f.check.python, units.Bytes(c.pythonBytes()))
}

func (f *Family) warnPythonBytes(c *pyCall) {
	note := f.pythonNote(c)
	if note == "" {
		return
	}
	if _, dup := warned.LoadOrStore(f.path+"|"+note, true); !dup {
		fmt.Fprintln(os.Stderr, "mltop: warning: "+note)
	}
}

// numpyDTypes are the NumPy dtypes of the buffer types that reach Python
// in their own type (the others: integers as int64, floats as float64).
// An fp8 buffer reaches it as float32 values of the fp8 grid (NumPy has no
// fp8 type).
var numpyDTypes = map[profiler.DType]string{
	profiler.I8: "int8", profiler.U8: "uint8", profiler.I16: "int16", profiler.U16: "uint16", profiler.U32: "uint32",
	profiler.FP8E4M3: "float32", profiler.FP8E5M2: "float32",
}
