package user

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// This file is what `mltop check` (kernels/user/lint) reads of a loaded
// manifest beyond the profiler.Family methods.

// DispatchInfo is one dispatch as the manifest writes it.
type DispatchInfo struct {
	Index int      // position in dispatches:
	Name  string   // the dispatch's name (its entry when unnamed)
	Entry string   // the kernel's name in the sources
	TGM   []string // the names of its tgm: items
	// DynamicTGM: the dispatch sets dynamic_tgm (an extern shared array's size)
	DynamicTGM bool
	// Cooperative: the dispatch is `cooperative: true` (coop.go)
	Cooperative bool
	// DeviceValues: its grid or scalar args read sm_count or max_coresident
	DeviceValues bool
}

// DispatchInfos lists the manifest's dispatches in order.
func (f *Family) DispatchInfos() []DispatchInfo {
	out := make([]DispatchInfo, len(f.disps))
	for i, d := range f.disps {
		di := DispatchInfo{Index: i, Name: d.name, Entry: d.entry.text, DynamicTGM: d.dynTGM != nil, Cooperative: d.cooperative, DeviceValues: d.usesDevice(f)}
		for _, t := range d.tgm {
			di.TGM = append(di.TGM, t.name)
		}
		out[i] = di
	}
	return out
}

// EntryAt is dispatch i's entry in lang's source as the manifest bound
// it: its signature and the file that defines it (the source, or one of
// the local headers it includes); ok is false when there is none.
func (f *Family) EntryAt(lang string, i int) (sig csrc.Signature, file string, ok bool) {
	if i < 0 || i >= len(f.disps) {
		return sig, "", false
	}
	b, ok := f.disps[i].bind[lang]
	if !ok || b.file == "" {
		return sig, "", false
	}
	return b.sig, b.file, true
}

// SourcePath is the path of the manifest's source in lang ("cuda" or
// "metal"), "" when it names none.
func (f *Family) SourcePath(lang string) string { return f.src[lang].path }

// Languages are the source languages the manifest names, sorted.
func (f *Family) Languages() []string { return slices.Sorted(mapsKeys(f.src)) }

// Pos is the line and column of a YAML path ("$.dispatches[0].tgm[1]") in
// the manifest; 0, 0 when unknown.
func (f *Family) Pos(yamlPath string) (line, col int) {
	if f.doc == nil {
		return 0, 0
	}
	l, c, _ := f.doc.pos(yamlPath)
	return l, c
}

// TinySpec is the spec `mltop check` runs the reference on: knobs and flags
// at their defaults, each dim (in schema order) lowered, not above its
// default, to the smallest value ≥ 2 that its schema allows, that no dim
// before it took, and for which the rules and the plan still hold; failing
// that to a value ≥ 2 another dim took, and only then (from a default
// above 64) to 1. Besides the small values, the values tried include the
// numbers the rules can ask for: the spec's other knobs, dims, values and
// source constants, the rules' integer literals, and the products and
// least common multiples of pairs and triples of them (N % WG == 0 lowers
// N to WG, N >= R * C to R·C). Dims move one at a time: a rule tying two
// dims keeps them at their defaults. Distinct dims make a transposed
// result or a reduction over the wrong axis come back in the wrong shape. changed lists the dims lowered, "N=1024→3".
func (f *Family) TinySpec(dt profiler.DType) (s profiler.Spec, changed []string, err error) {
	s = profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.schema)
	dev := profiler.DeviceInfo{Backend: "cpu", Name: "mltop check"}
	if err := f.Validate(s, dev); err != nil {
		return s, nil, fmt.Errorf("the default spec %s is not valid: %w", s, err)
	}
	used := map[int]bool{}
	for _, p := range f.schema.Dims {
		def := s.Dims[p.Name]
		plans := 0
		for _, v := range tinyCandidates(p, def, used, f.ruleNumbers(s, p.Name)) {
			try := s.Clone()
			try.Dims[p.Name] = v
			if f.rulesHold(try) != nil {
				continue // cheap: the rules alone
			}
			if plans++; plans > maxTinyPlans {
				break
			}
			if _, err := f.plan(try, dev); err == nil {
				s = try
				changed = append(changed, fmt.Sprintf("%s=%d→%d", p.Name, def, v))
				break
			}
		}
		used[s.Dims[p.Name]] = true
	}
	return s, changed, nil
}

