package tune

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/units"
)

// remeasure measures the best Top configurations again with FinalOptions
// and compares the two best.
func (r *searchRun) remeasure(ctx context.Context) error {
	type cand struct {
		i    int
		cost float64
	}
	best := map[int]float64{}
	for _, row := range r.rows {
		cost, ok := r.cfg.Objective.Cost(row)
		if !ok || row.Search == nil || row.Search.Fidelity < 1 {
			continue
		}
		i, found := r.sp.Find(row.Spec.Knobs)
		if old, seen := best[i]; found && (!seen || cost < old) {
			best[i] = cost
		}
	}
	if len(best) == 0 {
		return r.noValid()
	}
	var cs []cand
	for i, c := range best {
		cs = append(cs, cand{i, c})
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].cost < cs[b].cost || (cs[a].cost == cs[b].cost && cs[a].i < cs[b].i) })
	var ps []search.Point
	for _, c := range cs[:min(r.cfg.Top, len(cs))] {
		ps = append(ps, r.sp.Point(c.i))
	}
	r.logf("re-measuring the best %d of %s with full precision", len(ps), r.cfg.Label())
	rows, err := r.measure(ctx, ps, true)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if _, ok := r.cfg.Objective.Cost(row); ok {
			r.out.Finalists = append(r.out.Finalists, row)
		}
	}
	if len(r.out.Finalists) == 0 {
		return fmt.Errorf("%s: the %d contenders failed when measured again (first: %s %s)", r.cfg.Label(), len(rows), rows[0].Status, rows[0].Error)
	}
	slices.SortStableFunc(r.out.Finalists, func(a, b profiler.Result) int {
		ca, _ := r.cfg.Objective.Cost(a)
		cb, _ := r.cfg.Objective.Cost(b)
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
	names := make([]string, len(r.cfg.Knobs))
	for k, kn := range r.cfg.Knobs {
		names[k] = kn.Name
	}
	r.out.Compare = Compare(r.cfg.Objective, r.out.Finalists, names)
	return nil
}

// noValid is the error of a search in which nothing could be measured.
func (r *searchRun) noValid() error {
	counts := map[profiler.Status]int{}
	first := ""
	for _, row := range r.rows {
		counts[row.Status]++
		if first == "" && row.Error != "" {
			first = fmt.Sprintf(" (the first, %s: %s)", KnobText(row.Spec.Knobs, r.knobNames()), row.Error)
		}
	}
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	return fmt.Errorf("%w for %s: %d measured, %s%s; the rows are in the CSV: check the family's rules (mltop list) or widen the knobs",
		ErrNoValid, r.cfg.Label(), len(r.rows), strings.Join(parts, ", "), first)
}

func (r *searchRun) knobNames() []string {
	n := make([]string, len(r.cfg.Knobs))
	for k, kn := range r.cfg.Knobs {
		n[k] = kn.Name
	}
	return n
}

// KnobText is "WG=128 VEC=4" for the named knobs of values.
func KnobText(values map[string]int, names []string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if v, ok := values[n]; ok {
			parts = append(parts, n+"="+strconv.Itoa(v))
		}
	}
	return strings.Join(parts, " ")
}

// Comparison is the winner against the runner-up.
type Comparison struct {
	// Tied: the 95% confidence intervals of their medians overlap.
	Tied bool
	// Known: both medians have an interval (6 samples or more each).
	Known bool
	Text  string
}

// Compare says how the first two of finalists (best first) differ, with
// the confidence intervals of their medians: "tied within noise" when
// they overlap.
func Compare(obj Objective, finalists []profiler.Result, knobs []string) Comparison {
	if len(finalists) == 0 {
		return Comparison{Text: "no configuration to compare"}
	}
	a := finalists[0]
	win := fmt.Sprintf("%s: %s", KnobText(a.Spec.Knobs, knobs), medianCI(a))
	if len(finalists) == 1 {
		return Comparison{Text: "winner " + win + "; no runner-up measured usable"}
	}
	b := finalists[1]
	run := fmt.Sprintf("%s: %s", KnobText(b.Spec.Knobs, knobs), medianCI(b))
	va, _ := obj.Value(a)
	vb, _ := obj.Value(b)
	gap := fmt.Sprintf("%.1f%% %s", 100*(vb/va-1), "faster")
	if obj.Maximise() {
		gap = fmt.Sprintf("%.1f%% more %s", 100*(va/vb-1), obj.Unit())
	}
	if a.Stats.CIHi == 0 || b.Stats.CIHi == 0 {
		return Comparison{Text: fmt.Sprintf("winner %s vs runner-up %s: %s, but without confidence intervals (fewer than 6 samples) the gap may be noise", win, run, gap)}
	}
	c := Comparison{Known: true, Tied: a.Stats.CIHi >= b.Stats.CILo && b.Stats.CIHi >= a.Stats.CILo}
	if c.Tied {
		c.Text = fmt.Sprintf("tied within noise: winner %s and runner-up %s have overlapping 95%% intervals of the median; either can ship", win, run)
	} else {
		c.Text = fmt.Sprintf("winner %s vs runner-up %s: %s, %s", win, run, gap, apartText)
	}
	return c
}

// apartText ends the verdict of a winner whose interval is clear of the
// runner-up's (Entry.Standing reads it).
const apartText = "the 95% intervals of the medians do not overlap"

// medianCI is "51.2 µs (95% CI 50.9–51.6)".
func medianCI(r profiler.Result) string {
	s := units.Nanos4(r.Stats.Median)
	if r.Stats.CIHi > 0 {
		s += fmt.Sprintf(" (95%% CI %s–%s)", units.Nanos4(r.Stats.CILo), units.Nanos4(r.Stats.CIHi))
	}
	return s
}
