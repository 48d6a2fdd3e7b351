package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// PyTorch's 8-bit float types are types of their own holding the
// toolkit's (<cuda_fp8.h>) under c10::, at:: and torch::, by every torch
// header (c10/util/Float8_e4m3fn.h too); with libcu++ they get a
// numeric_limits whose values are floats. The toolkit's own fp8 types get
// none from mltop: CCCL 3 has one, and a second failed on NVRTC 13.
func TestTorchHeaderFloat8Types(t *testing.T) {
	for _, h := range []string{"torch/extension.h", "c10/util/Float8_e4m3fn.h", "c10/util/Float8_e5m2.h", "ATen/ATen.h"} {
		s, ok := cudaStub(h, toolkitHeaders{dirs: []string{"/nowhere"}, libcu: true})
		for _, want := range []string{
			"#if __has_include(<cuda_fp8.h>)", "#include <cuda_fp8.h>",
			"MLTOP_C10_FLOAT8_(Float8_e4m3fn, __nv_fp8_e4m3)", "MLTOP_C10_FLOAT8_(Float8_e5m2, __nv_fp8_e5m2)",
			"namespace at { using c10::Float8_e4m3fn; using c10::Float8_e5m2; }",
			"template <> class numeric_limits<c10::Float8_e4m3fn> {", "static constexpr float max() noexcept { return 448.0f; }",
			"static constexpr float lowest() noexcept { return -57344.0f; }", "static constexpr float min() noexcept { return 6.103515625e-05f; }",
		} {
			if !ok || !strings.Contains(s, want) {
				t.Errorf("%s: want %q in\n%s", h, want, s)
			}
		}
		if strings.Contains(s, "numeric_limits<__nv_") {
			t.Errorf("%s specializes numeric_limits for a toolkit type:\n%s", h, s)
		}
	}
	// without libcu++ there is no numeric_limits to specialize
	if s, _ := cudaStub("torch/extension.h", toolkitHeaders{}); !strings.Contains(s, "MLTOP_C10_FLOAT8_(Float8_e4m3fn, __nv_fp8_e4m3)") || strings.Contains(s, "numeric_limits") {
		t.Errorf("torch/extension.h without libcu++:\n%s", s)
	}
	if s, _ := cudaStub("vector", toolkitHeaders{libcu: true}); strings.Contains(s, "Float8") {
		t.Errorf("<vector> declares PyTorch's fp8 types:\n%s", s)
	}
}

// torchFloat8Source uses c10's fp8 types as sgl-kernel's utils.h and
// per-token quantization kernels do: the largest value as a float
// constant, a clamp, a conversion to the fp8 type, at:: and the e5m2 type.
const torchFloat8Source = `#include <torch/extension.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
using FP8_TYPE = c10::Float8_e4m3fn;
__device__ constexpr auto FP8_MAX = std::numeric_limits<FP8_TYPE>::max();
static_assert(std::numeric_limits<at::Float8_e4m3fn>::lowest() == -448.0f, "e4m3 lowest");
static_assert(std::numeric_limits<c10::Float8_e5m2>::max() == 57344.0f, "e5m2 max");
static_assert(std::numeric_limits<c10::Float8_e4m3fn>::min() == 0.015625f, "e4m3 min");
static_assert(std::numeric_limits<c10::Float8_e5m2>::is_specialized && !std::numeric_limits<c10::Float8_e4m3fn>::has_infinity, "");
__global__ void k(const T* X, T* Y, int rows, int cols) {
  float v = fmaxf(fminf((float)X[threadIdx.x] / FP8_MAX, FP8_MAX), -FP8_MAX);
  FP8_TYPE q = static_cast<FP8_TYPE>(v);
  c10::Float8_e5m2 r = static_cast<c10::Float8_e5m2>(v);
  FP8_TYPE implicit = v;           // c10's types convert from float
  float back = implicit * 0.5f;    // and to float, implicitly
  Y[threadIdx.x] = (T)(back + static_cast<float>(q) + static_cast<float>(r) + (v > std::numeric_limits<c10::Float8_e5m2>::infinity() ? 1.0f : 0.0f));
}
`

// TestTorchFloat8CompilesWithNVRTC compiles torchFloat8Source at each
// dtype with NVRTC where it is found; it skips elsewhere.
func TestTorchFloat8CompilesWithNVRTC(t *testing.T) {
	m := strings.Replace(usertest.Manifest("torch_fp8"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": torchFloat8Source})
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		prog, _ := preparedProgram(t, path, dt)
		compileOrSkip(t, prog)
	}
}
