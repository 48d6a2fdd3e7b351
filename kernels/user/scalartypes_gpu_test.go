package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// scalarTypesCU holds one kernel per buffer type the CUDA GPU tests run:
// u8 pixels to f32, an f32 → int8 quantize, an f64 sum, an fp8 e4m3
// decode (and encode).
const scalarTypesCU = `#include <cuda_fp8.h>
#include <stdint.h>

__global__ void rgb_to_gray(const unsigned char* img, float* gray, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gray[i] = 0.25f * img[3 * i] + 0.5f * img[3 * i + 1] + 0.25f * img[3 * i + 2];
}

__global__ void quantize_i8(const float* x, int8_t* q, float inv_scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = (int8_t)fmaxf(-127.0f, fminf(127.0f, rintf(x[i] * inv_scale)));
}

__global__ void sum_f64(const double* x, double* out, int n) {
    __shared__ double part[256];
    double s = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

__global__ void fp8_decode(const __nv_fp8_e4m3* w, float* y, __nv_fp8_e4m3* half_w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = float(w[i]);
        y[i] = 2.0f * v;
        half_w[i] = __nv_fp8_e4m3(0.5f * v);
    }
}
`

// scalarTypeGPUCases are the manifests (each with its ref.py) and a
// broken twin of each kernel that the check must catch.
var scalarTypeGPUCases = []struct {
	name, yaml, ref, from, to string
}{
	{"u8 image to f32", `dims: {N: {default: 100000}}
buffers:
  - {name: img, dtype: u8, shape: [N, 3], init: "randint(0, 256)"}
  - {name: gray, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: rgb_to_gray, grid: ["cdiv(N, 256)"], threads: [256], args: [img, gray, N]}
`, `import numpy as np
def reference(inputs, dims):
    img = inputs["img"]
    assert img.dtype == np.uint8
    rgb = img.astype(np.float64)
    return {"gray": 0.25 * rgb[:, 0] + 0.5 * rgb[:, 1] + 0.25 * rgb[:, 2]}
`, "0.25f * img[3 * i + 2]", "0.25f * img[3 * i + 1]"},
	{"int8 quantize", `dims: {N: {default: 100000}}
buffers:
  - {name: x, dtype: f32, shape: [N], init: "normal(0, 2)"}
  - {name: q, dtype: i8, shape: [N], out: true}
dispatches:
  - {entry: quantize_i8, grid: ["cdiv(N, 256)"], threads: [256], args: [x, q, 32, N]}
`, `import numpy as np
def reference(inputs, dims):
    return {"q": np.clip(np.rint(inputs["x"] * 32), -127, 127).astype(np.int8)}
`, "rintf(x[i] * inv_scale)", "truncf(x[i] * inv_scale)"},
	{"f64 sum", `dims: {N: {default: 1000000}}
buffers:
  - {name: x, dtype: f64, shape: [N], init: "normal(1, 1)"}
  - {name: out, dtype: f64, shape: [1], inout: true, init: zeros, terms: N}
dispatches:
  - {entry: sum_f64, grid: [120], threads: [256], args: [x, out, N], tgm: [{name: part, bytes: 2048}]}
`, `import numpy as np
def reference(inputs, dims):
    return {"out": inputs["out"] + inputs["x"].sum()}
`, "double s = 0.0;", "float s = 0.0f;"},
	{"fp8e4m3 decode", `dims: {N: {default: 100000}}
buffers:
  - {name: w, dtype: fp8e4m3, shape: [N], init: "normal(0, 20)"}
  - {name: y, dtype: f32, shape: [N], out: true}
  - {name: half_w, dtype: fp8e4m3, shape: [N], out: true}
dispatches:
  - {entry: fp8_decode, grid: ["cdiv(N, 256)"], threads: [256], args: [w, y, half_w, N]}
`, `import numpy as np
def reference(inputs, dims):
    w = inputs["w"]  # float32 values of the e4m3 grid
    assert w.dtype == np.float32
    return {"y": 2.0 * w.astype(np.float64), "half_w": 0.5 * w.astype(np.float64)}
`, "float v = float(w[i]);", "float v = float(*(const __nv_fp8_e5m2*)&w[i]);"},
}

// Every new buffer type on a CUDA GPU with the real Runner: each kernel
// verifies, and its broken twin (wrong channel, truncation instead of
// rounding, an f32 accumulator in an f64 sum, fp8 bytes read as e5m2) is
// a mismatch. The manifests load and plan without a GPU; the rest skips
// without a CUDA driver.
func TestScalarTypesOnCUDA(t *testing.T) {
	usePython(t)
	var twins []cudaTwin
	for _, c := range scalarTypeGPUCases {
		for _, broken := range []bool{false, true} {
			src, want, name := scalarTypesCU, profiler.StatusOK, "t_cuda_"+strings.ReplaceAll(c.name, " ", "_")
			if broken {
				src, want, name = strings.Replace(src, c.from, c.to, 1), profiler.StatusMismatch, name+"_broken"
				if src == scalarTypesCU {
					t.Fatalf("%s: %q is not in the source", c.name, c.from)
				}
			}
			y := "name: " + name + "\nsources: {cuda: k.cu}\ndtypes: [f32]\n" + c.yaml + "check: {python: ref.py}\n"
			twins = append(twins, loadCUDATwin(t, name, map[string]string{"kernel.yaml": y, "k.cu": src, "ref.py": c.ref}, profiler.F32, want))
		}
	}
	runTwinsOnCUDA(t, twins, profiler.StopRule{Noise: 0.05, MinSamples: 10, MinTime: 0.01, MaxTime: 0.1})
}
