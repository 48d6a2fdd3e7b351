package user

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// checker is what a manifest's `check:` says.
type checker struct {
	python  string // path of ref.py
	against profiler.Family
	kernel  *Family           // check: {kernel: other.yaml}, run at f32 on the device
	amap    map[string]string // user name → built-in family's (or the other kernel's) name
	none    bool
	skipped bool // a nested manifest's check, not loaded
	// rowsIndependent: `rows: independent`, only the checked rows of the
	// leading dimension reach the Python reference.
	rowsIndependent bool
}

func (c checker) kind() string {
	switch {
	case c.python != "":
		return "python"
	case c.against != nil:
		return "against"
	case c.kernel != nil:
		return "kernel"
	case c.skipped:
		return "skipped"
	}
	return "none"
}

func (c checker) files() []string {
	if c.python != "" {
		return []string{c.python}
	}
	if c.kernel != nil {
		return c.kernel.Files()
	}
	return nil
}

func (f *Family) parseCheck(read func(string) ([]byte, error)) error {
	d := f.doc
	switch v := f.m.Check.(type) {
	case nil:
		return d.err("$", "check", "no check: add `check: {python: ref.py}`, `check: {against: <built-in family>, map: {...}}` or `check: none` (runs are then `unchecked`)")
	case string:
		if v != "none" {
			return d.err("$.check", "check", "%q: write `check: none`, or a mapping such as `check: {python: ref.py}`", v)
		}
		f.check = checker{none: true}
		return nil
	case map[string]any:
		var keys []string
		checkKeys := []string{"python", "against", "map", "kernel", "rows"}
		for k := range v {
			keys = append(keys, k)
			if !slices.Contains(checkKeys, k) {
				return d.err("$.check."+k, "check."+k, "unknown key %q: %scheck has python, against (+ map) or kernel, and rows", k, profiler.DidYouMean(k, checkKeys))
			}
		}
		if n := len(keys) - btoi(v["map"] != nil) - btoi(v["rows"] != nil); n != 1 {
			return d.err("$.check", "check", "give exactly one of python, against or kernel, got %s", strings.Join(slices.Sorted(slices.Values(keys)), ", "))
		}
		if p, ok := v["python"]; ok {
			s, _ := p.(string)
			path := filepath.Join(f.dir, s)
			if s == "" {
				return d.err("$.check.python", "check.python", "want the path of a Python file defining reference(inputs, dims)")
			}
			if _, err := os.Stat(path); err != nil {
				return d.err("$.check.python", "check.python", "cannot read %s: %v: the path is relative to the manifest's folder", path, unwrapPath(err))
			}
			f.check = checker{python: path}
			switch r := v["rows"]; r {
			case nil:
			case "independent":
				f.check.rowsIndependent = true
			default:
				return d.err("$.check.rows", "check.rows", "rows: %v: the one value is `independent` (each row of the leading dimension is computed from the same rows of the inputs, so only the checked rows reach Python)", r)
			}
			return nil
		}
		if v["rows"] != nil {
			return d.err("$.check.rows", "check.rows", "rows: independent applies to `python:` references only")
		}
		if k, ok := v["kernel"]; ok {
			if f.nested {
				f.check = checker{skipped: true}
				return nil
			}
			return f.parseKernelCheck(k, v["map"], read)
		}
		name, _ := v["against"].(string)
		fam, err := profiler.Lookup(name)
		if err != nil || fam == nil {
			return d.err("$.check.against", "check.against", "%v", err)
		}
		if _, isUser := fam.(*Family); isUser {
			return d.err("$.check.against", "check.against", "%s is a user kernel: against names a built-in family (its float64 reference is reused)", name)
		}
		c := checker{against: fam, amap: map[string]string{}}
		if mm, ok := v["map"].(map[string]any); ok {
			for k, x := range mm {
				s, ok := x.(string)
				if !ok {
					return d.err("$.check.map."+k, "check.map."+k, "want the built-in family's name for %s, got %v", k, x)
				}
				c.amap[k] = s
			}
		} else if v["map"] != nil {
			return d.err("$.check.map", "check.map", "want a mapping from your buffer and dim names to %s's", name)
		}
		// Every output must map to one of the family's checked buffers, every
		// family dim must get a value.
		sc := fam.Schema()
		for _, p := range sc.Dims {
			if _, ok := c.userName(p.Name, f); !ok {
				return d.err("$.check", "check.map", "%s's dim %s has no source: map one of your dims or knobs to it (map: {yours: %s})", name, p.Name, p.Name)
			}
		}
		for user := range c.amap {
			if _, ok := f.vars[user]; !ok && !slices.Contains(bufNames(f.bufs), user) {
				return d.err("$.check.map."+user, "check.map."+user, "%s is not one of your buffers or dims: %s", user, strings.Join(append(bufNames(f.bufs), f.vars.Names()...), ", "))
			}
		}
		f.check = c
		return nil
	}
	return d.err("$.check", "check", "want `none` or a mapping, got %v", f.m.Check)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// userName finds the user's name for a built-in family's name: the map, or
// the same name.
func (c checker) userName(builtin string, f *Family) (string, bool) {
	for u, b := range c.amap {
		if b == builtin {
			return u, true
		}
	}
	if _, ok := f.vars[builtin]; ok {
		return builtin, true
	}
	if slices.Contains(bufNames(f.bufs), builtin) {
		return builtin, true
	}
	return "", false
}

// theirSpec starts the spec of the family a check runs (name, schema sc,
// at dtype dt) from the user's values e (env): each of its dims from the
// user dim or knob it maps to (userName), each of its flags that maps to a
// user flag. Knobs are left to the caller, which treats them as its check
// needs. The error names the first dim that maps to nothing.
func (c checker) theirSpec(f *Family, name string, dt profiler.DType, sc profiler.Schema, e map[string]any) (profiler.Spec, error) {
	s := profiler.Spec{Kernel: name, DType: dt, Knobs: map[string]int{}, Dims: map[string]int{}, Flags: map[string]bool{}}
	for _, p := range sc.Dims {
		u, _ := c.userName(p.Name, f)
		v, ok := e[u].(int)
		if !ok {
			return s, fmt.Errorf("its dim %s maps to %s, which is not one of your dims or knobs", p.Name, u)
		}
		s.Dims[p.Name] = v
	}
	for _, fl := range sc.Flags {
		if u, ok := c.userName(fl.Name, f); ok {
			if v, ok := e[u].(bool); ok {
				s.Flags[fl.Name] = v
			}
		}
	}
	return s, nil
}

// Reference runs the manifest's check.
func (f *Family) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	switch f.check.kind() {
	case "kernel":
		return nil, fmt.Errorf("check: kernel %s runs on the device, and this runner offers none", f.check.kernel.path)
	case "skipped":
		return nil, fmt.Errorf("%s was loaded as another manifest's check kernel: its own check is not loaded", f.path)
	case "none":
		return &profiler.Reference{Unchecked: true, Rows: "unchecked (check: none)"}, nil
	case "against":
		return f.referenceAgainst(s, in, maxRows, seed)
	}
	return f.referencePython(s, in, maxRows, seed)
}

