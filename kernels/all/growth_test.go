package all_test

import (
	"math"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
)

// exactFamilies copy their inputs: their checks carry no growth term.
var exactFamilies = map[string]bool{"transpose": true}

// Every family's reference follows the tolerance model (docs/tolerances.md):
// each check of a computed output carries a Growth with a
// reduction length, f32 accumulation and one finite, non-negative
// magnitude per element.
func TestReferencesCarryGrowth(t *testing.T) {
	for name, specs := range examples(t) {
		for _, s := range specs {
			f, full, err := profiler.Resolve(s, kittest.CPU)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			p, err := f.Plan(full, kittest.CPU)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			in := profiler.Inputs{}
			for i, b := range p.Buffers {
				if b.Role == profiler.In {
					in[b.Name] = profiler.Fill(b, uint64(i+1))
				}
			}
			ref, err := f.Reference(full, in, 64, 1)
			if err != nil {
				t.Fatalf("%s: reference: %v", s, err)
			}
			for _, c := range ref.Checks {
				g := c.Growth
				if exactFamilies[name] {
					if g != nil {
						t.Errorf("%s %s: an exact copy carries a growth term", s, c.Buffer)
					}
					continue
				}
				if g == nil {
					t.Errorf("%s %s: no Growth: give the check its magnitudes (kit.NewGrowth) and a row in docs/tolerances.md", s, c.Buffer)
					continue
				}
				if g.N < 1 || g.Eps != 0x1p-24 || g.TermEps < 0 || g.TermEps > 0x1p-7 {
					t.Errorf("%s %s: growth N=%d Eps=%g TermEps=%g", s, c.Buffer, g.N, g.Eps, g.TermEps)
				}
				if g.Mag != nil && len(g.Mag) != len(c.Want) {
					t.Errorf("%s %s: %d magnitudes for %d elements", s, c.Buffer, len(g.Mag), len(c.Want))
				}
				for k, m := range g.Mag {
					if m < 0 || math.IsNaN(m) || math.IsInf(m, 0) {
						t.Errorf("%s %s[%d]: magnitude %g", s, c.Buffer, c.Index[k], m)
						break
					}
				}
			}
		}
	}
}
