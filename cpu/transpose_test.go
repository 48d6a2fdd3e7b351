package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Helpers shared by the training-op and seed-kernel tests (transpose,
// rmsnorm_bwd, cross_entropy, embedding_bwd, sdpa_multi, gated_delta_chunk).

// trainOpts is a short, hot measurement that checks every row.
func trainOpts() profiler.Options {
	o := profiler.DefaultOptions()
	o.Hot = true
	o.Warmup = 0.001
	o.MaxRows = 1 << 16
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 2, MinTime: 1e-4, MaxTime: 0.02}
	return o
}

// trainCase is one spec expected to run with a given status.
type trainCase struct {
	name   string
	dtypes []profiler.DType
	knobs  map[string]int
	dims   map[string]int
	flags  map[string]bool
}

// runTrainCases runs each case for each of its dtypes and wants ok with
// every row checked, a positive time, and GB/s (all of these move bytes).
func runTrainCases(t *testing.T, kernel string, cases []trainCase) {
	t.Helper()
	r := run.NewRunner(newBackend(t))
	for _, c := range cases {
		for _, dt := range c.dtypes {
			t.Run(fmt.Sprintf("%s/%s", c.name, dt), func(t *testing.T) {
				s := profiler.Spec{Kernel: kernel, DType: dt, Knobs: c.knobs, Dims: c.dims, Flags: c.flags}
				res := r.Run(context.Background(), s, trainOpts(), nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("status %s: %s", res.Status, res.Error)
				}
				v := res.Verdict
				if v.Checked == 0 || v.RowsChecked != v.RowsTotal {
					t.Errorf("checked %d elements over %d of %d rows; want every row of a small shape", v.Checked, v.RowsChecked, v.RowsTotal)
				}
				if res.Stats.N < 1 || res.Stats.Median <= 0 || res.GBps <= 0 {
					t.Errorf("timing: n=%d median %.0f ns, %g GB/s", res.Stats.N, res.Stats.Median, res.GBps)
				}
			})
		}
	}
}

// wantMismatch runs s with the family's code replaced by the broken
// kernel and wants a mismatch with mismatching elements.
func wantMismatch(t *testing.T, broken string, s profiler.Spec) profiler.Result {
	t.Helper()
	r := run.NewRunner(remap{newBackend(t), broken})
	res := r.Run(context.Background(), s, trainOpts(), nil)
	if res.Status != profiler.StatusMismatch {
		t.Fatalf("broken kernel %s: status %s (%s), want mismatch", broken, res.Status, res.Error)
	}
	if res.Verdict == nil || res.Verdict.Mismatches == 0 {
		t.Fatalf("broken kernel %s: verdict %+v, want mismatches", broken, res.Verdict)
	}
	return res
}

func init() {
	// Writes the tile untransposed: Y = X reshaped, wrong wherever rows ≠ cols.
	cpu.RegisterKernel("test_transpose_copy", func(g *cpu.Group) {
		dt := g.DType()
		n := g.Int("rows") * g.Int("cols")
		if g.ID == [3]int{} {
			buf := make([]float32, n)
			g.Arg(0, dt).Load(0, buf)
			g.Arg(1, dt).Store(0, buf)
		}
	})
}

func TestTransposeOK(t *testing.T) {
	all := profiler.FloatDTypes
	runTrainCases(t, "transpose", []trainCase{
		{"square tiles", all, map[string]int{"TILE": 32, "WG": 256}, map[string]int{"rows": 64, "cols": 96}, nil},
		{"ragged edges", all, map[string]int{"TILE": 16, "WG": 64}, map[string]int{"rows": 37, "cols": 53}, nil},
		{"one row", []profiler.DType{profiler.BF16}, map[string]int{"TILE": 64, "WG": 1024}, map[string]int{"rows": 1, "cols": 130}, nil},
	})
}

func TestTransposeBrokenIsMismatch(t *testing.T) {
	wantMismatch(t, "test_transpose_copy", profiler.Spec{Kernel: "transpose", DType: profiler.F32, Dims: map[string]int{"rows": 24, "cols": 40}})
}
