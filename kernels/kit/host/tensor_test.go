package host

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// The fast Load/Store paths must match the profiler's codecs bit for bit,
// special values included.
func TestTensorMatchesCodecs(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65520, 1e-40, -1e-45, 3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xff800001)}
	rng := profiler.NewRNG(9)
	vals := append([]float32(nil), special...)
	for range 5000 {
		vals = append(vals, math.Float32frombits(uint32(rng.Uint64())))
	}
	for _, dt := range profiler.FloatDTypes {
		const off = 3 // an element offset inside the buffer
		buf := make([]byte, (len(vals)+off+1)*dt.Size())
		tn := Tensor{DType: dt, b: buf}
		tn.Store(off, vals)
		want := make([]byte, len(vals)*dt.Size())
		dt.Encode(want, vals)
		got := buf[off*dt.Size() : (off+len(vals))*dt.Size()]
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s store: byte %d (element %d, %v) = %#x, codec %#x", dt, i, i/dt.Size(), vals[i/dt.Size()], got[i], want[i])
			}
		}
		back := make([]float32, len(vals))
		tn.Load(off, back)
		ref := make([]float32, len(vals))
		dt.Decode(want, ref)
		for i := range ref {
			if math.Float32bits(back[i]) != math.Float32bits(ref[i]) {
				t.Fatalf("%s load: element %d = %#x, codec %#x", dt, i, math.Float32bits(back[i]), math.Float32bits(ref[i]))
			}
		}
		if tn.At(off) != ref[0] && !math.IsNaN(float64(ref[0])) {
			t.Errorf("%s At = %v, want %v", dt, tn.At(off), ref[0])
		}
	}
}
