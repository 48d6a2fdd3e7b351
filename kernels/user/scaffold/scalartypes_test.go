package scaffold

import "testing"

const scalarTypesProgram = `#include <cuda_fp8.h>
__global__ void rgb_to_gray(const unsigned char* img, float* gray, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gray[i] = 0.21f * img[3 * i] + 0.72f * img[3 * i + 1] + 0.07f * img[3 * i + 2];
}

__global__ void quantize(const float* x, int8_t* q, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = (int8_t)fmaxf(-127.f, fminf(127.f, rintf(x[i] / scale)));
}

__global__ void dsum(const double* x, double* out, const unsigned short* w, uint32_t* mask, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { atomicAdd(out, x[i] * w[i]); atomicOr(mask, 1u << (i & 31)); }
}

__global__ void fp8_decode(const __nv_fp8_e4m3* w, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = float(w[i]);
}
`

// TestScaffoldInfersScalarTypes: mltop new gives each buffer the dtype of
// its pointee (unsigned char u8 with values 0…255, int8_t i8, double f64,
// unsigned short u16, uint32_t u32, __nv_fp8_e4m3 fp8e4m3), and the
// manifest loads.
func TestScaffoldInfersScalarTypes(t *testing.T) {
	res, err := Manifest(Request{Name: "scalars", SrcPath: "k.cu", Src: scalarTypesProgram, Entries: []string{"rgb_to_gray", "quantize", "dsum", "fp8_decode"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		`{name: img, dtype: u8, shape: [n], init: "randint(0, 256)"}`,
		"{name: q, dtype: i8,",
		`{name: x_2, dtype: f64, shape: [n], init: "normal(0, 1)"}`,
		"{name: out, dtype: f64,",
		`{name: w, dtype: u16, shape: [n], init: "randint(0, 16)"}`,
		"{name: mask, dtype: u32,",
		`{name: w_2, dtype: fp8e4m3, shape: [n], init: "normal(0, 1)"}`,
	}, nil)
	load(t, res.Text, "k.cu", scalarTypesProgram)
}
