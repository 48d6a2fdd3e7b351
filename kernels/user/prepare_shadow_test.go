package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// shadowedConstProgram has a file-scope constant only main reads and a
// kernel whose parameter of the same name shadows it.
const shadowedConstProgram = `const int rows = 100000000;
int main() { float* p = new float[rows]; delete[] p; return 0; }
__global__ void k(const T* X, T* Y, const int rows, int cols) {
  if (threadIdx.x < rows) Y[threadIdx.x] = 2 * X[threadIdx.x];
}
`

// The constant is blanked with main (the parameter is no use of it), so
// NVRTC has nothing to warn of (#177-D "declared but never referenced").
func TestShadowedConstantBlankedWithMain(t *testing.T) {
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("shadowed_const"), "k.cu": shadowedConstProgram}), profiler.F32)
	if strings.Contains(prog.Code, "const int rows = 100000000;") {
		t.Errorf("the constant only main reads is kept:\n%s", prog.Code)
	}
	if log := compileOrSkip(t, prog); strings.Contains(log, "177") {
		t.Errorf("NVRTC warns:\n%s", log)
	}
}
