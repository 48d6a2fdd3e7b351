package profiler

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Spec is one point to measure: a kernel family, its knobs, dtype, problem
// dims and flags.
type Spec struct {
	Kernel string          `json:"kernel"`
	DType  DType           `json:"dtype"`
	Knobs  map[string]int  `json:"knobs,omitempty"`
	Dims   map[string]int  `json:"dims,omitempty"`
	Flags  map[string]bool `json:"flags,omitempty"`
}

// Clone returns a deep copy.
func (s Spec) Clone() Spec {
	c := s
	c.Knobs = maps.Clone(s.Knobs)
	c.Dims = maps.Clone(s.Dims)
	c.Flags = maps.Clone(s.Flags)
	return c
}

// Key is a canonical string that identifies the spec (used by --resume and
// the reference cache).
func (s Spec) Key() string {
	var b strings.Builder
	b.WriteString(s.Kernel)
	b.WriteString("|")
	b.WriteString(string(s.DType))
	writeMap(&b, "k", s.Knobs)
	writeMap(&b, "d", s.Dims)
	for _, k := range slices.Sorted(maps.Keys(s.Flags)) {
		fmt.Fprintf(&b, "|f:%s=%t", k, s.Flags[k])
	}
	return b.String()
}

// ShapeKey identifies the math of a spec: knobs do not change it, except
// those the family's schema marks as Shape.
func (s Spec) ShapeKey() string {
	c := s.Clone()
	c.Knobs = nil
	if f, err := Lookup(s.Kernel); err == nil {
		for _, p := range f.Schema().Knobs {
			if v, ok := s.Knobs[p.Name]; ok && p.Shape {
				if c.Knobs == nil {
					c.Knobs = map[string]int{}
				}
				c.Knobs[p.Name] = v
			}
		}
	}
	return c.Key()
}

func writeMap(b *strings.Builder, tag string, m map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(b, "|%s:%s=%d", tag, k, m[k])
	}
}

// String is the short human form: "attn_fwd bf16 BQ=32 BK=16 | B=1 H=8 … causal".
func (s Spec) String() string {
	var parts []string
	parts = append(parts, s.Kernel, string(s.DType))
	for _, k := range slices.Sorted(maps.Keys(s.Flags)) {
		if s.Flags[k] {
			parts = append(parts, k)
		}
	}
	var knobOrder, dimOrder []Param
	if f, err := Lookup(s.Kernel); err == nil {
		knobOrder, dimOrder = f.Schema().Knobs, f.Schema().Dims
	}
	for _, k := range schemaOrder(s.Knobs, knobOrder) {
		parts = append(parts, k+"="+strconv.Itoa(s.Knobs[k]))
	}
	if len(s.Dims) > 0 {
		parts = append(parts, "|")
	}
	for _, k := range schemaOrder(s.Dims, dimOrder) {
		parts = append(parts, k+"="+strconv.Itoa(s.Dims[k]))
	}
	return strings.Join(parts, " ")
}

// WithDefaults fills unset knobs, dims and flags from the schema.
func (s Spec) WithDefaults(sc Schema) Spec {
	c := s.Clone()
	if c.Knobs == nil {
		c.Knobs = map[string]int{}
	}
	if c.Dims == nil {
		c.Dims = map[string]int{}
	}
	if c.Flags == nil {
		c.Flags = map[string]bool{}
	}
	if c.DType == "" && len(sc.DTypes) > 0 {
		c.DType = sc.DTypes[0]
	}
	fill := func(m map[string]int, set map[string]int, ps []Param) {
		for _, p := range ps {
			if _, ok := m[p.Name]; ok {
				continue
			}
			if v, ok := set[p.Follows]; ok && p.Follows != "" {
				m[p.Name] = v
				continue
			}
			m[p.Name] = p.DefaultFor(c.DType)
		}
	}
	fill(c.Knobs, s.Knobs, sc.Knobs)
	fill(c.Dims, s.Dims, sc.Dims)
	for _, f := range sc.Flags {
		if _, ok := c.Flags[f.Name]; !ok {
			c.Flags[f.Name] = f.Default
		}
	}
	return c
}

