package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// halfScalarCU takes its scale by value as a 16-bit float, as NVIDIA's
// haxpy blog post does: half, __nv_bfloat16, and the dtype's own type.
const halfScalarCU = `#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void haxpy(int n, half a, const half* x, half* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

__global__ void baxpy(int n, __nv_bfloat16 a, const __nv_bfloat16* x, __nv_bfloat16* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16(__bfloat162float(a) * __bfloat162float(x[i]) + __bfloat162float(y[i]));
}

template <typename S>
__global__ void taxpy(int n, S a, const S* x, S* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (S)((float)a * (float)x[i] + (float)y[i]);
}
`

const halfScalarYAML = `sources: {cuda: k.cu}
dtypes: [DTYPE]
dims: {N: {default: 100000}}
values: {a: 2.1}
buffers:
  - {name: x, dtype: T, shape: [N], init: "normal(0, 1)"}
  - {name: y, dtype: T, shape: [N], init: "normal(0, 1)", inout: true}
dispatches:
  - {entry: ENTRY, grid: ["cdiv(N, 128)"], threads: [128], args: [N, a, x, y]}
check: {python: ref.py}
`

const halfScalarRef = `def reference(inputs, dims):
    return {"y": dims["a"] * inputs["x"].astype("float64") + inputs["y"].astype("float64")}
`

// A kernel taking `half a` (and `__nv_bfloat16 a`, and `S a` at f16 and
// bf16) by value runs and matches its reference; the broken twin, which
// reads the scale as a + 1, is caught. Skips without a CUDA driver.
func TestHalfScalarOnCUDA(t *testing.T) {
	var twins []cudaTwin
	for _, c := range []struct {
		entry, from, to string
		dt              profiler.DType
	}{
		{"haxpy", "__hfma(a, x[i], y[i])", "__hfma(__hadd(a, __float2half(1.0f)), x[i], y[i])", profiler.F16},
		{"baxpy", "__bfloat162float(a) * __bfloat162float(x[i])", "(__bfloat162float(a) + 1.0f) * __bfloat162float(x[i])", profiler.BF16},
		{"taxpy<T>", "(float)a * (float)x[i]", "((float)a + 1.0f) * (float)x[i]", profiler.F16},
		{"taxpy<T>", "(float)a * (float)x[i]", "((float)a + 1.0f) * (float)x[i]", profiler.BF16},
	} {
		for _, broken := range []bool{false, true} {
			src, want := halfScalarCU, profiler.StatusOK
			name := "t_cuda_half_scalar_" + strings.Trim(strings.NewReplacer("<", "_", ">", "").Replace(c.entry), "_") + "_" + string(c.dt)
			if broken {
				src, want, name = strings.Replace(src, c.from, c.to, 1), profiler.StatusMismatch, name+"_broken"
				if src == halfScalarCU {
					t.Fatalf("%s: %q is not in the source", name, c.from)
				}
			}
			y := "name: " + name + "\n" + strings.NewReplacer("ENTRY", `"`+c.entry+`"`, "DTYPE", string(c.dt)).Replace(halfScalarYAML)
			twins = append(twins, loadCUDATwin(t, name, map[string]string{"kernel.yaml": y, "k.cu": src, "ref.py": halfScalarRef}, c.dt, want))
		}
	}
	runTwinsOnCUDA(t, twins, profiler.StopRule{Noise: 0.05, MinSamples: 10, MinTime: 0.01, MaxTime: 0.1})
}
