package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// fnuzSource names PyTorch's fnuz 8-bit floats as a kernel shared with
// ROCm does: one byte each, converting to and from float, with limits.
const fnuzSource = `#include <torch/all.h>
#include <c10/util/Float8_e4m3fnuz.h>
static_assert(sizeof(c10::Float8_e4m3fnuz) == 1 && sizeof(at::Float8_e5m2fnuz) == 1, "one byte each");
__global__ void k(const T* X, T* Y, int rows, int cols) {
  c10::Float8_e4m3fnuz q = (float)X[threadIdx.x];
  torch::Float8_e5m2fnuz r((float)X[threadIdx.x]);
  float lim = std::numeric_limits<c10::Float8_e4m3fnuz>::max() + std::numeric_limits<c10::Float8_e5m2fnuz>::lowest();
  Y[threadIdx.x] = (T)((float)q + (float)r + lim);
}
`

// TestTorchFnuzTypes: every torch header declares the fnuz types under
// c10::, at:: and torch::, with numeric_limits (240 and 57344 at most)
// under libcu++; the kernel naming them compiles where NVRTC is found.
func TestTorchFnuzTypes(t *testing.T) {
	s, _ := cudaStub("c10/util/Float8_e4m3fnuz.h", toolkitHeaders{dirs: []string{"/nowhere"}, libcu: true})
	for _, want := range []string{"MLTOP_C10_FNUZ_(Float8_e4m3fnuz, 4, 3, 8)", "MLTOP_C10_FNUZ_(Float8_e5m2fnuz, 5, 2, 16)",
		"namespace at { using c10::Float8_e4m3fnuz; using c10::Float8_e5m2fnuz; }",
		"template <> class numeric_limits<c10::Float8_e4m3fnuz> {", "static constexpr float max() noexcept { return 240.0f; }"} {
		if !strings.Contains(s, want) {
			t.Errorf("want %q in\n%s", want, s)
		}
	}
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("fnuz"), "k.cu": fnuzSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// TestFnuzBufferRefused: an fp8 buffer bound to a pointer to a fnuz type
// is refused, naming the type: mltop's fp8 buffers are the other formats.
func TestFnuzBufferRefused(t *testing.T) {
	src := "#include <torch/all.h>\n__global__ void k(const c10::Float8_e4m3fnuz* X, T* Y, int rows, int cols) { Y[0] = (float)X[0]; }\n"
	m := strings.Replace(usertest.Manifest("fnuz_buf"), "{name: X, dtype: T,", "{name: X, dtype: fp8e4m3,", 1)
	if !strings.Contains(m, "dtype: fp8e4m3") {
		t.Fatalf("manifest not rewritten:\n%s", m)
	}
	_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src}))
	if err == nil || !strings.Contains(err.Error(), "c10::Float8_e4m3fnuz is PyTorch's fnuz format") || !strings.Contains(err.Error(), "uint8_t*") {
		t.Fatalf("want the fnuz refusal, got %v", err)
	}
}
