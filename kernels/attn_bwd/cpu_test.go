package attnbwd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mltop/mltop/cpu"
	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	_ "github.com/mltop/mltop/kernels/attn_bwd_atomic"
	_ "github.com/mltop/mltop/kernels/attn_bwd_unfused"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Deliberately broken attn_bwd_atomic variants: the reference check must
// fail them.
const (
	// Every one of the WM warps adds the whole tile's dK/dV partial, as if
	// each lane holding a copy of a row added it: with WM=4 the 4×
	// overcount seed 000's comments describe.
	bwdOvercount = "test_attn_bwd_atomic_overcount"
	// The key loop stops one tile short.
	bwdSkipLastTile = "test_attn_bwd_atomic_skip_last_tile"
)

func init() {
	host.RegisterKernel(bwdOvercount, func(g *host.Group) { attnbwd.CPUAttnBwdAtomicVariant(g, g.Macro("WM"), 0) })
	host.RegisterKernel(bwdSkipLastTile, func(g *host.Group) { attnbwd.CPUAttnBwdAtomicVariant(g, 1, 1) })
}

// remapSource sends the compile of one program source to another CPU
// kernel: the family's plan (and its Setup) stay the same.
type remapSource struct {
	profiler.Backend
	from, to string
}

func (r remapSource) Compile(p profiler.Program) (profiler.Kernel, error) {
	if p.Source == r.from {
		p.Source = r.to
	}
	return r.Backend.Compile(p)
}

func bwdQuick() profiler.Options {
	o := profiler.DefaultOptions()
	o.Cache = profiler.CacheHot
	o.Warmup = 0.001
	o.MaxRows = 4096 // small shapes: every query row and every key row
	o.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 1, MinTime: 1e-4, MaxTime: 0.01}
	return o
}

func bwdSpec(kernel string, dt profiler.DType, knobs, dims map[string]int, flags map[string]bool) profiler.Spec {
	return profiler.Spec{Kernel: kernel, DType: dt, Knobs: knobs, Dims: dims, Flags: flags}
}

// gqaRagged: GQA (2 query heads per kv head), Lq not a multiple of BQ and
// Lk not a multiple of BK.
var gqaRagged = map[string]int{"B": 1, "H": 4, "Hkv": 2, "Lq": 40, "Lk": 56, "D": 64}

func TestAttnBwdFamiliesOK(t *testing.T) {
	type tc struct {
		name   string
		kernel string
		knobs  map[string]int
		dims   map[string]int
		flags  map[string]bool
	}
	var cases []tc
	fams := []struct {
		kernel string
		knobs  map[string]int
	}{
		{"attn_bwd_atomic", map[string]int{"BQ": 16, "BK": 16, "WM": 2, "WN": 1}},
		{"attn_bwd", map[string]int{"BQ_dq": 16, "BK_dq": 16, "WM_dq": 2, "BQ_dkv": 16, "BK_dkv": 16, "WM_dkv": 2}},
		{"attn_bwd_unfused", map[string]int{"BM": 32, "BN": 16}},
	}
	for _, f := range fams {
		for _, causal := range []bool{false, true} {
			cases = append(cases, tc{fmt.Sprintf("causal=%t", causal), f.kernel, f.knobs, gqaRagged, map[string]bool{"causal": causal}})
		}
	}
	cases = append(cases,
		tc{"mask causal", "attn_bwd_atomic", fams[0].knobs, gqaRagged, map[string]bool{"causal": true, "mask": true}},
		tc{"alias D=96", "attn_bwd", fams[1].knobs, map[string]int{"B": 2, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 96}, map[string]bool{"alias": true}},
		tc{"causal Lq>Lk masked rows", "attn_bwd", fams[1].knobs, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 40, "Lk": 24, "D": 64}, map[string]bool{"causal": true}},
		tc{"causal Lq>Lk masked rows", "attn_bwd_atomic", fams[0].knobs, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 40, "Lk": 24, "D": 64}, map[string]bool{"causal": true}},
		tc{"causal Lq>Lk masked rows", "attn_bwd_unfused", fams[2].knobs, map[string]int{"B": 1, "H": 2, "Hkv": 2, "Lq": 40, "Lk": 24, "D": 64}, map[string]bool{"causal": true}},
	)
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	r := run.NewRunner(be)
	for _, c := range cases {
		for _, dt := range profiler.FloatDTypes {
			t.Run(c.kernel+"/"+c.name+"/"+string(dt), func(t *testing.T) {
				res := r.Run(context.Background(), bwdSpec(c.kernel, dt, c.knobs, c.dims, c.flags), bwdQuick(), nil)
				if res.Status != profiler.StatusOK {
					t.Fatalf("status %s: %s", res.Status, res.Error)
				}
				v := res.Verdict
				t.Logf("max abs err %.3g, max rel err %.3g, rows: %s", v.MaxAbsErr, v.MaxRelErr, v.Rows)
				if v.Checked == 0 || v.RowsChecked != c.dims["B"]*(c.dims["H"]*c.dims["Lq"]+c.dims["Hkv"]*c.dims["Lk"]) {
					t.Errorf("checked %d elements over %d rows (%s), want every query and key row", v.Checked, v.RowsChecked, v.Rows)
				}
				if res.MemoryBytes <= 0 || res.FLOPs <= 0 {
					t.Errorf("memory %d B, FLOPs %g: both must be reported", res.MemoryBytes, res.FLOPs)
				}
			})
		}
	}
}

