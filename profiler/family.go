package profiler

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Tolerance is the pass criterion |got-want| <= ATol + RTol*|want|.
type Tolerance struct {
	ATol, RTol float64
}

// Tolerances per dtype, used by families that have no reason to differ.
// f32: accumulation-order differences only. f16: 10 mantissa bits (unit
// roundoff 4.9e-4) with outputs rounded once. bf16: 7 mantissa bits (unit
// roundoff 3.9e-3) on inputs and outputs. f64: accumulation-order
// differences at f64's unit roundoff 1.1e-16. fp8: the output's rounding
// to either neighbour, one step of the grid at the bottom of a binade
// (2⁻³ for e4m3, 2⁻² for e5m2; atol near the smallest subnormal): a kernel
// that forms the value in float32 and a float64 reference round a value
// near a tie differently (sgl-kernel's per-token fp8 quantize, 448 = 2⁸·1.75:
// 288 against 256 or 320). Integer outputs compare exactly.
var DefaultTolerances = map[DType]Tolerance{
	F32:     {ATol: 1e-5, RTol: 1e-4},
	F16:     {ATol: 1e-3, RTol: 5e-3},
	BF16:    {ATol: 8e-3, RTol: 2e-2},
	F64:     {ATol: 1e-13, RTol: 1e-12},
	FP8E4M3: {ATol: 0x1p-9, RTol: 0x1p-3},
	FP8E5M2: {ATol: 0x1p-16, RTol: 0x1p-2},
	I8:      {}, U8: {}, I16: {}, U16: {}, I32: {}, U32: {}, I64: {}, U64: {},
}

// Check is one output buffer's expected values at chosen flat indices.
type Check struct {
	Buffer string
	Index  []int
	Want   []float64
	// Tol, when set, replaces the family's tolerance for this buffer (e.g.
	// an f32 logsumexp next to a bf16 output is held to f32 accuracy).
	Tol *Tolerance
	// Growth, when set, widens each element's bound by the rounding a
	// correct kernel accumulates forming it (see Growth and README
	// "Tolerances"); nil for an output that is copied or formed exactly.
	Growth *Growth
	// Dims, when set, is the buffer's shape: a mismatch then names the
	// element as [i,j,...] instead of its flat index.
	Dims []int
}

// GrowthC is the safety factor of the growth term: the bound allows
// GrowthC times the expected rounding of a correct kernel.
const GrowthC = 2

// Growth is the computation behind a Check's outputs: element k was formed
// from terms whose absolute values sum to Mag[k] (or Scale when Mag is
// nil), by a reduction of N terms in arithmetic of unit roundoff Eps, each
// term formed with relative error TermEps (a product rounded to a 16-bit
// intermediate, an approximate exp). The bound of element k grows by
//
//	GrowthC · (TermEps + Eps·√N) · Mag[k]
//
// √N is the growth of the random rounding of a sum of N terms (a worst
// case would be N; correct GPU reductions, which sum per thread and then
// in a tree, stay well below √N·Eps·Σ|terms|).
type Growth struct {
	Eps     float64
	TermEps float64
	N       int
	Mag     []float64
	Scale   float64
	// LowEps, when above Eps, is the unit roundoff of a cheaper
	// accumulation the kernel may use instead (a sum in the output's f16
	// or bf16, as an mma with an f16 accumulator does). When every
	// mismatch of a verdict would pass at LowEps, the verdict says so in
	// its Hint, with LowHint: what the user sets to declare it.
	LowEps  float64
	LowHint string
}

// WithEps is g summing in unit roundoff eps.
func (g *Growth) WithEps(eps float64) *Growth {
	h := *g
	h.Eps = eps
	return &h
}

// Term is the growth of element k's bound.
func (g *Growth) Term(k int) float64 {
	if g == nil {
		return 0
	}
	m := g.Scale
	if g.Mag != nil {
		m = g.Mag[k]
	}
	return GrowthC * (g.TermEps + g.Eps*math.Sqrt(float64(max(g.N, 1)))) * m
}

// Bound is the largest |got−want| element k of c may have under tol: the
// elementwise atol + rtol·|want| plus the computation's growth term.
func (c *Check) Bound(k int, tol Tolerance) float64 {
	return tol.ATol + tol.RTol*math.Abs(c.Want[k]) + c.Growth.Term(k)
}

// Reference is the float64 answer for a sample of rows.
type Reference struct {
	Checks      []Check
	RowsChecked int
	RowsTotal   int
	Rows        string // which rows, in words ("all 8192 rows", "64 of 1048576 rows, seed 1")
	// Unchecked says there is nothing to compare against (a user kernel
	// with `check: none`): the run's status is unchecked, never ok.
	Unchecked bool
}

// Inputs are the host copies of the input buffers after rounding to their
// dtype, which is what the device sees.
type Inputs map[string][]float32

// Family is one kernel design: what it lets a user set, how it plans a
// spec, and the float64 math it must match.
type Family interface {
	Name() string
	Doc() string
	Schema() Schema
	// Validate applies the family's rules beyond the schema (tile
	// divisibility, thread counts, TGM against the device limit).
	Validate(s Spec, dev DeviceInfo) error
	// Plan builds the plan of s for dev. s has been resolved (defaults,
	// schema) and validated for dev (run.Prepare does both): Plan does
	// not validate again. Its plan may be shared: callers never change it.
	Plan(s Spec, dev DeviceInfo) (*Plan, error)
	// Reference computes expected outputs in float64 for at most maxRows
	// rows, chosen deterministically from seed.
	Reference(s Spec, in Inputs, maxRows int, seed uint64) (*Reference, error)
	Tolerance(d DType) Tolerance
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Family{}
)

