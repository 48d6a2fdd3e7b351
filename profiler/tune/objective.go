// Package tune drives a search (profiler/search) through the engine's job
// loop: every measurement is a normal Result row, marked with its search
// step; the best few are re-measured and compared with the confidence
// intervals of their medians; over a list of shapes the winners become a
// tuning table and generated C/CUDA and Metal headers.
package tune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Objective is the figure a search optimises, named as its CSV column.
type Objective string

// The objectives: the median time is minimised, throughputs maximised.
const (
	MedianUS Objective = "median_us"
	TFLOPS   Objective = "tflops"
	GBps     Objective = "gbps"
)

// Objectives are the names ParseObjective accepts.
var Objectives = []Objective{MedianUS, TFLOPS, GBps}

// ParseObjective reads an objective's name ("" is median_us).
func ParseObjective(s string) (Objective, error) {
	if s == "" {
		return MedianUS, nil
	}
	o := Objective(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Objectives, o) {
		return o, nil
	}
	names := make([]string, len(Objectives))
	for i, x := range Objectives {
		names[i] = string(x)
	}
	return "", fmt.Errorf("objective %q is not a column a search can optimise: use %s (median_us is minimised, the others maximised)", s, strings.Join(names, ", "))
}

// Maximise says whether larger is better.
func (o Objective) Maximise() bool { return o != MedianUS }

// Value is r's figure in the objective's unit, and whether r has one: a
// row that ran, was timed and was not found wrong.
func (o Objective) Value(r profiler.Result) (float64, bool) {
	if !usable(r) {
		return 0, false
	}
	var v float64
	switch o {
	case TFLOPS:
		v = r.TFLOPS
	case GBps:
		v = r.GBps
	default:
		v = r.Stats.Median / 1e3
	}
	return v, v > 0
}

// Cost is lower-is-better: the median in µs, or the throughput negated.
func (o Objective) Cost(r profiler.Result) (float64, bool) {
	v, ok := o.Value(r)
	if o.Maximise() {
		v = -v
	}
	return v, ok
}

// Unit is how Value is written.
func (o Objective) Unit() string {
	switch o {
	case TFLOPS:
		return "TFLOP/s"
	case GBps:
		return "GB/s"
	}
	return "µs"
}

func usable(r profiler.Result) bool {
	return (r.Status == profiler.StatusOK || r.Status == profiler.StatusUnchecked) && r.Stats.N > 0
}
