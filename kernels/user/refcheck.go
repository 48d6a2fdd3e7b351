package user

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	outs, err := f.runPythonContext(ctx, py, call, in)
	if err != nil {
		return nil, nil, err
	}
	defer outs.Close()
	var got []RefOutput
	var problems []RefProblem
	for _, n := range outs.Names {
		a, err := outs.Read(n)
		if err != nil {
			return got, problems, err
		}
		got = append(got, RefOutput{Name: n, Shape: a.Shape, Descr: a.Descr})
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
	return got, problems, nil
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
