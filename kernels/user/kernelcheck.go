package user

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// check: {kernel: ../naive/kernel.yaml} compares the outputs against
// another manifest's kernel run at f32 on the same inputs, on the same
// device: a naive version of the same math is often the easiest reference
// to trust. Dims and buffers match by name (or by `map: {yours: theirs}`);
// knobs by name where the other kernel has them, its defaults otherwise.

func (f *Family) parseKernelCheck(k, mm any, read func(string) ([]byte, error)) error {
	d := f.doc
	rel, _ := k.(string)
	if rel == "" {
		return d.err("$.check.kernel", "check.kernel", "want the path of another kernel.yaml (relative to this manifest), e.g. `kernel: ../naive/kernel.yaml`")
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.dir, rel)
	}
	if filepath.Clean(path) == filepath.Clean(f.path) {
		return d.err("$.check.kernel", "check.kernel", "%s is this manifest: name another kernel (a naive version of the same math)", rel)
	}
	src, err := read(path)
	if err != nil {
		return d.err("$.check.kernel", "check.kernel", "cannot read %s: %v: the path is relative to the manifest's folder", path, unwrapPath(err))
	}
	other, err := parse(path, src, read, true)
	if err != nil {
		return d.err("$.check.kernel", "check.kernel", "the check kernel %s does not load: %v", rel, err)
	}
	if other.Name() == f.Name() {
		return d.err("$.check.kernel", "check.kernel", "%s has this kernel's name %s: give the check kernel its own name", rel, f.Name())
	}
	osc := other.Schema()
	if !slices.Contains(osc.DTypes, profiler.F32) {
		return d.err("$.check.kernel", "check.kernel", "%s (%s) does not list f32 in its dtypes: the check kernel runs at f32", other.Name(), rel)
	}
	c := checker{kernel: other, amap: map[string]string{}}
	if m, ok := mm.(map[string]any); ok {
		for u, x := range m {
			s, ok := x.(string)
			if !ok {
				return d.err("$.check.map."+u, "check.map."+u, "want %s's name for %s, got %v", other.Name(), u, x)
			}
			if _, ok := f.vars[u]; !ok && !slices.Contains(bufNames(f.bufs), u) {
				return d.err("$.check.map."+u, "check.map."+u, "%s is not one of your buffers or dims: %s", u, strings.Join(append(bufNames(f.bufs), f.vars.Names()...), ", "))
			}
			c.amap[u] = s
		}
	} else if mm != nil {
		return d.err("$.check.map", "check.map", "want a mapping from your buffer and dim names to %s's", other.Name())
	}
	for _, p := range osc.Dims {
		u, ok := c.userName(p.Name, f)
		if _, isDim := f.schema.Dim(u); !ok || !isDim {
			return d.err("$.check", "check.map", "%s's dim %s has no source: give your kernel a dim %s, or map one of yours to it (map: {yours: %s})", other.Name(), p.Name, p.Name, p.Name)
		}
	}
	for _, b := range f.bufs {
		if !b.checked() {
			continue
		}
		theirs := c.theirName(b.name)
		i := slices.IndexFunc(other.bufs, func(ob ubuf) bool { return ob.name == theirs })
		if i < 0 || !other.bufs[i].checked() {
			return d.err("$.check", "check.map", "your output %s has no output %s in %s (its outputs: %s): name them alike or map yours to one (map: {%s: theirs})", b.name, theirs, other.Name(), strings.Join(outNames(other.bufs), ", "), b.name)
		}
	}
	f.check = c
	return nil
}

func outNames(bs []ubuf) []string {
	var out []string
	for _, b := range bs {
		if b.checked() {
			out = append(out, b.name)
		}
	}
	return out
}

// theirName is the other kernel's name for one of ours: the map, or the same.
func (c checker) theirName(user string) string {
	if t, ok := c.amap[user]; ok {
		return t
	}
	return user
}

var _ profiler.DeviceReference = (*Family)(nil)

// theirInputs are our inputs in (spec dtype dt) under the check kernel's
// names, as slots of its buffers: an integer buffer's values travel as
// 32-bit patterns on one side or both (profiler.BufferSpec.IntBits), so
// each is recoded; a value its buffer does not hold exactly is an error.
func (f *Family) theirInputs(in profiler.Inputs, dt profiler.DType) (profiler.Inputs, error) {
	c := f.check
	out := profiler.Inputs{}
	for _, b := range f.bufs {
		vals, ok := in[b.name]
		if !ok || !b.reads() {
			continue
		}
		theirs := c.theirName(b.name)
		if i := slices.IndexFunc(c.kernel.bufs, func(ob ubuf) bool { return ob.name == theirs }); i >= 0 {
			ours, other := b.slotSpec(dt), c.kernel.bufs[i].slotSpec(profiler.F32)
			var lost int
			if vals, lost = profiler.Recode(ours, other, vals); lost >= 0 {
				return nil, fmt.Errorf("check: kernel %s: your input %s holds %.10g (element %d), which its buffer %s (%s) does not hold exactly: give it your buffer's dtype (%s)", c.kernel.Name(), b.name, profiler.Value(ours, in[b.name][lost]), lost, theirs, other.Type, ours.Type)
			}
		}
		out[theirs] = vals
	}
	return out, nil
}