// Register adds a family; kernels/ calls it from init. Registering a name
// twice is a programming error.
func Register(f Family) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[f.Name()]; dup {
		panic("profiler: family registered twice: " + f.Name())
	}
	registry[f.Name()] = f
}

// Lookup finds a family by name.
func Lookup(name string) (Family, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if f, ok := registry[name]; ok {
		return f, nil
	}
	known := familyNamesLocked(false)
	return nil, fmt.Errorf("unknown kernel %q: %sknown kernels are %s (see `mltop list`); if it is your own kernel, add --kernel PATH or write kernel: ./path/kernel.yaml in the sweep file", name, DidYouMean(name, known), strings.Join(known, ", "))
}

// Families lists registered families sorted by name. Families whose name
// starts with "test_" exist only for tests and are hidden unless asked for.
func Families(includeTest bool) []Family {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []Family
	for _, n := range familyNamesLocked(includeTest) {
		out = append(out, registry[n])
	}
	return out
}

func familyNamesLocked(includeTest bool) []string {
	var names []string
	for n := range registry {
		if !includeTest && strings.HasPrefix(n, "test_") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve applies the family's defaults to s and checks it against the
// schema and the family's rules.
func Resolve(s Spec, dev DeviceInfo) (Family, Spec, error) {
	f, err := Lookup(s.Kernel)
	if err != nil {
		return nil, s, err
	}
	sc := f.Schema()
	full := s.WithDefaults(sc)
	if err := full.CheckSchema(sc); err != nil {
		return f, full, err
	}
	if err := f.Validate(full, dev); err != nil {
		return f, full, err
	}
	return f, full, nil
}

// SampleRows picks at most max of total rows, deterministically from seed:
// the first and last rows always (edges catch tile-boundary bugs), the rest
// spread with a seeded generator. Returned sorted.
func SampleRows(total, max int, seed uint64) []int {
	if total <= max || max <= 0 {
		out := make([]int, total)
		for i := range out {
			out[i] = i
		}
		return out
	}
	picked := map[int]bool{0: true, total - 1: true}
	rng := NewRNG(seed ^ 0x9e3779b97f4a7c15)
	for len(picked) < max {
		picked[int(rng.Uint64()%uint64(total))] = true
	}
	out := make([]int, 0, len(picked))
	for r := range picked {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// DescribeRows says which rows were checked.
func DescribeRows(rows []int, total int, seed uint64) string {
	if len(rows) == total {
		return fmt.Sprintf("all %d rows", total)
	}
	return fmt.Sprintf("%d of %d rows (first, last and %d seeded with %d)", len(rows), total, len(rows)-2, seed)
}

// Versioned is a family whose definition can change while the process
// runs (a user kernel reloaded from its files): the runner keys its cached
// inputs and references by the version too, so an edited manifest or
// reference is not answered from the cache.
type Versioned interface {
	Version() string
}

// FamilyVersion is f's version, or "" for a family that never changes.
func FamilyVersion(name string) string {
	f, err := Lookup(name)
	if err != nil {
		return ""
	}
	if v, ok := f.(Versioned); ok {
		return v.Version()
	}
	return ""
}

// Replace registers f, replacing a family of the same name if there is one
// (a user kernel reloaded after its manifest or sources changed). It
// returns the family it replaced, or nil.
func Replace(f Family) Family { return ReplaceNamed(f.Name(), f) }

// ReplaceNamed registers f in place of the family called old (a user
// kernel whose manifest was edited to give it another name): in one step,
// old is no longer registered and f is, under its own name, so no lookup
// in between sees both or neither. It returns the family that was called
// old, or nil. Callers check that f's name is theirs to take (Replace
// does not refuse a built-in family's name).
func ReplaceNamed(old string, f Family) Family {
	registryMu.Lock()
	defer registryMu.Unlock()
	prev := registry[old]
	delete(registry, old)
	registry[f.Name()] = f
	return prev
}

// RunOnDevice runs spec s of family f once on the backend that runs the
// current spec: buffers named in in get those values (encoded in their
// dtype; slots of f's own plan's buffers, integer patterns where one
// carries them: see BufferSpec.IntBits and Recode), the others their own initialisers with the current seed. It
// returns the output buffers (role out) decoded at float64 precision, by
// name: an f64 output (or a wide integer one) keeps every bit, so a check
// against it compares at f64's tolerance.
type RunOnDevice func(f Family, s Spec, in Inputs) (map[string][]float64, error)

// DeviceReference is a family whose expected outputs come from another
// kernel run on the same device (a user kernel's `check: {kernel: …}`).
// The runner calls DeviceReference instead of Reference for such a family,
// with run bound to its backend. Families know nothing of backends: run is
// the whole of what they get.
type DeviceReference interface {
	DeviceReference(s Spec, in Inputs, maxRows int, seed uint64, run RunOnDevice) (*Reference, error)
}

// BackendRefusal is a plan every device of a backend refuses, whatever
// its limits: a user kernel whose manifest has no source for the
// backend. A --dry-run away from the backend's GPU counts such a spec
// invalid, as the GPU would.
type BackendRefusal struct{ Msg string }

func (e *BackendRefusal) Error() string { return e.Msg }
