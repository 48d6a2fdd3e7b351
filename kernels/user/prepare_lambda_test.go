package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// lambdaSource annotates the lambdas of its device code as nvcc's
// --extended-lambda allows: written out, both spaces, through a macro of
// its own, and mutable.
const lambdaSource = `#define LAMBDA_HD __host__ __device__
template <typename F>
__device__ void each(const T* X, T* Y, int n, F&& f) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) f(Y[i], X[i]);
}
__global__ void k(const T* X, T* Y, int rows, int cols) {
  float s = 2.0f;
  each(X, Y, rows * cols, [=] __device__(T& d, const T& v) { d = (float)v * s; });
  auto add = [&] __host__ __device__ (float a) mutable -> float { return a + s; };
  auto mul = [s] LAMBDA_HD (float a) { return a * s; };
  float w[2] = {add(1.0f), mul(2.0f)};
  Y[0] = (T)(w[0] + w[1]);
}
int main() { auto h = [] __host__ __device__ () { return 1; }; return h(); }
`

// TestPrepareDropsDeviceLambdaAnnotations: the annotations of lambdas in
// device code become spaces (each line keeps its length and columns), the
// host code is blanked as ever, and NVRTC (without --extended-lambda)
// compiles the result.
func TestPrepareDropsDeviceLambdaAnnotations(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("lambdas"), "k.cu": lambdaSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	code := prog.Code[strings.Index(prog.Code, "#line 1"):]
	code = code[strings.IndexByte(code, '\n')+1:]
	got, want := strings.Split(code, "\n"), strings.Split(lambdaSource, "\n")
	for i, w := range want[:len(want)-2] {
		if i >= len(got) || len(got[i]) != len(w) {
			t.Fatalf("line %d changed length:\n%s", i+1, code)
		}
		if strings.Contains(w, "[") && strings.Contains(got[i], "__device__") || strings.Contains(got[i], "LAMBDA_HD (") {
			t.Errorf("line %d keeps a lambda's annotation: %s", i+1, got[i])
		}
	}
	for _, kept := range []string{"#define LAMBDA_HD __host__ __device__", "__device__ void each(", "float w[2] = {add(1.0f), mul(2.0f)};"} {
		if !strings.Contains(code, kept) {
			t.Errorf("%q is gone:\n%s", kept, code)
		}
	}
	compileOrSkip(t, prog)
}
