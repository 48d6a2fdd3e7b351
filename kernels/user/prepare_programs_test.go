package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A sample program guards its kernel header with #if CUDART_VERSION, which
// nvcc defines through the cuda_runtime.h it includes in every .cu file
// and NVRTC does not: mltop defines it ahead of the source from the
// compiler's version, only for sources that mention it.
func TestPrepareDefinesCudartVersion(t *testing.T) {
	withToolkit(t, fullToolkit...)
	header := "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = X[threadIdx.x]; }\n"
	for _, tc := range []struct {
		name, main string
		defined    bool
	}{
		{"tested by #if", "#include <stdio.h>\n#if CUDART_VERSION >= 2020\n#include \"k.cuh\"\n#endif\nint main() { return 0; }\n", true},
		{"used in host code only", "#include \"k.cuh\"\nint main() { printf(\"%d\", CUDART_VERSION); return 0; }\n", true},
		{"never mentioned", "#include \"k.cuh\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("rtver"), "k.cu": tc.main, "k.cuh": header})
			prog, _ := preparedProgram(t, path, profiler.F32)
			def := strings.Index(prog.Code, "#define CUDART_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)")
			if (def >= 0) != tc.defined {
				t.Fatalf("CUDART_VERSION defined %v, want %v:\n%s", def >= 0, tc.defined, prog.Code)
			}
			if use := strings.Index(prog.Code, "#if CUDART_VERSION"); def >= 0 && use >= 0 && use < def {
				t.Errorf("defined after its #if:\n%s", prog.Code)
			}
		})
	}
}

// A PyTorch extension keeps its kernels beside binding macros that define
// host functions (a macro of the file per launcher, PYBIND11_MODULE from a
// host header): the program NVRTC gets has the kernel and none of them,
// with the lines kept.
func TestPrepareBlanksTorchBindings(t *testing.T) {
	withToolkit(t, fullToolkit...)
	src := `#include <torch/extension.h>
#define CHECK_F32(x) if ((x).dtype() != torch::kFloat32) { throw std::runtime_error("f32"); }
#define BIND(tag, elem) \
  void copy_##tag(torch::Tensor x, torch::Tensor y) { \
    CHECK_F32(x) \
    k<<<1, 32>>>((elem*)x.data_ptr(), (elem*)y.data_ptr(), 1, 32); \
  }
__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = X[threadIdx.x]; }
BIND(f32, float)
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("copy_f32", &copy_f32, "copy");
}
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("torchext"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	code := prog.Code[strings.Index(prog.Code, "#line 1"):]
	for _, gone := range []string{"BIND(f32, float)", "PYBIND11_MODULE", "m.def"} {
		if strings.Contains(code, gone) {
			t.Errorf("%q reaches NVRTC:\n%s", gone, code)
		}
	}
	if !strings.Contains(code, "__global__ void k(") || strings.Count(code, "\n") != strings.Count(src, "\n")+1 {
		t.Errorf("the kernel or the lines changed:\n%s", code)
	}
}

// A macro that a local header defines is not a host header's binding
// macro: an invocation of it with a body (a device function whose head the
// header's macro writes) reaches NVRTC with the header, while one whose
// header macro writes a host launcher is blanked as the file's own would be.
func TestPrepareKeepsDeviceFunctionsOfALocalHeadersMacro(t *testing.T) {
	withToolkit(t, fullToolkit...)
	header := "#define BINARY_OP(name) __device__ __forceinline__ float name(float a, float b)\n" +
		"#define LAUNCHER(name) void name(float* x) { k<<<1, 32>>>(x, x, 1, 32); }\n"
	src := `#include "ops.cuh"
BINARY_OP(add_op) { return a + b; }
__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x] = add_op(X[threadIdx.x], 1.f); }
LAUNCHER(launch_k)
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("hdrmacro"), "k.cu": src, "ops.cuh": header})
	prog, _ := preparedProgram(t, path, profiler.F32)
	code := prog.Code[strings.Index(prog.Code, "#line 1"):]
	if !strings.Contains(code, "BINARY_OP(add_op) { return a + b; }") {
		t.Errorf("the device function written through the header's macro does not reach NVRTC:\n%s", code)
	}
	if strings.Contains(code, "LAUNCHER(launch_k)") {
		t.Errorf("the host launcher written through the header's macro reaches NVRTC:\n%s", code)
	}
}
