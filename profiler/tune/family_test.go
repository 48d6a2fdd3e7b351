package tune

import (
	"errors"
	"fmt"
	"math"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
)

// testKnobs span 8·6·6·5 = 1440 configurations.
var testKnobs = []search.Knob{
	{Name: "WG", Values: []int{32, 64, 128, 256, 512, 1024, 2048, 4096}},
	{Name: "VEC", Values: []int{1, 2, 4, 8, 16, 32}},
	{Name: "RPG", Values: []int{1, 2, 4, 8, 16, 32}},
	{Name: "RB", Values: []int{1, 2, 4, 8, 16}},
}

// tuneFamily is a family whose every knob value is in its schema and that
// refuses WG=4096 with VEC=32 (a family rule the oracle must apply).
type tuneFamily struct{}

func (tuneFamily) Name() string { return "test_tune" }
func (tuneFamily) Doc() string  { return "a family for search tests" }
func (tuneFamily) Schema() profiler.Schema {
	var knobs []profiler.Param
	for _, k := range testKnobs {
		knobs = append(knobs, profiler.Param{Name: k.Name, Values: k.Values, Default: k.Values[0]})
	}
	return profiler.Schema{Knobs: knobs, DTypes: []profiler.DType{profiler.F32, profiler.BF16},
		Dims: []profiler.Param{{Name: "rows", Default: 1024, Min: 1, Max: 1 << 30}, {Name: "cols", Default: 1024, Min: 1, Max: 1 << 30}}}
}
func (tuneFamily) Validate(s profiler.Spec, _ profiler.DeviceInfo) error {
	if s.Knobs["WG"] == 4096 && s.Knobs["VEC"] == 32 {
		return errors.New("WG·VEC too large")
	}
	return nil
}
func (tuneFamily) Plan(profiler.Spec, profiler.DeviceInfo) (*profiler.Plan, error) {
	return &profiler.Plan{}, nil
}
func (tuneFamily) Reference(profiler.Spec, profiler.Inputs, int, uint64) (*profiler.Reference, error) {
	return nil, errors.New("not for running")
}
func (tuneFamily) Tolerance(profiler.DType) profiler.Tolerance { return profiler.Tolerance{} }

func init() { profiler.Register(tuneFamily{}) }

var testDev = profiler.DeviceInfo{Backend: "test", Name: "Test GPU"}

// landscapeRows records l for base's shape as result rows: the medians are
// the landscape's costs, with a ±ci interval; configurations a run refuses
// are absent (so the replay calls them invalid).
func landscapeRows(l *search.Landscape, base profiler.Spec, ci float64) []profiler.Result {
	sp, err := search.NewSpace(l.Knobs, l.Allow)
	if err != nil {
		panic(err)
	}
	var rows []profiler.Result
	for i := range sp.Size() {
		vals := sp.Values(sp.Point(i))
		c, err := l.Measure(vals)
		if err != nil {
			continue
		}
		s := specAt(base, vals).WithDefaults(tuneFamily{}.Schema())
		rows = append(rows, profiler.Result{Spec: s, Status: profiler.StatusOK, Backend: "test", Device: testDev.Name,
			Stats: profiler.Stats{N: 30, Median: c, CILo: c * (1 - ci), CIHi: c * (1 + ci)}, GBps: 1e9 / c})
	}
	return rows
}

func shapeSpec(rows, cols int, dt profiler.DType) profiler.Spec {
	return profiler.Spec{Kernel: "test_tune", DType: dt, Dims: map[string]int{"rows": rows, "cols": cols}}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
