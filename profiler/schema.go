package profiler

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Param describes one knob or dim of a family: its allowed values (a list, or
// a Min..Max range, optionally in steps of Multiple), its default and a doc line.
// The TUI builds editors from it, the YAML loader validates against it and the
// CSV header is made from the names.
type Param struct {
	Name     string
	Doc      string
	Default  int
	Values   []int // allowed values; empty means the range Min..Max
	Min, Max int
	Multiple int // when > 1, values in the range must be multiples of it
	// Shape marks a knob that changes the math (a chunk length that moves
	// rounding points): it stays in Spec.ShapeKey, so inputs and the cached
	// reference are not shared across its values.
	Shape bool
	// ByDType replaces Default for the dtypes it lists: a default valid for
	// one dtype may not be for another (VEC=8 is 16 bytes of bf16 but 32 of f32).
	ByDType map[DType]int
	// Follows names another param of the same kind: when a spec sets that
	// one and not this one, this one takes its value instead of Default
	// (Hkv follows H: --set H=2 alone gives H=2 Hkv=2, not an invalid Hkv=8);
	// and Spec.Set moves this one along with it while the two are equal.
	Follows string
}

// DefaultFor is the default for dtype dt.
func (p Param) DefaultFor(dt DType) int {
	if v, ok := p.ByDType[dt]; ok {
		return v
	}
	return p.Default
}

// Check reports whether v is allowed, with an error that names the value and
// what is allowed.
func (p Param) Check(v int) error {
	if len(p.Values) > 0 {
		if slices.Contains(p.Values, v) {
			return nil
		}
		return fmt.Errorf("%s=%d is not allowed: use one of %s", p.Name, v, joinInts(p.Values))
	}
	if v < p.Min || v > p.Max {
		return fmt.Errorf("%s=%d is out of range: use %d..%d", p.Name, v, p.Min, p.Max)
	}
	if p.Multiple > 1 && v%p.Multiple != 0 {
		return fmt.Errorf("%s=%d must be a multiple of %d", p.Name, v, p.Multiple)
	}
	return nil
}

// Choices lists the values an editor steps through: the allowed list, or
// powers of two (and multiples of Multiple) inside the range.
func (p Param) Choices() []int {
	if len(p.Values) > 0 {
		return slices.Clone(p.Values)
	}
	var out []int
	for v := 1; v <= p.Max && v > 0; v *= 2 {
		if v >= p.Min && p.Check(v) == nil {
			out = append(out, v)
		}
	}
	if p.Check(p.Default) == nil && !slices.Contains(out, p.Default) {
		out = append(out, p.Default)
		sort.Ints(out)
	}
	return out
}

// Describe renders the allowed values for help text.
func (p Param) Describe() string {
	if len(p.Values) > 0 {
		return "{" + joinInts(p.Values) + "}"
	}
	s := fmt.Sprintf("%d..%d", p.Min, p.Max)
	if p.Max >= math.MaxInt32 {
		s = fmt.Sprintf("≥%d", p.Min) // no upper bound
	}
	if p.Multiple > 1 {
		s += fmt.Sprintf(" step %d", p.Multiple)
	}
	return s
}

// FlagParam is a boolean option of a family (causal, mask, alias…).
type FlagParam struct {
	Name    string
	Doc     string
	Default bool
}

// Schema is everything a family lets a user set.
type Schema struct {
	Knobs  []Param
	Dims   []Param
	Flags  []FlagParam
	DTypes []DType
}

// FindParam returns the parameter of ps named name.
func FindParam(ps []Param, name string) (Param, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Knob returns the knob named name.
func (s Schema) Knob(name string) (Param, bool) { return FindParam(s.Knobs, name) }

// Dim returns the dim named name.
func (s Schema) Dim(name string) (Param, bool) { return FindParam(s.Dims, name) }

// Flag returns the flag named name.
func (s Schema) Flag(name string) (FlagParam, bool) {
	for _, f := range s.Flags {
		if f.Name == name {
			return f, true
		}
	}
	return FlagParam{}, false
}

// Names lists knob and dim and flag names, for messages.
func (s Schema) Names() []string {
	var out []string
	for _, p := range s.Knobs {
		out = append(out, p.Name)
	}
	for _, p := range s.Dims {
		out = append(out, p.Name)
	}
	for _, f := range s.Flags {
		out = append(out, f.Name)
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
