package user

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// buffers reads the buffers: names, dtypes, shapes, inits and tolerances.
func (bl *builder) buffers() error {
	f, m, d, seen, vars, names, compile := bl.f, bl.m, bl.d, bl.seen, bl.vars, bl.bufferNames, bl.compile
	if len(m.Buffers) == 0 {
		return d.err("$", "buffers", "no buffers: list the kernel's arrays, e.g. `- {name: X, dtype: T, shape: [rows, cols]}`")
	}
	for i, b := range m.Buffers {
		path, field := fmt.Sprintf("$.buffers[%d]", i), fmt.Sprintf("buffers[%d]", i)
		if !nameRE.MatchString(b.Name) {
			return d.err(path, field+".name", "buffer name %q: use letters, digits and _", b.Name)
		}
		if names[b.Name] || vars[b.Name] != 0 || seen[b.Name] != "" {
			return d.err(path+".name", field+".name", "%s is already used (a buffer, knob, dim or flag): buffer names must be unique", b.Name)
		}
		names[b.Name] = true
		ub := ubuf{name: b.Name, out: b.Out}
		switch b.DType {
		case "", bl.f.dtypeName:
			ub.dtype = ""
		case "i32", "int32":
			ub.dtype = profiler.I32
		default:
			dt, err := profiler.ParseDType(b.DType)
			if err != nil {
				return d.err(path+".dtype", field+".dtype", "%v (or %s for the spec's dtype, or i32)", err, bl.f.dtypeName)
			}
			ub.dtype = dt
		}
		if len(b.Shape) == 0 {
			return d.err(path, field+".shape", "no shape: add e.g. `shape: [rows, cols]`")
		}
		for k, s := range b.Shape {
			p, err := compile(s, fmt.Sprintf("%s.shape[%d]", path, k), fmt.Sprintf("buffers[%s].shape[%d]", b.Name, k))
			if err != nil {
				return err
			}
			ub.shape = append(ub.shape, p)
		}
		init, err := parseInit(b.Init, b.Out, ub.dtype)
		if err != nil {
			return d.err(path+".init", fmt.Sprintf("buffers[%s].init", b.Name), "%v", err)
		}
		ub.init = init
		if b.Tol != nil {
			if !b.Out {
				return d.err(path+".tol", fmt.Sprintf("buffers[%s].tol", b.Name), "only outputs (out: true) are checked: drop tol or mark the buffer out")
			}
			ub.tol = b.Tol
		}
		f.bufs = append(f.bufs, ub)
	}
	if !slices.ContainsFunc(f.bufs, func(b ubuf) bool { return b.out }) {
		return d.err("$.buffers", "buffers", "no output: mark the buffers the kernel writes with `out: true` (they are checked against the reference)")
	}
	return nil
}

type ubuf struct {
	name  string
	dtype profiler.DType // "" = the spec's dtype
	shape []*expr.Program
	init  initSpec
	out   bool
	tol   *tolYAML
}

type initSpec struct {
	kind   profiler.InitKind
	a, b   float64
	source string
}

var initRE = regexp.MustCompile(`^\s*([a-z_]+)\s*(?:\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\))?\s*$`)

func parseInit(s string, out bool, dt profiler.DType) (initSpec, error) {
	if s == "" {
		if out {
			return initSpec{kind: profiler.InitPoison, source: "poison"}, nil
		}
		if dt == profiler.I32 {
			return initSpec{}, errors.New("an i32 input needs an init: e.g. randint(0, 1000) for ids, or arange")
		}
		return initSpec{kind: profiler.InitNormal, b: 1, source: "normal(0, 1)"}, nil
	}
	m := initRE.FindStringSubmatch(s)
	usage := "use normal(mean, std), uniform(lo, hi), randint(lo, hi), zeros, ones, arange or poison"
	if m == nil {
		return initSpec{}, fmt.Errorf("%q: %s", s, usage)
	}
	num := func(x string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q in %q is not a number", x, s)
		}
		return v, nil
	}
	args := 0
	if m[2] != "" {
		args++
	}
	if m[3] != "" {
		args++
	}
	want := map[string]int{"normal": 2, "uniform": 2, "randint": 2, "zeros": 0, "ones": 0, "arange": 0, "poison": 0}
	n, ok := want[m[1]]
	if !ok {
		return initSpec{}, fmt.Errorf("unknown init %q: %s", m[1], usage)
	}
	if args != n {
		return initSpec{}, fmt.Errorf("%s takes %d arguments, got %d in %q: %s", m[1], n, args, s, usage)
	}
	var a, b float64
	var err error
	if n == 2 {
		if a, err = num(m[2]); err != nil {
			return initSpec{}, err
		}
		if b, err = num(m[3]); err != nil {
			return initSpec{}, err
		}
	}
	sp := initSpec{a: a, b: b, source: strings.TrimSpace(s)}
	switch m[1] {
	case "normal":
		if b < 0 {
			return sp, fmt.Errorf("normal(%g, %g): the standard deviation must be ≥ 0", a, b)
		}
		sp.kind = profiler.InitNormal
	case "uniform":
		if b <= a {
			return sp, fmt.Errorf("uniform(%g, %g): want lo < hi", a, b)
		}
		sp.kind = profiler.InitUniform
	case "randint":
		if b <= a || a != float64(int64(a)) || b != float64(int64(b)) {
			return sp, fmt.Errorf("randint(%g, %g): want integers lo < hi (hi excluded)", a, b)
		}
		if dt != profiler.I32 {
			return sp, fmt.Errorf("randint fills integer buffers: give the buffer `dtype: i32`")
		}
		sp.kind = profiler.InitInts
	case "zeros":
		sp.kind = profiler.InitZero
	case "ones":
		sp.kind = profiler.InitOnes
	case "arange":
		sp.kind = profiler.InitArange
	case "poison":
		sp.kind = profiler.InitPoison
	}
	return sp, nil
}

func bufNames(bs []ubuf) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.name
	}
	return out
}
