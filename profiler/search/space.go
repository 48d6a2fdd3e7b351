// Package search chooses which configurations of a kernel's knobs to
// measure when measuring all of them costs too much. A Space is the knobs'
// values and the configurations that pass the constraints known before
// anything runs (the family's rules, the sweep's `where:` filters, the
// device's limits); a Strategy proposes points of it in batches and learns
// from what the measurements say, including that a point was invalid.
// Everything is seeded and deterministic.
package search

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Knob is one axis of a space: its name and its values in order (the
// order is what "neighbouring value" means to the strategies).
type Knob struct {
	Name   string
	Values []int
}

// Constraint says why a configuration (knob name → value) cannot run, or
// nil when it can. It is asked once per configuration.
type Constraint func(values map[string]int) error

// MaxPoints is the largest cartesian product NewSpace enumerates.
const MaxPoints = 2_000_000

// Space is the configurations a search chooses from: every combination of
// the knobs' values that its constraint allows, in odometer order (last
// knob fastest).
type Space struct {
	Knobs []Knob
	// Excluded counts the combinations the constraint refused; FirstRefusal
	// is the first one's reason (for the error of an empty space).
	Excluded     int
	FirstRefusal string

	cands [][]int        // value indices of each allowed configuration
	byKey map[string]int // index key → position in cands
}

// ErrEmpty is wrapped by NewSpace's error when nothing is left.
var ErrEmpty = errors.New("no configuration is left")

// NewSpace enumerates the allowed configurations. A nil allow allows all.
// It fails when a knob has no values, the product exceeds MaxPoints, or
// the constraint leaves nothing (wrapping ErrEmpty, with the first reason).
func NewSpace(knobs []Knob, allow Constraint) (*Space, error) {
	total := 1.0
	for _, k := range knobs {
		if len(k.Values) == 0 {
			return nil, fmt.Errorf("knob %s has no values to search: give it at least one", k.Name)
		}
		total *= float64(len(k.Values))
	}
	if total > MaxPoints {
		return nil, fmt.Errorf("the knobs span %.3g configurations, more than %d: fix some knobs (--set) or give fewer values", total, MaxPoints)
	}
	s := &Space{Knobs: knobs, byKey: map[string]int{}}
	idx := make([]int, len(knobs))
	for {
		vals := s.valuesOf(idx)
		if err := callAllow(allow, vals); err != nil {
			if s.Excluded == 0 {
				s.FirstRefusal = fmt.Sprintf("%s: %v", describe(knobs, idx), err)
			}
			s.Excluded++
		} else {
			c := append([]int(nil), idx...)
			s.byKey[indexKey(c)] = len(s.cands)
			s.cands = append(s.cands, c)
		}
		if !nextIndex(idx, knobs) {
			break
		}
	}
	if len(s.cands) == 0 {
		return nil, fmt.Errorf("%w: all %d configurations are refused (the first, %s)", ErrEmpty, s.Excluded, s.FirstRefusal)
	}
	return s, nil
}

func callAllow(allow Constraint, vals map[string]int) error {
	if allow == nil {
		return nil
	}
	return allow(vals)
}

// Size is the number of allowed configurations.
func (s *Space) Size() int { return len(s.cands) }

// Point is the configuration at position i (0 ≤ i < Size), measured in full.
func (s *Space) Point(i int) Point {
	return Point{Index: append([]int(nil), s.cands[i]...), Fidelity: 1}
}

// Values is p's knob name → value.
func (s *Space) Values(p Point) map[string]int { return s.valuesOf(p.Index) }

func (s *Space) valuesOf(idx []int) map[string]int {
	m := make(map[string]int, len(idx))
	for k, i := range idx {
		m[s.Knobs[k].Name] = s.Knobs[k].Values[i]
	}
	return m
}

// Find is the position of the configuration with these knob values, or
// false when it is not in the space (a value off the axes, or refused).
func (s *Space) Find(values map[string]int) (int, bool) {
	idx := make([]int, len(s.Knobs))
	for k, kn := range s.Knobs {
		v, ok := values[kn.Name]
		if !ok {
			return 0, false
		}
		idx[k] = -1
		for i, x := range kn.Values {
			if x == v {
				idx[k] = i
			}
		}
		if idx[k] < 0 {
			return 0, false
		}
	}
	return s.find(idx)
}

func (s *Space) find(idx []int) (int, bool) {
	i, ok := s.byKey[indexKey(idx)]
	return i, ok
}

// Describe is "WG=128 VEC=4" for p.
func (s *Space) Describe(p Point) string { return describe(s.Knobs, p.Index) }

func describe(knobs []Knob, idx []int) string {
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = knobs[k].Name + "=" + strconv.Itoa(knobs[k].Values[i])
	}
	return strings.Join(parts, " ")
}

func indexKey(idx []int) string {
	var b strings.Builder
	for k, i := range idx {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// Point is one configuration to measure: an index into each knob's values,
// and how long to measure it (Fidelity 1 is a full measurement; successive
// halving asks for shorter ones first).
type Point struct {
	Index    []int
	Fidelity float64
}

// Result is what a measurement of a point said. Cost is lower-is-better
// (the driver turns a throughput into its negative).
type Result struct {
	Point Point
	Cost  float64
	// Invalid: the plan or the backend refused the point; it is never
	// proposed again and its neighbourhood counts as bad.
	Invalid bool
	// Failed: it ran but gave no usable figure (mismatch, crash, timeout).
	Failed bool
}

// usable says whether r has a cost to compare.
func (r Result) usable() bool {
	return !r.Invalid && !r.Failed && !math.IsNaN(r.Cost) && !math.IsInf(r.Cost, 0)
}

// nextIndex steps idx, one value index per knob, to the next combination
// in odometer order (the last knob fastest); false after the last one.
func nextIndex(idx []int, knobs []Knob) bool {
	for k := len(idx) - 1; k >= 0; k-- {
		idx[k]++
		if idx[k] < len(knobs[k].Values) {
			return true
		}
		idx[k] = 0
	}
	return false
}
