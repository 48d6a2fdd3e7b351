package metal_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

func f32Bytes(xs []float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// MLX-style bodies, written out by WriteMLXKernel and run on the
// emulation: a templated elementwise body bounded by its input's shape
// buffer, and a row softmax whose row length is the template's N.
func TestWriteMLXKernelRunsOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	x := []float32{0.5, -1, 2, 3, 0, 1.5, -2, 4, 1, -0.25}

	scale := metal.MLXKernel{
		Name: "scale", Inputs: []metal.MLXArg{{Name: "inp", Type: "T"}}, Outputs: []metal.MLXArg{{Name: "out", Type: "T"}},
		Template: []metal.TemplateArg{{Name: "T", Value: "float"}, {Name: "N", Value: "3"}},
		Body: `uint elem = thread_position_in_grid.x;
if (elem >= uint(inp_shape[0])) return;
out[elem] = inp[elem] * T(N);`,
	}
	src, err := metal.WriteMLXKernel(scale)
	if err != nil {
		t.Fatal(err)
	}
	// inp_shape is `constant int*`: set with setBytes from the scalars
	// named inp_shape[k]. 3 groups of 4 threads: two past the end, which
	// the body's bound skips.
	shape := []profiler.Scalar{profiler.I32Param("inp_shape[0]", len(x))}
	got := emuRunScalars(t, eb, profiler.Program{Source: "scale", File: "scale.metal", Code: src, Entry: "scale"}, [3]int{3, 1, 1}, [3]int{4, 1, 1}, 12, shape, f32Bytes(x))
	for i, g := range got {
		want := float32(0)
		if i < len(x) {
			want = 3 * x[i]
		}
		if math.Float32frombits(g) != want {
			t.Errorf("scale: out[%d] = %g, want %g", i, math.Float32frombits(g), want)
		}
	}

	softmax := metal.MLXKernel{
		Name: "row_softmax", Inputs: []metal.MLXArg{{Name: "inp", Type: "T"}}, Outputs: []metal.MLXArg{{Name: "out", Type: "T"}},
		Template: []metal.TemplateArg{{Name: "T", Value: "float"}, {Name: "N", Value: "5"}},
		Body: `uint row = threadgroup_position_in_grid.x;
if (thread_index_in_threadgroup != 0) return;
T m = inp[row * N];
for (int j = 1; j < N; j++) m = max(m, inp[row * N + j]);
T s = 0;
for (int j = 0; j < N; j++) { out[row * N + j] = exp(inp[row * N + j] - m); s += out[row * N + j]; }
for (int j = 0; j < N; j++) out[row * N + j] /= s;`,
	}
	src, err = metal.WriteMLXKernel(softmax)
	if err != nil {
		t.Fatal(err)
	}
	got = emuRun(t, eb, profiler.Program{Source: "row_softmax", File: "row_softmax.metal", Code: src, Entry: "row_softmax"}, [3]int{2, 1, 1}, [3]int{32, 1, 1}, 10, f32Bytes(x))
	for r := 0; r < 2; r++ {
		var sum float64
		for j := 0; j < 5; j++ {
			sum += math.Exp(float64(x[5*r+j]))
		}
		for j := 0; j < 5; j++ {
			want := math.Exp(float64(x[5*r+j])) / sum
			if g := float64(math.Float32frombits(got[5*r+j])); math.Abs(g-want) > 1e-6 {
				t.Errorf("softmax row %d col %d = %g, want %g", r, j, g, want)
			}
		}
	}
}