// An off-by-tile bug must fail the reference check: the 4× overcount of
// dK/dV and a key loop that stops one tile short.
func TestAttnBwdAtomicBrokenVariantsMismatch(t *testing.T) {
	knobs := map[string]int{"BQ": 32, "BK": 16, "WM": 4, "WN": 1}
	for _, broken := range []string{bwdOvercount, bwdSkipLastTile} {
		for _, causal := range []bool{false, true} {
			for _, dt := range profiler.FloatDTypes {
				t.Run(fmt.Sprintf("%s/causal=%t/%s", broken, causal, dt), func(t *testing.T) {
					be, _ := cpu.New()
					r := run.NewRunner(remapSource{be, "attn_bwd_atomic", broken})
					res := r.Run(context.Background(), bwdSpec("attn_bwd_atomic", dt, knobs, gqaRagged, map[string]bool{"causal": causal}), bwdQuick(), nil)
					if res.Status != profiler.StatusMismatch {
						t.Fatalf("status %s, want mismatch (verdict %+v)", res.Status, res.Verdict)
					}
					if res.Verdict.Mismatches < 10 {
						t.Errorf("only %d mismatched elements: the check is too lax for an off-by-tile bug", res.Verdict.Mismatches)
					}
				})
			}
		}
	}
	// The same shapes pass with the real kernel (the failures above are the bug's).
	be, _ := cpu.New()
	res := run.NewRunner(be).Run(context.Background(), bwdSpec("attn_bwd_atomic", profiler.BF16, knobs, gqaRagged, map[string]bool{"causal": true}), bwdQuick(), nil)
	if res.Status != profiler.StatusOK {
		t.Fatalf("real kernel: status %s: %s", res.Status, res.Error)
	}
}

// The three families compute the same gradients: run them on one shape and
// compare dQ, dK and dV element by element (f32, tight).
func TestAttnBwdFamiliesAgree(t *testing.T) {
	dims := map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 33, "Lk": 47, "D": 64}
	specs := []profiler.Spec{
		bwdSpec("attn_bwd_atomic", profiler.F32, map[string]int{"BQ": 8, "BK": 32, "WM": 1, "WN": 4}, dims, map[string]bool{"causal": true}),
		bwdSpec("attn_bwd", profiler.F32, map[string]int{"BQ_dq": 32, "BK_dq": 8, "WM_dq": 4, "BQ_dkv": 8, "BK_dkv": 64, "WM_dkv": 1}, dims, map[string]bool{"causal": true}),
		bwdSpec("attn_bwd_unfused", profiler.F32, map[string]int{"BM": 16, "BN": 128}, dims, map[string]bool{"causal": true}),
	}
	be, _ := cpu.New()
	r := run.NewRunner(be)
	for _, s := range specs {
		res := r.Run(context.Background(), s, bwdQuick(), nil)
		if res.Status != profiler.StatusOK {
			t.Fatalf("%s: status %s: %s", s.Kernel, res.Status, res.Error)
		}
		if res.Verdict.MaxAbsErr > 1e-4 {
			t.Errorf("%s: max abs err %g against the float64 reference", s.Kernel, res.Verdict.MaxAbsErr)
		}
	}
}
