package softmaxbwd

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// emulate is dX of one row as the kernels compute it: Σ dY·Y in f32 over
// 256 per-thread chunks and a tree, then dX = Y·(dY − Σ) in f32, plus
// extra added to the row's sum (a wrong kernel) and dX scaled by scale.
func emulate(y, dy []float32, extra float32, scale float64) []float32 {
	const wg = 256
	part := make([]float32, wg)
	chunk := (len(y) + wg - 1) / wg
	for w := range wg {
		for c := w * chunk; c < min((w+1)*chunk, len(y)); c++ {
			part[w] += dy[c] * y[c]
		}
	}
	for s := wg / 2; s > 0; s /= 2 {
		for w := range s {
			part[w] += part[w+s]
		}
	}
	sum := part[0] + extra
	out := make([]float32, len(y))
	for c := range y {
		out[c] = float32(float64(y[c]*(dy[c]-sum)) * scale)
	}
	return out
}

// TestToleranceAtLargeCols: f32 rows of 65536 from a correct f32
// computation pass with headroom, while a 1e-3 relative error and an
// off-by-one term in the row's sum are caught.
func TestToleranceAtLargeCols(t *testing.T) {
	const rows, cols = 2, 65536
	rng := profiler.NewRNG(3)
	y := make([]float32, rows*cols)
	dy := make([]float32, rows*cols)
	for i := range y {
		y[i] = float32(rng.Float64()) // the plan's inputs: Y uniform in [0,1], dY normal
		dy[i] = float32(rng.Normal())
	}
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Dims: map[string]int{"rows": rows, "cols": cols}}
	ref, err := SoftmaxBwd{}.Reference(s, profiler.Inputs{"Y": y, "dY": dy}, rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	tol := SoftmaxBwd{}.Tolerance(profiler.F32)
	got := func(extra func(r int) float32, scale float64) map[string][]float32 {
		out := make([]float32, 0, rows*cols)
		for r := range rows {
			out = append(out, emulate(y[r*cols:(r+1)*cols], dy[r*cols:(r+1)*cols], extra(r), scale)...)
		}
		return map[string][]float32{"dX": out}
	}
	none := func(int) float32 { return 0 }
	if v := run.Verify(ref, got(none, 1), tol); !v.Pass {
		t.Fatalf("correct f32 kernel at cols=%d: %d mismatches, worst %s", cols, v.Mismatches, v.Worst)
	}
	if v := run.Verify(ref, got(none, 1+1e-3), tol); v.Pass || v.Mismatches < rows*cols/2 {
		t.Errorf("dX scaled by 1+1e-3: %d of %d mismatches, want most (worst %s)", v.Mismatches, rows*cols, v.Worst)
	}
	// Off by one: the row's sum takes the next row's first term.
	next := func(r int) float32 {
		n := (r + 1) % rows * cols
		return y[n] * dy[n]
	}
	if v := run.Verify(ref, got(next, 1), tol); v.Pass {
		t.Errorf("sum with one extra term passes (worst %s)", v.Worst)
	}
	// The model's headroom stays meaningful: a correct kernel uses a small
	// part of its bound.
	if v := run.Verify(ref, got(none, 1), tol); v.WorstRatio > 0.5 || math.IsNaN(v.WorstRatio) {
		t.Errorf("correct kernel uses %.2f of its bound, want < 0.5", v.WorstRatio)
	}
}
