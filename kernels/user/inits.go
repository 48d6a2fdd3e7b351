package user

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

type initSpec struct {
	kind   profiler.InitKind
	fn     string         // normal, uniform, randint, …
	dt     profiler.DType // the buffer's fixed type ("" for the spec's dtype)
	a, b   float64
	source string
	// args are the positional arguments that are expressions of the spec
	// (`randint(0, V)`), evaluated per spec by values; nil entries (and a
	// nil slice) are the constants a and b.
	args []*expr.Program
	// outliers of normal(m, s, outliers=f, scale=k)
	outliers, outlierScale float64
	// npy:path: the array read from the file, its shape and path
	data  []float32
	shape []int
	path  string
}

const initUsage = "use normal(mean, std), normal(mean, std, outliers=0.001, scale=50), uniform(lo, hi), randint(lo, hi), zeros, ones, arange, poison, or \"npy:file.npy\"; arguments may be expressions of the dims, knobs and values, e.g. randint(0, V)"

var initRE = regexp.MustCompile(`^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$`)

// argCompiler compiles an init argument that is not a number: its text
// and its offset in the init string.
type argCompiler func(src string, off int) (*expr.Program, error)

// parseInit reads a generated init: `name` or `name(args)`. Positional
// args are numbers or expressions (compiled by compile); normal's
// keywords outliers=f, scale=k are numbers.
func parseInit(s string, out bool, dt profiler.DType, compile argCompiler) (initSpec, error) {
	if s == "" {
		if out {
			return initSpec{kind: profiler.InitPoison, fn: "poison", source: "poison"}, nil
		}
		if dt.IsInt() {
			return initSpec{}, fmt.Errorf("an integer (%s) input needs an init: e.g. randint(0, V) for ids below a dim V, or arange", dt)
		}
		return initSpec{kind: profiler.InitNormal, fn: "normal", b: 1, source: "normal(0, 1)"}, nil
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
	sp := initSpec{source: strings.TrimSpace(s), fn: m[1], dt: dt}
	pos, kw, err := initArgs(s, m[2], strings.Index(s, "(")+1, compile)
	if err != nil {
		return sp, err
	}
	if len(pos) != n {
		return sp, fmt.Errorf("%s takes %d arguments, got %d in %q: %s", m[1], n, len(pos), s, initUsage)
	}
	if len(kw) > 0 && m[1] != "normal" {
		return sp, fmt.Errorf("%q: only normal takes keyword arguments (outliers=, scale=)", s)
	}
	for _, a := range pos {
		if a.p != nil {
			sp.args = make([]*expr.Program, n)
			break
		}
	}
	for i, a := range pos {
		if a.p != nil {
			sp.args[i] = a.p
		}
	}
	if n == 2 {
		sp.a, sp.b = pos[0].v, pos[1].v
	}
	switch m[1] {
	case "normal":
		sp.kind = profiler.InitNormal
		if err := outlierArgs(&sp, s, kw); err != nil {
			return sp, err
		}
	case "uniform":
		sp.kind = profiler.InitUniform
	case "randint":
		// on a float buffer: integers as floats (rounded to the dtype),
		// so a reference's sums and distances of them are exact (a ball
		// query's neighbours, nearest-neighbour indices without ties
		// decided by rounding)
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
	if sp.args != nil {
		return sp, nil // checked per spec, by values
	}
	return sp, sp.checkArgs(sp.a, sp.b)
}

// checkArgs checks the two arguments of normal, uniform and randint.
func (sp initSpec) checkArgs(a, b float64) error {
	switch sp.fn {
	case "normal":
		if b < 0 {
			return fmt.Errorf("normal(%g, %g): the standard deviation must be ≥ 0", a, b)
		}
	case "uniform":
		if b <= a {
			return fmt.Errorf("uniform(%g, %g): want lo < hi", a, b)
		}
		// uniform draws floats, truncated into an integer buffer: only
		// the type's range matters (its values are what the host made)
		if err := typeHolds(sp.dt, a, b); err != nil {
			return fmt.Errorf("uniform(%g, %g): %v", a, b, err)
		}
	case "randint":
		if b <= a || a != math.Trunc(a) || b != math.Trunc(b) {
			return fmt.Errorf("randint(%g, %g): want integers lo < hi (hi excluded)", a, b)
		}
		if err := exactInts(sp.dt, a, b-1); err != nil {
			return fmt.Errorf("randint(%.0f, %.0f): %v", a, b, err)
		}
	}
	return nil
}

// slotBits says whether a buffer of type dt with init kind carries its
// integers' 32-bit patterns on the host (profiler.BufferSpec.IntBits), so
// that every value is exact: i32, u32, i64 and u64 buffers, with every
// init but normal and uniform (whose draws stay floats).
func slotBits(dt profiler.DType, kind profiler.InitKind) bool {
	_, _, ok := profiler.BitsRange(dt)
	return ok && kind != profiler.InitNormal && kind != profiler.InitUniform
}

// slotSpec is what reads b's host values (profiler.IntValue, Value):
// its name, type (dt: the spec's, for a buffer of the spec's dtype),
// init and IntBits. The plan's BufferSpec of b has the same.
func (b ubuf) slotSpec(dt profiler.DType) profiler.BufferSpec {
	if b.dtype != "" {
		dt = b.dtype
	}
	return profiler.BufferSpec{Name: b.name, Role: b.role(), Type: dt, Init: b.init.kind, IntBits: slotBits(dt, b.init.kind)}
}

// exactInts says why the integers from lo to hi cannot fill a buffer of
// type dt exactly (nil if they can): outside an integer type's range or
// an fp8 type's finite range they would saturate (typeHolds); an i64 or
// u64 buffer's values travel as 32-bit patterns on the host, so they
// must lie within int32's or uint32's range (profiler.BitsRange). An
// i32 or u32 buffer holds every value of its type exactly.
func exactInts(dt profiler.DType, lo, hi float64) error {
	if err := typeHolds(dt, lo, hi); err != nil {
		return err
	}
	blo, bhi, ok := profiler.BitsRange(dt)
	if !ok || (lo >= float64(blo) && hi <= float64(bhi)) {
		return nil
	}
	what, hint := "int32", ""
	if blo == 0 {
		what = "uint32"
	} else if lo >= 0 && hi <= math.MaxUint32 {
		hint = fmt.Sprintf(", or give the buffer `dtype: u64` (exact from 0 to %d)", uint32(math.MaxUint32))
	}
	return fmt.Errorf("%s values reach %.0f, but mltop keeps %s %s buffer's values exactly only within %s's range, %d to %d (they travel as 32-bit patterns on the host): keep them within it%s", dt, outside(lo, hi, float64(blo), float64(bhi)), article(dt), dt, what, blo, bhi, hint)
}

// typeHolds says why values from lo to hi do not fit a buffer of type
// dt (nil if they do): outside an integer type's range or an fp8 type's
// finite range they would saturate.
func typeHolds(dt profiler.DType, lo, hi float64) error {
	if dt.IsFP8() {
		m := float64(dt.Round(float32(math.Inf(1)))) // the largest finite value
		if lo < -m || hi > m {
			return fmt.Errorf("%s holds finite values up to ±%g, and %g is out of that range: scale the values down (larger ones would saturate)", dt, m, outside(lo, hi, -m, m))
		}
		return nil
	}
	tlo, thi, ok := dt.IntRange()
	switch {
	case !ok:
		return nil
	case tlo == 0 && lo < 0:
		return fmt.Errorf("a %s buffer holds no negative value (%.0f): make the values ≥ 0, or give the buffer a signed dtype (%s)", dt, lo, signedTwin[dt])
	case tlo < 0 && lo >= 0 && hi <= 2*thi+1 && hi > thi:
		// the unsigned range of the same width: every bit pattern of the
		// word (packed int4 weights in an int*, hashes); a wider dtype
		// would not fit the parameter
		return fmt.Errorf("%s %s buffer holds %s to %s, and %.0f is out of that range: for every bit pattern of its words (packed values, hashes) draw randint(%s, %s), the same patterns as signed values; else keep the values within the range", article(dt), dt, intText(tlo), intText(thi), outside(lo, hi, tlo, thi), intText(tlo), intText(thi+1))
	case lo < tlo || hi > thi:
		return fmt.Errorf("%s %s buffer holds %s to %s, and %.0f is out of that range: keep the values within it, or give the buffer a wider dtype", article(dt), dt, intText(tlo), intText(thi), outside(lo, hi, tlo, thi))
	}
	return nil
}

// signedTwin is the signed type of an unsigned one's width.
var signedTwin = map[profiler.DType]profiler.DType{profiler.U8: profiler.I8, profiler.U16: profiler.I16, profiler.U32: profiler.I32, profiler.U64: profiler.I64}

// intText writes an integer type's bound exactly (float64 rounds 2^64−1).
func intText(v float64) string {
	switch {
	case v >= 0x1p64:
		return strconv.FormatUint(math.MaxUint64, 10)
	case v >= 0x1p63:
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// article is "an" before i8…i64, else "a".
func article(dt profiler.DType) string {
	if strings.HasPrefix(string(dt), "i") {
		return "an"
	}
	return "a"
}

// outside is the end of [lo, hi] that lies outside [tlo, thi].
func outside(lo, hi, tlo, thi float64) float64 {
	if lo < tlo {
		return lo
	}
	return hi
}

// values are the two arguments for the spec whose expression environment
// is e: the constants, or the expressions evaluated and checked. An error
// names the init, the values it got and the names they came from.
func (sp initSpec) values(e map[string]any) (a, b float64, err error) {
	a, b = sp.a, sp.b
	if sp.args == nil {
		return a, b, nil
	}
	var used []*expr.Program
	for i, p := range sp.args {
		if p == nil {
			continue
		}
		v, err := p.Float(e)
		if err != nil {
			return 0, 0, fmt.Errorf("init %s: %v", sp.source, err)
		}
		if i == 0 {
			a = v
		} else {
			b = v
		}
		used = append(used, p)
	}
	if err := sp.checkArgs(a, b); err != nil {
		return 0, 0, fmt.Errorf("init %s is %v%s: make it valid for every spec (a rule, or the dims' min)", sp.source, err, forValues(e, used...))
	}
	return a, b, nil
}

// initArg is one positional argument: a number v, or an expression p.
type initArg struct {
	v float64
	p *expr.Program
}

// initArgs splits an init's argument list (at offset off in s) at its
// top-level commas into positional arguments (numbers or expressions)
// and keyword numbers (key=number).
func initArgs(s, list string, off int, compile argCompiler) (pos []initArg, kw map[string]float64, err error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil, nil
	}
	kw = map[string]float64{}
	for _, piece := range splitTopLevel(list) {
		text := strings.TrimSpace(piece.text)
		if km := keywordRE.FindStringSubmatch(text); km != nil {
			v, perr := strconv.ParseFloat(strings.TrimSpace(km[2]), 64)
			if perr != nil {
				return nil, nil, fmt.Errorf("%q in %q is not a number: %s= takes a number", strings.TrimSpace(km[2]), s, km[1])
			}
			if _, dup := kw[km[1]]; dup {
				return nil, nil, fmt.Errorf("%q: %s given twice", s, km[1])
			}
			kw[km[1]] = v
			continue
		}
		if len(kw) > 0 {
			return nil, nil, fmt.Errorf("%q: positional argument %s after a keyword one", s, text)
		}
		if v, perr := strconv.ParseFloat(text, 64); perr == nil {
			pos = append(pos, initArg{v: v})
			continue
		}
		if text == "" || compile == nil {
			return nil, nil, fmt.Errorf("%q in %q is not a number: %s", text, s, initUsage)
		}
		lead := len(piece.text) - len(strings.TrimLeft(piece.text, " \t"))
		p, cerr := compile(text, off+piece.off+lead)
		if cerr != nil {
			return nil, nil, cerr
		}
		pos = append(pos, initArg{p: p})
	}
	return pos, kw, nil
}

// keywordRE is `key = value` (not `a == b`).
var keywordRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*=([^=].*)$`)

// listPiece is one comma-separated part of a list and its byte offset.
type listPiece struct {
	text string
	off  int
}

// splitTopLevel splits list at the commas outside parentheses, so that
// `0, min(V, 100)` is two arguments.
func splitTopLevel(list string) []listPiece {
	var out []listPiece
	depth, start := 0, 0
	for i, r := range list {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, listPiece{list[start:i], start})
				start = i + 1
			}
		}
	}
	return append(out, listPiece{list[start:], start})
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
func (bl *builder) readNPYInit(rel string, dt profiler.DType) (initSpec, error) {
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
	lo, hi := 0.0, 0.0
	for _, v := range a.Data {
		lo, hi = min(lo, v), max(hi, v)
	}
	if err := exactInts(dt, lo, hi); err != nil {
		return initSpec{}, fmt.Errorf("npy:%s: %v", rel, err)
	}
	// An i32, u32, i64 or u64 buffer gets its integers' patterns (exact:
	// the array was read at float64), any other the values as float32.
	slots := profiler.BufferSpec{Type: dt, Init: profiler.InitData, IntBits: slotBits(dt, profiler.InitData)}
	data := make([]float32, len(a.Data))
	for i, v := range a.Data {
		switch {
		case slots.Bits() && math.IsNaN(v):
			data[i] = profiler.IntSlot(slots, 0) // as Round stores NaN in an integer type
		case slots.Bits():
			data[i] = profiler.IntSlot(slots, int64(v)) // within BitsRange: checked above
		default:
			data[i] = float32(v)
		}
	}
	bl.f.dataPaths = append(bl.f.dataPaths, path)
	return initSpec{kind: profiler.InitData, source: "npy:" + rel, data: data, shape: a.Shape, path: rel}, nil
}

// shapeValues names the values b's shape expressions used: "rows=4, cols=8".
func shapeValues(b ubuf, e map[string]any) string {
	if s := valuesOf(e, b.shape...); s != "" {
		return s
	}
	return "this spec"
}
