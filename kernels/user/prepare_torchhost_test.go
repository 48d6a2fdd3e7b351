package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A torch extension's helper header says `using at::Tensor;` (mmcv's
// pytorch_cuda_helper.hpp) beside its kernels: PyTorch's headers are
// served as stubs that declare only its scalar types, so a name under
// c10::, at:: or torch:: that the stubs do not declare is host-only and
// blanked where no device code uses it; one they declare stays.
func TestTorchHostOnlyNamesBlanked(t *testing.T) {
	src := `#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
using at::Tensor;
typedef c10::cuda::CUDAStream Stream;
using at::Half;
namespace ext { using c10::BFloat16; }
__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0]; }
void launch(Tensor x, Stream s) {}
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("torch_host_names"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	for _, c := range []struct {
		decl string
		kept bool
	}{
		{"using at::Tensor;", false},
		{"typedef c10::cuda::CUDAStream Stream;", false},
		{"using at::Half;", true},
		{"using c10::BFloat16;", true},
	} {
		if strings.Contains(prog.Code, c.decl) != c.kept {
			t.Errorf("%q kept %v, want %v:\n%s", c.decl, !c.kept, c.kept, prog.Code)
		}
	}
	compileOrSkip(t, prog)
}
