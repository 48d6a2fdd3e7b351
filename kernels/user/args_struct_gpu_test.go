package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
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
	var twins []cudaTwin
	for _, c := range cases {
		y := strings.Replace(affineStructYAML, "ARGS", c.args, 1)
		y = strings.Replace(y, "t_cuda_struct_affine", "t_cuda_struct_affine_"+strings.ReplaceAll(c.name, " ", "_"), 1)
		files := map[string]string{"kernel.yaml": y, "k.cu": affineStructCU, "ref/kernel.yaml": affineRefYAML, "ref/k.cu": affineRefCU}
		if c.name == "pointers swapped" { // an output in a const pointer field is refused at load
			if _, err := Load(usertest.Write(t, files)); err == nil || !strings.Contains(err.Error(), "output buffer y goes to field `const float* x_ptr`") {
				t.Errorf("pointers swapped: %v", err)
			}
			continue
		}
		twins = append(twins, loadCUDATwin(t, c.name, files, profiler.F32, c.want))
	}
	runTwinsOnCUDA(t, twins, profiler.StopRule{Noise: 0.05, MinSamples: 5, MinTime: 0.01, MaxTime: 0.2})
}
