package user

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/profiler"
)

type initSpec struct {
	kind   profiler.InitKind
	a, b   float64
	source string
	// outliers of normal(m, s, outliers=f, scale=k)
	outliers, outlierScale float64
	// npy:path: the array read from the file, its shape and path
	data  []float32
	shape []int
	path  string
}

const initUsage = "use normal(mean, std), normal(mean, std, outliers=0.001, scale=50), uniform(lo, hi), randint(lo, hi), zeros, ones, arange, poison, or \"npy:file.npy\""

var initRE = regexp.MustCompile(`^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$`)

// parseInit reads a generated init: `name` or `name(args)`, where args are
// numbers, and (normal only) outliers=f, scale=k by keyword.
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
	if m == nil {
		return initSpec{}, fmt.Errorf("%q: %s", s, initUsage)
	}
	want := map[string]int{"normal": 2, "uniform": 2, "randint": 2, "zeros": 0, "ones": 0, "arange": 0, "poison": 0}
	n, ok := want[m[1]]
	if !ok {
		return initSpec{}, fmt.Errorf("unknown init %q: %s", m[1], initUsage)
	}
	pos, kw, err := initArgs(s, m[2])
	if err != nil {
		return initSpec{}, err
	}
	if len(pos) != n {
		return initSpec{}, fmt.Errorf("%s takes %d arguments, got %d in %q: %s", m[1], n, len(pos), s, initUsage)
	}
	sp := initSpec{source: strings.TrimSpace(s)}
	if n == 2 {
		sp.a, sp.b = pos[0], pos[1]
	}
	if len(kw) > 0 && m[1] != "normal" {
		return sp, fmt.Errorf("%q: only normal takes keyword arguments (outliers=, scale=)", s)
	}
	a, b := sp.a, sp.b
	switch m[1] {
	case "normal":
		if b < 0 {
			return sp, fmt.Errorf("normal(%g, %g): the standard deviation must be ≥ 0", a, b)
		}
		sp.kind = profiler.InitNormal
		return sp, outlierArgs(&sp, s, kw)
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

// initArgs splits an init's argument list into numbers by position and by
// keyword (key=number).
func initArgs(s, list string) (pos []float64, kw map[string]float64, err error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil, nil
	}
	kw = map[string]float64{}
	for _, a := range strings.Split(list, ",") {
		key, val, isKW := strings.Cut(a, "=")
		if !isKW {
			val = key
		}
		v, perr := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if perr != nil || strings.ContainsAny(val, "()") {
			return nil, nil, fmt.Errorf("%q in %q is not a number: %s", strings.TrimSpace(val), s, initUsage)
		}
		if !isKW {
			if len(kw) > 0 {
				return nil, nil, fmt.Errorf("%q: positional argument %s after a keyword one", s, strings.TrimSpace(val))
			}
			pos = append(pos, v)
			continue
		}
		k := strings.TrimSpace(key)
		if _, dup := kw[k]; dup {
			return nil, nil, fmt.Errorf("%q: %s given twice", s, k)
		}
		kw[k] = v
	}
	return pos, kw, nil
}

// outlierArgs applies normal's keywords: outliers (a fraction in [0, 1))
// and scale (what outliers are multiplied by; both or neither).
func outlierArgs(sp *initSpec, s string, kw map[string]float64) error {
	for k := range kw {
		if k != "outliers" && k != "scale" {
			return fmt.Errorf("%q: unknown keyword %s: normal takes outliers= (a fraction) and scale= (their factor)", s, k)
		}
	}
	f, hasF := kw["outliers"]
	k, hasK := kw["scale"]
	if hasF != hasK {
		return fmt.Errorf("%q: give outliers= and scale= together, e.g. normal(0, 1, outliers=0.001, scale=50)", s)
	}
	if !hasF {
		return nil
	}
	if f < 0 || f >= 1 {
		return fmt.Errorf("%q: outliers=%g is the fraction of elements to scale: want 0 ≤ outliers < 1", s, f)
	}
	sp.outliers, sp.outlierScale = f, k
	return nil
}

// npyInitPath is the path of an `npy:path.npy` init.
func npyInitPath(s string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "npy:")
	return strings.TrimSpace(rest), ok
}

// readNPYInit reads an `npy:` init's array (relative to the manifest).
// Its shape is checked against the buffer's at plan time.
func (bl *builder) readNPYInit(rel string) (initSpec, error) {
	if rel == "" || !strings.HasSuffix(rel, ".npy") {
		return initSpec{}, fmt.Errorf("npy:%q: name a .npy file relative to the manifest, e.g. init: \"npy:weights.npy\"", rel)
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(bl.f.dir, rel)
	}
	raw, err := bl.read(path)
	if err != nil {
		return initSpec{}, fmt.Errorf("npy:%s: cannot read %s: %v: the path is relative to the manifest's folder", rel, path, unwrapPath(err))
	}
	a, err := pyref.ReadNPY(bytes.NewReader(raw))
	if err != nil {
		return initSpec{}, fmt.Errorf("npy:%s: %v: save it with numpy.save (a numeric array in C order)", rel, err)
	}
	data := make([]float32, len(a.Data))
	for i, v := range a.Data {
		data[i] = float32(v)
	}
	bl.f.dataPaths = append(bl.f.dataPaths, path)
	return initSpec{kind: profiler.InitData, source: "npy:" + rel, data: data, shape: a.Shape, path: rel}, nil
}

// shapeValues names the values b's shape expressions used: "rows=4, cols=8".
func shapeValues(b ubuf, e map[string]any) string {
	var parts []string
	seen := map[string]bool{}
	for _, p := range b.shape {
		for _, n := range p.Names() {
			if !seen[n] {
				seen[n] = true
				parts = append(parts, fmt.Sprintf("%s=%v", n, e[n]))
			}
		}
	}
	if len(parts) == 0 {
		return "this spec"
	}
	return strings.Join(parts, ", ")
}
