package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// oobFamily is y = 2x over N elements; its kernel "test_oob_<past>"
// writes past elements beyond y's end too (0: none), as a bound test
// `i <= n` does.
type oobFamily struct{ past int }

func (f oobFamily) Name() string {
	return "test_oob_" + string(rune('0'+f.past))
}
func (oobFamily) Doc() string { return "y = 2x, writing past y's end (runner guard tests)" }
func (oobFamily) Schema() profiler.Schema {
	return profiler.Schema{Dims: []profiler.Param{{Name: "N", Min: 1, Max: 1 << 20, Default: 100}}, DTypes: []profiler.DType{profiler.F32}}
}
func (oobFamily) Validate(profiler.Spec, profiler.DeviceInfo) error { return nil }
func (f oobFamily) Plan(s profiler.Spec, _ profiler.DeviceInfo) (*profiler.Plan, error) {
	n := s.Dims["N"]
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "x", Role: profiler.In, Type: profiler.F32, Elems: int64(n), Init: profiler.InitNormal, Scale: 1},
			{Name: "y", Role: profiler.Out, Type: profiler.F32, Elems: int64(n), Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{{Name: "oob", Program: profiler.Program{Source: f.Name(), Entry: f.Name()},
			Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1}, Args: []string{"x", "y"}, Scalars: []profiler.Scalar{profiler.I32Param("N", n)}}},
		FLOPs: float64(n), Bytes: float64(8 * n),
	}, nil
}
func (oobFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	c := profiler.Check{Buffer: "y"}
	for i, v := range in["x"] {
		c.Index = append(c.Index, i)
		c.Want = append(c.Want, 2*float64(v))
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(c.Want), RowsTotal: len(c.Want), Rows: "all"}, nil
}
func (oobFamily) Tolerance(d profiler.DType) profiler.Tolerance { return profiler.DefaultTolerances[d] }

var registerOOB sync.Once

func registerOOBFamilies() {
	registerOOB.Do(func() {
		for _, past := range []int{0, 1, 3} {
			f := oobFamily{past}
			host.RegisterKernel(f.Name(), func(g *host.Group) {
				x, y, n := g.Arg(0, profiler.F32), g.Arg(1, profiler.F32), g.Int("N")
				for i := range n + past {
					v := float32(1)
					if i < n {
						v = 2 * x.At(i)
					}
					y.Set(i, v)
				}
			})
			profiler.Register(f)
		}
	})
}

// A kernel that writes past its output's end is a mismatch naming the
// buffer and the elements, though every element it should write is
// right; the next spec on the same buffers finds them whole again.
func TestWritePastTheEndIsCaught(t *testing.T) {
	registerOOBFamilies()
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	r := run.NewRunner(be)
	defer r.Close()
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 1, MinSamples: 1, MinTime: 1e-9, MaxTime: 1e-3}
	opt.Warmup = 1e-9
	for _, c := range []struct {
		past int
		want profiler.Status
		msg  string
	}{
		{0, profiler.StatusOK, ""},
		{1, profiler.StatusMismatch, "the kernel wrote past the end of y (100 f32 elements, 400 B): 4 of the 4096 bytes after it changed, from element 100 to 100"},
		{0, profiler.StatusOK, ""}, // the guard is whole again
		{3, profiler.StatusMismatch, "from element 100 to 102"},
	} {
		res := r.Run(context.Background(), profiler.Spec{Kernel: oobFamily{c.past}.Name(), DType: profiler.F32, Dims: map[string]int{"N": 100}}, opt, nil)
		if res.Status != c.want || !strings.Contains(res.Error, c.msg) {
			t.Errorf("%d past the end: status %s (%s), want %s with %q", c.past, res.Status, res.Error, c.want, c.msg)
		}
	}
}