// tolFor is output b's tolerance at spec dtype dt: its `tol:` over the
// defaults of its own dtype (an f32 output of a bf16 kernel is held to
// f32's, an integer output compares exactly, an f64 one at f64's
// accuracy), or nil for the family's default.
func (f *Family) tolFor(b ubuf, dt profiler.DType) *profiler.Tolerance {
	_, known := profiler.DefaultTolerances[b.dtype]
	own := b.dtype != "" && b.dtype != dt && known
	if own {
		dt = b.dtype
	}
	if b.tol == nil {
		if !own {
			return nil
		}
		t := profiler.DefaultTolerances[dt]
		return &t
	}
	t := profiler.DefaultTolerances[dt]
	set := func(a, r *float64) {
		if a != nil {
			t.ATol = *a
		}
		if r != nil {
			t.RTol = *r
		}
	}
	set(b.tol.ATol, b.tol.RTol)
	if p := map[profiler.DType]*tolPair{profiler.F32: b.tol.F32, profiler.F16: b.tol.F16, profiler.BF16: b.tol.BF16}[dt]; p != nil {
		set(p.ATol, p.RTol)
	}
	return &t
}

func (f *Family) referenceAgainst(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	c := f.check
	fam := c.against
	sc := fam.Schema()
	e, err := f.env(s)
	if err != nil {
		return nil, err
	}
	bs, err := c.theirSpec(f, fam.Name(), s.DType, sc, e)
	if err != nil {
		return nil, fmt.Errorf("check against %s: %w", fam.Name(), err)
	}
	for _, p := range sc.Knobs {
		if u, ok := c.userName(p.Name, f); ok {
			if v, ok := e[u].(int); ok {
				bs.Knobs[p.Name] = v
			}
		}
	}
	bs = bs.WithDefaults(sc)
	bin := profiler.Inputs{}
	back := map[string]string{}
	for _, b := range f.bufs {
		name := b.name
		if m, ok := c.amap[b.name]; ok {
			name = m
		}
		back[name] = b.name
		if v, ok := in[b.name]; ok && !b.scratch {
			if sp := b.slotSpec(s.DType); sp.Bits() {
				// built-in families read their integer inputs (ids,
				// targets) as float values: exact within 2^24
				fv, err := floatValues(sp, v, fam.Name())
				if err != nil {
					return nil, err
				}
				v = fv
			}
			bin[name] = v
		}
	}
	ref, err := fam.Reference(bs, bin, maxRows, seed)
	if err != nil {
		return nil, fmt.Errorf("%s's reference (check: against): %w", fam.Name(), err)
	}
	out := *ref
	out.Checks = nil
	for _, ch := range ref.Checks {
		u, ok := back[ch.Buffer]
		if !ok {
			return nil, fmt.Errorf("%s's reference checks its buffer %s, which none of your buffers maps to: add `map: {yours: %s}` under check", fam.Name(), ch.Buffer, ch.Buffer)
		}
		if i := slices.IndexFunc(f.bufs, func(b ubuf) bool { return b.name == u }); i >= 0 && f.bufs[i].scratch {
			return nil, fmt.Errorf("%s's reference checks its buffer %s, which is your scratch buffer %s: scratch is never compared, so map an output to it instead", fam.Name(), ch.Buffer, u)
		}
		ch.Buffer = u
		if i := slices.IndexFunc(f.bufs, func(b ubuf) bool { return b.name == u }); i >= 0 {
			if t := f.tolFor(f.bufs[i], s.DType); t != nil {
				ch.Tol = t
			}
		}
		out.Checks = append(out.Checks, ch)
	}
	return &out, nil
}

// floatValues are the values of b's integer patterns as float32, for
// fam's reference, which reads them so; an error names a value beyond
// 2^24, which float32 would round.
func floatValues(b profiler.BufferSpec, vals []float32, fam string) ([]float32, error) {
	out := make([]float32, len(vals))
	for i, v := range vals {
		x := profiler.IntValue(b, v)
		if x > 1<<24 || x < -1<<24 {
			return nil, fmt.Errorf("check against %s: input %s holds %d (element %d), and %s's reference reads its inputs as float32, exact only within ±2^24 = 16777216: keep %s's values within it (e.g. a smaller randint bound), or check with a Python reference (check: {python: ref.py})", fam, b.Name, x, i, fam, b.Name)
		}
		out[i] = float32(x)
	}
	return out, nil
}

func (f *Family) shapeOf(b ubuf, e map[string]any) ([]int, error) {
	var out []int
	for _, p := range b.shape {
		v, err := p.Int(e)
		if err != nil {
			return nil, err
		}
		out = append(out, int(v))
	}
	return out, nil
}
