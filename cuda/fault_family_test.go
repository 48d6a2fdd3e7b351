//go:build linux

package cuda

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// faultFamily ("test_cuda_fault") runs the test-only kernels of
// shaders/test_fault/test_fault.cu: MODE 0 fills X[i] = i (passes), 1 writes far
// out of bounds (a sticky illegal address), 2 never ends.
type faultFamily struct{}

const (
	faultFill = 0
	faultOOB  = 1
	faultHang = 2
)

func init() { profiler.Register(faultFamily{}) }

func faultSpec(mode int) profiler.Spec {
	return profiler.Spec{Kernel: "test_cuda_fault", DType: profiler.F32, Knobs: map[string]int{"MODE": mode}, Dims: map[string]int{"n": 1024}}
}

func (faultFamily) Name() string { return "test_cuda_fault" }
func (faultFamily) Doc() string  { return "test only: a kernel that passes, faults or hangs" }
func (faultFamily) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs:  []profiler.Param{{Name: "MODE", Doc: "0 fill, 1 out-of-bounds write, 2 endless loop", Default: 0, Values: []int{0, 1, 2}}},
		Dims:   []profiler.Param{{Name: "n", Doc: "elements", Default: 1024, Min: 1, Max: 1 << 20}},
		DTypes: []profiler.DType{profiler.F32},
	}
}
func (faultFamily) Validate(profiler.Spec, profiler.DeviceInfo) error { return nil }

func (faultFamily) Plan(s profiler.Spec, _ profiler.DeviceInfo) (*profiler.Plan, error) {
	n := s.Dims["n"]
	entry := []string{"test_fill", "test_oob", "test_hang"}[s.Knobs["MODE"]]
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{{Name: "X", Role: profiler.Out, Type: profiler.F32, Elems: int64(n), Init: profiler.InitPoison}},
		Dispatches: []profiler.Dispatch{{
			Name: entry, Program: profiler.Program{Source: "test_fault", Entry: entry},
			Grid: [3]int{(n + 255) / 256, 1, 1}, Group: [3]int{256, 1, 1},
			Args: []string{"X"}, Scalars: []profiler.Scalar{profiler.I32Param("n", n)},
		}},
		FLOPs: 0, Bytes: float64(4 * n),
	}, nil
}

func (faultFamily) Reference(s profiler.Spec, _ profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	n := s.Dims["n"]
	rows := profiler.SampleRows(n, maxRows, seed)
	c := profiler.Check{Buffer: "X"}
	for _, r := range rows {
		c.Index = append(c.Index, r)
		c.Want = append(c.Want, float64(r))
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("n=%d gives no rows", n)
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(rows), RowsTotal: n, Rows: profiler.DescribeRows(rows, n, seed)}, nil
}

func (faultFamily) Tolerance(profiler.DType) profiler.Tolerance {
	return profiler.DefaultTolerances[profiler.F32]
}