// DeviceReference runs the check kernel at f32 on the device with this
// spec's inputs and turns its outputs into checks (read at float64
// precision, so an f64 output is compared at f64's tolerance; on a sample
// of rows, with the manifest's tolerances). Other
// checks are answered by Reference.
func (f *Family) DeviceReference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64, runOn profiler.RunOnDevice) (*profiler.Reference, error) {
	c := f.check
	if c.kind() != "kernel" {
		return f.Reference(s, in, maxRows, seed)
	}
	other := c.kernel
	osc := other.Schema()
	e, err := f.env(s)
	if err != nil {
		return nil, err
	}
	ospec, err := c.theirSpec(f, other.Name(), profiler.F32, osc, e)
	if err != nil {
		return nil, fmt.Errorf("check: kernel %s: %w", other.Name(), err)
	}
	var knobNotes []string
	for _, p := range osc.Knobs {
		u, ok := c.userName(p.Name, f)
		if !ok {
			continue
		}
		v, ok := e[u].(int)
		if ok && p.Check(v) == nil {
			ospec.Knobs[p.Name] = v
		} else if ok {
			knobNotes = append(knobNotes, fmt.Sprintf("%s=%d is not allowed there, its default is used", p.Name, v))
		}
	}
	ospec = ospec.WithDefaults(osc)
	oin, err := f.theirInputs(in, s.DType)
	if err != nil {
		return nil, err
	}
	outs, err := runOn(other, ospec, oin)
	if err != nil {
		what := fmt.Sprintf("check: kernel %s (%s) at %s", other.Name(), other.path, ospec)
		if errors.Is(err, profiler.ErrCannotRun) {
			return nil, fmt.Errorf("%s: %w: the check kernel needs a GPU backend, as yours does", what, err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ref := &profiler.Reference{}
	var checked []checkedRows
	for _, b := range f.bufs {
		if !b.checked() {
			continue
		}
		theirs := c.theirName(b.name)
		got, ok := outs[theirs]
		if !ok {
			return nil, fmt.Errorf("check: kernel %s returned no output %s", other.Name(), theirs)
		}
		sh, err := f.shapeOf(b, e)
		if err != nil {
			return nil, err
		}
		n := 1
		for _, x := range sh {
			n *= x
		}
		if len(got) != n {
			return nil, fmt.Errorf("check: kernel %s's output %s has %d elements, your %s has %d (shape %v): the two kernels must compute the same shape", other.Name(), theirs, len(got), b.name, n, sh)
		}
		cols := max(sh[len(sh)-1], 1)
		rows := n / cols
		pick := profiler.SampleRows(rows, maxRows, seed)
		ch := profiler.Check{Buffer: b.name, Tol: f.tolFor(b, s.DType)}
		if len(sh) > 1 { // a mismatch names the element by its indices
			ch.Dims = slices.Clone(sh)
		}
		for _, r := range pick {
			for k := range cols {
				i := r*cols + k
				ch.Index = append(ch.Index, i)
				ch.Want = append(ch.Want, got[i])
			}
		}
		ref.Checks = append(ref.Checks, ch)
		if ref.RowsTotal == 0 {
			ref.RowsTotal, ref.RowsChecked = rows, len(pick)
		}
		checked = append(checked, checkedRows{b.name, rowsChecked(pick, rows, seed), len(ch.Index)})
	}
	ref.Rows = describeChecked(checked, "against "+other.Name()+" at f32")
	if len(knobNotes) > 0 {
		ref.Rows += "; " + strings.Join(knobNotes, "; ")
	}
	err = f.addGrowth(ref, s.DType, e, func() (map[string]func(int) float64, error) {
		sq, err := f.theirInputs(f.squared(in), s.DType)
		if err != nil {
			return nil, err
		}
		souts, err := runOn(other, ospec, sq)
		if err != nil {
			return nil, err
		}
		at := map[string]func(int) float64{}
		for _, b := range f.bufs {
			if vals, ok := souts[c.theirName(b.name)]; ok && b.checked() {
				at[b.name] = func(idx int) float64 { return vals[idx] }
			}
		}
		return at, nil
	})
	return ref, err
}