// maxTinyPlans bounds the values of one dim for which TinySpec plans the
// spec (those the rules allow; the rules alone are cheap to evaluate).
const maxTinyPlans = 64

// maxTinyDerived bounds the numbers the rules may ask for that TinySpec
// tries for one dim: with many rules the small products of their numbers
// (2·3, 4·7, …) come first, and a cap as low as the small values' kept
// N % (WG * TM * 7) == 0 from ever reaching WG·TM·7.
const maxTinyDerived = 8192

// tinyCandidates are the values below def that p allows, in the order
// TinySpec tries them: ≥ 2 and not used, ≥ 2 and used, then 1 (when def
// is above 64); each kind ascending, from the first 64 small values and
// the numbers the rules may ask for (derived, at most maxTinyDerived).
func tinyCandidates(p profiler.Param, def int, used map[int]bool, derived []int) []int {
	var small []int
	if len(p.Values) > 0 {
		small = slices.Sorted(slices.Values(p.Values))
		derived = nil // the list is every value there is
	} else {
		step := max(p.Multiple, 1)
		for v := max(p.Min, 1); v < def && len(small) < 64+len(used); v++ {
			if v%step == 0 || v == 1 {
				small = append(small, v)
			}
		}
	}
	var fresh, taken []int
	one := false
	consider := func(v int) {
		switch {
		case v >= def || p.Check(v) != nil:
		case v == 1:
			one = true
		case used[v]:
			if len(taken) < 64 {
				taken = append(taken, v)
			}
		case len(fresh) < 64+maxTinyDerived:
			fresh = append(fresh, v)
		}
	}
	n := 0
	for _, v := range derived {
		if v > 1 && v < def && p.Check(v) == nil && n < maxTinyDerived {
			small = append(small, v)
			n++
		}
	}
	for _, v := range slices.Compact(slices.Sorted(slices.Values(small))) {
		consider(v)
	}
	out := append(fresh, taken...)
	if one && def > 64 { // a small default keeps its shape rather than collapse to 1
		out = append(out, 1)
	}
	return out
}

// ruleNumbers are the numbers a rule may ask a dim to be or divide by, at
// spec s, ascending: the integers of the spec's environment but the dim's
// own (knobs, other dims, values, source constants), the integer literals
// of the rules, 2, 3 and 4, and the products and least common multiples of
// pairs and triples of them.
func (f *Family) ruleNumbers(s profiler.Spec, dim string) []int {
	e, err := f.env(s)
	if err != nil {
		return nil
	}
	base := []int{2, 3, 4} // small multiples: a second dim under N % 128 == 0 takes 256 when 128 is taken
	for name, v := range e {
		if n, ok := v.(int); ok && name != dim && n > 1 {
			base = append(base, n)
		}
	}
	for _, r := range f.m.Rules {
		for _, lit := range intLiteralRE.FindAllString(r, -1) {
			if n, err := strconv.Atoi(lit); err == nil && n > 1 {
				base = append(base, n)
			}
		}
	}
	base = slices.Compact(slices.Sorted(slices.Values(base)))
	base = base[:min(len(base), 24)]
	out := slices.Clone(base)
	for range 2 { // pairs, then triples: N % (2 * WG * G) == 0
		var next []int
		for _, a := range out {
			for _, b := range base {
				if a <= 1<<31/b {
					next = append(next, a*b, a/gcd(a, b)*b)
				}
			}
		}
		out = slices.Compact(slices.Sorted(slices.Values(append(out, next...))))
	}
	return out
}

// intLiteralRE is an integer literal of a rule (a float's digits match
// too: they only add values to try).
var intLiteralRE = regexp.MustCompile(`\b[0-9]+\b`)

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// DTypeName is the name the sources and buffers give the spec's dtype
// ("T" unless the manifest's dtype_name says otherwise).
func (f *Family) DTypeName() string { return f.dtypeName() }

// DTypeBuffers are the buffers whose dtype is the spec's (dtype: T, the
// dtype's name, or none given), in manifest order.
func (f *Family) DTypeBuffers() []string {
	var out []string
	for _, b := range f.bufs {
		if b.dtype == "" {
			out = append(out, b.name)
		}
	}
	return out
}
