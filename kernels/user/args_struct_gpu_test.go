package user

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda/cudatest"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// affineStructCU takes its two pointers and three scalars in one struct by
// value, as causal-conv1d's kernels take ConvParamsBase; the bool between
// the int and the float and the int64_t after them need C's padding.
const affineStructCU = `#include <cstdint>
struct AffineParams {
    const float* __restrict__ x_ptr;
    int n;
    bool relu;
    float a;
    int64_t b_times_4;
    float* __restrict__ y_ptr;
};
__global__ void affine(AffineParams p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        float v = p.a * p.x_ptr[i] + 0.25f * (float)p.b_times_4;
        p.y_ptr[i] = p.relu && v < 0.0f ? 0.0f : v;
    }
}
`

const affineStructYAML = `name: t_cuda_struct_affine
sources: {cuda: k.cu}
dims:
  N: {default: 10000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: affine, grid: ["cdiv(N, 128)"], threads: [128], args: [ARGS]}
check: {kernel: ref/kernel.yaml}
`

const affineRefCU = `__global__ void affine_ref(const float* x, float* y, int n, float a, float b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
`

const affineRefYAML = `name: t_cuda_struct_affine_ref
sources: {cuda: k.cu}
dims:
  N: {default: 10000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: affine_ref, grid: ["cdiv(N, 128)"], threads: [128], args: [x, y, N, 2.0, 3.0]}
check: none
`

// A CUDA kernel taking a struct of two pointers and scalars by value runs
// and matches a plain-argument reference; the twin whose manifest swaps
// the buffers of x_ptr and y_ptr, and the one giving b's value to a, are
// caught as mismatches. Skips without a CUDA driver.
func TestStructArgOnCUDA(t *testing.T) {
	cases := []struct {
		name, args string
		want       profiler.Status
	}{
		{"right", "{x_ptr: x, y_ptr: y, n: N, a: 2.0, b_times_4: 12}", profiler.StatusOK},
		{"a and b swapped", "{x_ptr: x, y_ptr: y, n: N, a: 3.0, b_times_4: 8}", profiler.StatusMismatch},
		{"pointers swapped", "{x_ptr: y, y_ptr: x, n: N, a: 2.0, b_times_4: 12}", profiler.StatusMismatch},
	}
	fams := map[string]*Family{}
	for _, c := range cases {
		y := strings.Replace(affineStructYAML, "ARGS", c.args, 1)
		y = strings.Replace(y, "t_cuda_struct_affine", "t_cuda_struct_affine_"+strings.ReplaceAll(c.name, " ", "_"), 1)
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": affineStructCU, "ref/kernel.yaml": affineRefYAML, "ref/k.cu": affineRefCU}))
		if c.name == "pointers swapped" { // an output in a const pointer field is refused at load
			if err == nil || !strings.Contains(err.Error(), "output buffer y goes to field `const float* x_ptr`") {
				t.Errorf("pointers swapped: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev); err != nil {
			t.Fatal(err)
		}
		fams[c.name] = f
	}
	be := cudatest.OpenOrSkip(t)
	r := run.NewRunner(be)
	defer r.Close()
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 0.05, MinSamples: 5, MinTime: 0.01, MaxTime: 0.2}
	for _, c := range cases {
		f := fams[c.name]
		if f == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
