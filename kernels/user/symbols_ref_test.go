package user

import (
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The example's reference gets the tap table as an input: a convolution
// with the taps it was given passes, the broken twin's reversed taps do
// not, and neither does the zero table a blanked cudaMemcpyToSymbol leaves.
func TestConstantTableExampleReference(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/constant_table/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, h := 300, 40
	s := profiler.Spec{Kernel: f.Name(), Dims: map[string]int{"imageW": w, "imageH": h}}.WithDefaults(f.Schema())
	src := profiler.Fill(profiler.BufferSpec{Name: "src", Type: profiler.F32, Elems: int64(w * h), Init: profiler.InitUniform, Lo: 0, Hi: 1}, 1)
	taps := profiler.Fill(profiler.BufferSpec{Name: "c_Kernel", Type: profiler.F32, Elems: 17, Init: profiler.InitUniform, Lo: -0.5, Hi: 0.5}, 2)
	ref, err := f.Reference(s, profiler.Inputs{"src": src, "c_Kernel": taps}, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	conv := func(tap func(k int) float32) []float32 {
		out := make([]float32, w*h)
		for y := range h {
			for x := range w {
				var sum float32
				for k := -8; k <= 8; k++ {
					xs := min(max(x+k, 0), w-1)
					sum += tap(k) * src[y*w+xs]
				}
				out[y*w+x] = sum
			}
		}
		return out
	}
	tol := f.Tolerance(s.DType)
	for _, c := range []struct {
		name string
		out  []float32
		pass bool
	}{
		{"convolution", conv(func(k int) float32 { return taps[8-k] }), true},
		{"taps reversed (the broken twin)", conv(func(k int) float32 { return taps[8+k] }), false},
		{"table never filled", conv(func(int) float32 { return 0 }), false},
	} {
		if v := run.Verify(ref, map[string][]float32{"dst": c.out}, tol); v.Pass != c.pass {
			t.Errorf("%s: pass %v, want %v (%s)", c.name, v.Pass, c.pass, v.Worst)
		}
	}
}