// CheckSchema verifies every knob, dim, flag and the dtype against the
// schema. Unknown names are errors (a typo must not silently fall back to a
// default).
func (s Spec) CheckSchema(sc Schema) error {
	if !slices.Contains(sc.DTypes, s.DType) {
		return fmt.Errorf("%s does not support dtype %q: use one of %s", s.Kernel, s.DType, JoinDTypes(sc.DTypes))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Knobs)) {
		p, ok := sc.Knob(k)
		if !ok {
			return fmt.Errorf("%s has no knob %q: %sknobs are %s", s.Kernel, k, DidYouMean(k, ParamNameList(sc.Knobs)), ParamNames(sc.Knobs))
		}
		if err := p.Check(s.Knobs[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dims)) {
		p, ok := sc.Dim(k)
		if !ok {
			return fmt.Errorf("%s has no dim %q: %sdims are %s", s.Kernel, k, DidYouMean(k, ParamNameList(sc.Dims)), ParamNames(sc.Dims))
		}
		if err := p.Check(s.Dims[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Flags)) {
		if _, ok := sc.Flag(k); !ok {
			return fmt.Errorf("%s has no flag %q: %s", s.Kernel, k, UnknownFlag(sc, k))
		}
	}
	return nil
}

// Set assigns name=value to the knob, dim or flag of that name.
func (s *Spec) Set(sc Schema, name string, value int) error {
	if _, ok := sc.Knob(name); ok {
		if s.Knobs == nil {
			s.Knobs = map[string]int{}
		}
		s.Knobs[name] = value
		return nil
	}
	if _, ok := sc.Dim(name); ok {
		if s.Dims == nil {
			s.Dims = map[string]int{}
		}
		old, had := s.Dims[name]
		s.Dims[name] = value
		// A dim that follows this one and was tied to it moves with it.
		for _, p := range sc.Dims {
			if p.Follows == name && had {
				if v, ok := s.Dims[p.Name]; ok && v == old {
					s.Dims[p.Name] = value
				}
			}
		}
		return nil
	}
	if _, ok := sc.Flag(name); ok {
		if s.Flags == nil {
			s.Flags = map[string]bool{}
		}
		s.Flags[name] = value != 0
		return nil
	}
	return fmt.Errorf("%s has no knob, dim or flag %q: %sit has %s", s.Kernel, name, DidYouMean(name, sc.Names()), strings.Join(sc.Names(), ", "))
}

// ParamNames lists the parameters' names for an error message.
func ParamNames(ps []Param) string {
	n := ParamNameList(ps)
	if len(n) == 0 {
		return "(none)"
	}
	return strings.Join(n, ", ")
}

// ParamNameList is the parameters' names, for a did-you-mean.
func ParamNameList(ps []Param) []string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = p.Name
	}
	return n
}

// UnknownFlag is the hint for an unknown flag name: the nearest flag
// when one is close, then the family's flags (or that it has none).
func UnknownFlag(sc Schema, name string) string {
	if len(sc.Flags) == 0 {
		return "it has no flags"
	}
	n := make([]string, len(sc.Flags))
	for i, f := range sc.Flags {
		n[i] = f.Name
	}
	return DidYouMean(name, n) + "flags are " + strings.Join(n, ", ")
}

// JoinDTypes lists dtypes for an error message: "f32, f16, bf16".
func JoinDTypes(ds []DType) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}

// schemaOrder lists m's keys in the schema's order, then any others sorted.
func schemaOrder(m map[string]int, order []Param) []string {
	var out []string
	for _, p := range order {
		if _, ok := m[p.Name]; ok {
			out = append(out, p.Name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
