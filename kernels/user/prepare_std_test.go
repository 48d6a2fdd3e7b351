package user

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// libcuToolkit is a toolkit with the 16-bit types and libcu++.
var libcuToolkit = []string{"cuda_fp16.h", "cuda_bf16.h", "cuda/std/type_traits", "cuda/std/cstdint", "cuda/std/limits"}

// int64Kernel indexes with int64_t and uint32_t and includes nothing, as
// PyTorch extension files do (their torch headers bring <cstdint>).
const int64Kernel = `__global__ void k(const T* X, T* Y, int rows, int cols) {
    const int64_t row = blockIdx.x;
    for (uint32_t i = threadIdx.x; i < (uint32_t)cols; i += blockDim.x) {
        Y[row * cols + i] = X[row * cols + i];
    }
}
`

// nsInt64Source declares an int64_t in a namespace and uses the global one.
const nsInt64Source = "namespace ns { using int64_t = long; }\n__global__ void k(const T* X, T* Y, int rows, int cols) { const int64_t r = blockIdx.x; Y[r] = X[r]; }\n"

// The fixed-width integer types are declared ahead of a CUDA source that
// uses them undeclared: libcu++'s with libcu++, the plain typedefs
// without; never when the source declares them or only host code uses them.
func TestPrepareStdintTypes(t *testing.T) {
	for _, c := range []struct {
		name, src string
		toolkit   []string
		want      []string // ahead of the source; none: nothing of <cstdint>
	}{
		{"used, no libcu++", int64Kernel, fullToolkit, []string{"#define MLTOP_STDINT_", "typedef unsigned int uint32_t;", "int64_t;"}},
		{"used, libcu++", int64Kernel, libcuToolkit, []string{"#include <cuda/std/cstdint>", "typedef cuda::std::int64_t int64_t;", "typedef cuda::std::uint32_t uint32_t;"}},
		{"declared by the source", "typedef long long int64_t;\ntypedef unsigned uint32_t;\n" + int64Kernel, libcuToolkit, nil},
		{"only host code", usertest.Source + "\nvoid launch(int64_t n) { (void)n; }\n", libcuToolkit, nil},
		// the source's own int64_t is not declared again (libcu++'s
		// <cuda/std/cstdint> declares it at file scope under NVRTC)
		{"one declared by the source, libcu++", "typedef long int64_t;\n" + int64Kernel, libcuToolkit, []string{"typedef unsigned int uint32_t;", "typedef MLTOP_UINT64_ uint64_t;"}},
		{"one declared by the source, no libcu++", "typedef long int64_t;\n" + int64Kernel, fullToolkit, []string{"typedef unsigned int uint32_t;"}},
		// one in a namespace does not stand for the global one
		{"declared in a namespace", nsInt64Source, libcuToolkit, []string{"typedef cuda::std::int64_t int64_t;"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			withToolkit(t, c.toolkit...)
			prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("stdint"), "k.cu": c.src}), profiler.F32)
			head, _, _ := strings.Cut(prog.Code, "#line 1 ")
			for _, w := range c.want {
				if !strings.Contains(head, w) {
					t.Errorf("want %q ahead of the source:\n%s", w, head)
				}
			}
			if strings.Contains(c.src, "typedef long int64_t;") && (strings.Contains(head, " int64_t;") || strings.Contains(head, "cuda/std/cstdint")) {
				t.Errorf("int64_t declared again ahead of the source's own:\n%s", head)
			}
			if c.want == nil && strings.Contains(head, "MLTOP_STDINT_") {
				t.Errorf("<cstdint>'s types ahead of the source:\n%s", head)
			}
		})
	}
}

// With libcu++, the C++ standard headers are libcu++'s with std naming
// cuda::std, served also when only the toolkit includes them (CUB 1.x's
// <utility>); without libcu++ they stay empty.
func TestStdHeadersViaLibcu(t *testing.T) {
	lib := toolkitHeaders{dirs: []string{"/nowhere"}, libcu: true}
	for h, want := range map[string]string{
		"type_traits": "#if __has_include(<cuda/std/type_traits>)\n#include <cuda/std/type_traits>\n",
		"algorithm":   "#elif __has_include(<cuda/std/__algorithm/min.h>)\n#include <cuda/std/__algorithm/min.h>\n#include <cuda/std/__algorithm/max.h>\n#elif __has_include(<cuda/std/array>)\n#include <cuda/std/array>\n",
		"cstdint":     "typedef cuda::std::int64_t int64_t;",
		"cfloat":      "#define FLT_MAX ",
		"climits":     "#define INT_MAX ",
	} {
		s, ok := cudaStub(h, lib)
		if !ok || !strings.Contains(s, want) || !strings.Contains(s, "namespace std { using namespace cuda::std; }") {
			t.Errorf("<%s> with libcu++ (%v):\n%s", h, ok, s)
		}
		if s, _ := cudaStub(h, toolkitHeaders{}); strings.Contains(s, "cuda/std") || strings.Contains(s, "using namespace cuda::std") {
			t.Errorf("<%s> without libcu++ names libcu++:\n%s", h, s)
		}
	}
	stubs := cudaStubs(nil, lib)
	for _, h := range []string{"utility", "type_traits", "iterator", "iostream", "stdint.h"} {
		if stubs[h] == "" {
			t.Errorf("<%s> is not served for the toolkit's headers", h)
		}
	}
	if len(cudaStubs(nil, toolkitHeaders{})) != 0 {
		t.Error("without libcu++, headers the source does not include are served")
	}
}

// With `using namespace std;` in the source, the <cmath> stub leaves out
// libcu++'s math functions (CCCL 3's fabsf beside CUDA's made fabsf(x)
// ambiguous); without it, std::sqrt reaches libcu++'s.
func TestCmathStubWithUsingNamespaceStd(t *testing.T) {
	lib := toolkitHeaders{dirs: []string{"/nowhere"}, libcu: true}
	if s, _ := cudaStub("cmath", lib); !strings.Contains(s, "#include <cuda/std/cmath>") {
		t.Errorf("<cmath> without using namespace std:\n%s", s)
	}
	lib.usingStd = true
	if s, _ := cudaStub("cmath", lib); strings.Contains(s, "#include <cuda/std/cmath>") || !strings.Contains(s, "#define M_PI ") || !strings.Contains(s, "#include <cuda/std/limits>") {
		t.Errorf("<cmath> with using namespace std:\n%s", s)
	}
	for src, want := range map[string]bool{"using namespace std;\n": true, "  using  namespace ::std ;": true, "using namespace stdx;": false, "using std::min;": false} {
		p := &prepared{units: []*unit{{code: "int x;\n" + src}}}
		if got := p.usesNamespaceStd(); got != want {
			t.Errorf("%q: usesNamespaceStd %v, want %v", src, got, want)
		}
	}
}

// PyTorch's headers declare c10::Half, at::BFloat16 and
// torch::headeronly::Half as classes of their own (prepare_torchhalf.go);
// other stubs do not.
func TestTorchHeaderScalarTypes(t *testing.T) {
	for _, h := range []string{"torch/all.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAGuard.h", "torch/headeronly/util/Half.h"} {
		s, ok := cudaStub(h, toolkitHeaders{})
		if !ok || !strings.Contains(s, "namespace c10 {\nstruct alignas(2) Half {") || !strings.Contains(s, "struct alignas(2) BFloat16 {") ||
			!strings.Contains(s, "namespace at { using c10::Half; using c10::BFloat16; }") || !strings.Contains(s, "namespace headeronly { using c10::Half;") {
			t.Errorf("%s:\n%s", h, s)
		}
	}
	if s, _ := cudaStub("c10/macros/Macros.h", toolkitHeaders{}); !strings.Contains(s, "#define C10_WARP_SIZE 32") || !strings.Contains(s, "#define C10_HOST_DEVICE __host__ __device__") {
		t.Errorf("c10's macros are missing (Apex's softmax says C10_WARP_SIZE):\n%s", s)
	}
	if s, _ := cudaStub("vector", toolkitHeaders{}); strings.Contains(s, "c10") {
		t.Errorf("<vector> declares PyTorch's types:\n%s", s)
	}
	// with libcu++, a torch header brings the standard library's templates
	// (an extension's device code says std::enable_if_t with no include)
	lib := toolkitHeaders{dirs: []string{"/nowhere"}, libcu: true}
	if s, _ := cudaStub("torch/all.h", lib); !strings.Contains(s, "#include <type_traits>\n") || !strings.Contains(s, "#include <algorithm>\n") ||
		!strings.Contains(s, "template <> class numeric_limits<c10::Half> {") || !strings.Contains(s, "static constexpr float max() noexcept { return 65504.0f; }") {
		t.Errorf("torch/all.h with libcu++ includes no standard headers:\n%s", s)
	}
	if s, _ := cudaStub("torch/all.h", toolkitHeaders{}); strings.Contains(s, "#include <type_traits>") {
		t.Errorf("torch/all.h without libcu++ includes <type_traits>, which NVRTC lacks:\n%s", s)
	}
}

// <cuda.h> defines CUDA_VERSION from the compiler's version, as CUDART_VERSION.
func TestCudaHeaderVersion(t *testing.T) {
	s, _ := cudaStub("cuda.h", toolkitHeaders{})
	if !strings.Contains(s, "#ifndef CUDA_VERSION\n#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)\n#endif") {
		t.Errorf("cuda.h:\n%s", s)
	}
}

// torchExtensionSource is a PyTorch-extension file in the style of the
// public ones: torch headers, a conversion trait specialized on PyTorch's
// scalar types (behind CUDA_VERSION), std:: templates in device code,
// int64_t undeclared, and the host launcher with its dispatch.
const torchExtensionSource = `#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/headeronly/util/Half.h>
#include <cuda.h>
#include <type_traits>
#include <limits>
#include <algorithm>
#include <array>

namespace ext {
template <typename S> struct widen { static constexpr bool exists = false; };
template <> struct widen<float> { static constexpr bool exists = true; };
#if defined(CUDA_VERSION) && CUDA_VERSION >= 11000
template <> struct widen<c10::Half> { static constexpr bool exists = true; };
template <> struct widen<at::BFloat16> { static constexpr bool exists = true; };
static_assert(std::is_same_v<torch::headeronly::Half, c10::Half> && !std::is_same_v<c10::Half, __half>, "");
#endif

template <typename S>
__device__ std::enable_if_t<std::is_same_v<S, float>, float> load(const S& x) { return x; }
template <typename S>
__device__ std::enable_if_t<!std::is_same_v<S, float>, float> load(const S& x) { return (float)x; }

template <typename S>
__global__ void k(const S* X, S* Y, int rows, int cols) {
  static_assert(widen<S>::exists, "no conversion for this scalar type");
  static_assert(std::is_pod_v<int>, "");
  const int64_t row = blockIdx.x;
  std::array<float, 2> acc{0.0f, std::numeric_limits<float>::lowest()};
  using Acc = std::conditional_t<sizeof(S) == 4, float, double>;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    acc[0] += load(X[row * cols + i]);
    acc[1] = std::max(acc[1], (float)std::min<Acc>(load(X[row * cols + i]), std::numeric_limits<float>::max()));
  }
  Y[row * cols + threadIdx.x] = (S)(acc[0] + acc[1]);
}
}  // namespace ext

void launch(torch::Tensor& out, torch::Tensor& in) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  VLLM_DISPATCH_FLOATING_TYPES(in.scalar_type(), "k", [&] {
    ext::k<scalar_t><<<1, 1, 0, stream>>>(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), 1, 1);
  });
}
`

// TestTorchExtensionCompilesWithNVRTC compiles torchExtensionSource at
// each dtype with NVRTC and the toolkit's headers where they are found
// (no GPU needed); it skips elsewhere.
func TestTorchExtensionCompilesWithNVRTC(t *testing.T) {
	m := strings.Replace(usertest.Manifest("torch_ext"), "dtypes: [f32]", "dtypes: [f32, f16, bf16]", 1)
	m = strings.Replace(m, "{entry: k,", "{entry: \"ext::k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": torchExtensionSource})
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
		prog, _ := preparedProgram(t, path, dt)
		compileOrSkip(t, prog)
	}
}

// TestTorchExtensionWithoutStdIncludesCompilesWithNVRTC: the same file
// with no standard include of its own (vLLM's layernorm_kernels.cu says
// std::enable_if_t after only torch headers) compiles too.
func TestTorchExtensionWithoutStdIncludesCompilesWithNVRTC(t *testing.T) {
	src := torchExtensionSource
	for _, h := range []string{"type_traits", "limits", "algorithm", "array"} {
		src = strings.Replace(src, "#include <"+h+">\n", "", 1)
	}
	src = strings.Replace(src, "std::array<float, 2> acc{0.0f, std::numeric_limits<float>::lowest()};", "float acc[2] = {0.0f, std::numeric_limits<float>::lowest()};", 1)
	m := strings.Replace(usertest.Manifest("torch_ext_bare"), "{entry: k,", "{entry: \"ext::k<T>\",", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// TestStdMathWithoutCmathCompilesWithNVRTC: std::exp and std::sqrt with
// no <cmath> (nvcc's cuda_runtime.h declares them: Apex's softmax) compile,
// <cmath> coming ahead of the source; a source without them gets none.
func TestStdMathWithoutCmathCompilesWithNVRTC(t *testing.T) {
	src := "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = std::exp(X[0]) + std::sqrt(X[1]) + C10_WARP_SIZE; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("std_exp"), "k.cu": "#include <c10/macros/Macros.h>\n" + src})
	prog, f := preparedProgram(t, path, profiler.F32)
	head, _, _ := strings.Cut(prog.Code, "#line 1 ")
	if f.prep["cuda"].toolkit.libcu && !strings.Contains(head, "#include <cmath>") {
		t.Errorf("no <cmath> ahead of a source that calls std::exp:\n%s", head)
	}
	compileOrSkip(t, prog)
	path = usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("no_std_exp"), "k.cu": "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = expf(X[0]); }\n"})
	prog, _ = preparedProgram(t, path, profiler.F32)
	if head, _, _ := strings.Cut(prog.Code, "#line 1 "); strings.Contains(head, "#include <cmath>") {
		t.Errorf("<cmath> ahead of a source that calls no std:: math:\n%s", head)
	}
}

// TestStdintVariantsCompileWithNVRTC compiles int64Kernel alone, after
// <cstdint> and after <cuda/std/cstdint> (no conflicting typedefs).
func TestStdintVariantsCompileWithNVRTC(t *testing.T) {
	for _, pre := range []string{"", "#include <cstdint>\n", "#include <cuda/std/cstdint>\n", "#include <stdint.h>\n#include <cuda/std/cstdint>\n"} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("stdint_nvrtc"), "k.cu": pre + int64Kernel})
		prog, _ := preparedProgram(t, path, profiler.F32)
		compileOrSkip(t, prog)
	}
}

// TestOwnStdintCompilesWithNVRTC: a source that declares one of the
// fixed-width types itself (of a type other than libcu++'s) and uses the
// others undeclared compiles; so does one whose int64_t is a namespace's
// and whose kernel uses the global one.
func TestOwnStdintCompilesWithNVRTC(t *testing.T) {
	for _, src := range []string{
		"typedef long int64_t;\n" + int64Kernel,
		nsInt64Source,
	} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("own_stdint"), "k.cu": src})
		prog, _ := preparedProgram(t, path, profiler.F32)
		compileOrSkip(t, prog)
	}
}

// TestUsingNamespaceStdCompilesWithNVRTC: with std naming cuda::std, a
// source that says `using namespace std;` still calls CUDA's min, max,
// sqrtf and abs unqualified without ambiguity.
func TestUsingNamespaceStdCompilesWithNVRTC(t *testing.T) {
	src := "#include <cmath>\n#include <algorithm>\n#include <cstdint>\nusing namespace std;\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) {\n  int i = min((int)threadIdx.x, cols - 1);\n" +
		"  float v = max(X[i], 0.0f) + sqrtf(fabsf(X[i])) + sqrt(X[i]) + abs(-i) + exp(X[i]);\n  Y[i] = fminf(v, numeric_limits<float>::max());\n}\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("using_std"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// TestCubHeaderCompilesWithNVRTC: cub::BlockReduce through <cub/cub.cuh>
// with cuda::std::plus, as extension files write it.
func TestCubHeaderCompilesWithNVRTC(t *testing.T) {
	src := "#include <cub/cub.cuh>\n#include <cuda/std/functional>\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) {\n  using R = cub::BlockReduce<float, 128>;\n  __shared__ typename R::TempStorage tmp;\n" +
		"  float s = R(tmp).Reduce(X[threadIdx.x], cuda::std::plus<>{}, blockDim.x);\n  if (threadIdx.x == 0) Y[blockIdx.x] = s;\n}\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("cub_hdr"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// compileOrSkip compiles prog with NVRTC, skipping the test without it,
// and returns NVRTC's log.
func compileOrSkip(t *testing.T, prog profiler.Program) string {
	t.Helper()
	return compileReportOrSkip(t, prog).Log
}

// compileReportOrSkip is compileOrSkip with NVRTC's whole report (the
// lowered name, shared memory).
func compileReportOrSkip(t *testing.T, prog profiler.Program) cuda.CompileReport {
	t.Helper()
	r, err := cuda.CheckCompile(prog, "")
	if err != nil && r.Compiler == "" {
		t.Skipf("NVRTC not found: %v", err)
	}
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, r.Log, prog.Code)
	}
	return r
}

// With libcu++, the standard macros the source uses come after
// <cuda/std/climits> (which defines the limits without #ifndef), and the
// INFINITY ahead of the source is marked so that the <cmath> stub
// undefines it before libcu++'s <cuda/std/cmath> defines it again.
func TestStandardMacrosBeforeLibcu(t *testing.T) {
	src := "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0] < INT_MAX ? INFINITY : FLT_MAX; }\n"
	for _, c := range []struct {
		name       string
		toolkit    []string
		want, lack []string
	}{
		{"libcu++", libcuToolkit, []string{"#include <cuda/std/climits>\n#ifndef INT_MAX\n", "#define INFINITY __int_as_float(0x7f800000U)\n#define MLTOP_PRELUDE_INFINITY_\n#endif"}, nil},
		{"no libcu++", fullToolkit, []string{"#ifndef INT_MAX\n", "#define INFINITY __int_as_float(0x7f800000U)\n#endif"}, []string{"cuda/std/climits", "MLTOP_PRELUDE_"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			withToolkit(t, c.toolkit...)
			prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("macros"), "k.cu": src}), profiler.F32)
			head, _, _ := strings.Cut(prog.Code, "#line 1 ")
			for _, w := range c.want {
				if !strings.Contains(head, w) {
					t.Errorf("want %q ahead of the source:\n%s", w, head)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(head, l) {
					t.Errorf("%q ahead of the source:\n%s", l, head)
				}
			}
		})
	}
	s, _ := cudaStub("cmath", toolkitHeaders{libcu: true})
	undef, _, _ := strings.Cut(s, "#include <cuda/std/cmath>")
	if !strings.Contains(undef, "#ifdef MLTOP_PRELUDE_INFINITY_\n#undef INFINITY\n") {
		t.Errorf("<cmath> does not undefine the prelude's INFINITY before libcu++'s:\n%s", s)
	}
}

// TestStandardMacrosNoRedefinitionWithNVRTC: a source that uses INT_MAX,
// INFINITY and NAN and includes <cmath> and <climits> compiles without
// NVRTC's "incompatible redefinition of macro" warning.
func TestStandardMacrosNoRedefinitionWithNVRTC(t *testing.T) {
	src := "#include <cmath>\n#include <climits>\n#include <limits>\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0] < INT_MAX ? INFINITY + NAN : std::numeric_limits<float>::max(); }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("macros_nvrtc"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	if log := compileOrSkip(t, prog); strings.Contains(log, "redefinition") {
		t.Errorf("NVRTC warns:\n%s", log)
	}
}

// TestStdMathFallbackBesideALibcuWithout: with a libcu++ whose cuda::std
// has some <cmath> functions and not others (CCCL 3.0 has no fma), std::X
// is libcu++'s where it has X (its overload wins over the fallback) and
// CUDA's global X where it has not: glm's `using ::std::fma;` compiles.
func TestStdMathFallbackBesideALibcuWithout(t *testing.T) {
	inc := t.TempDir()
	files := map[string]string{
		"cuda/std/type_traits": "#pragma once\n#define _LIBCUDACXX_CUDA_API_VERSION 3000000\n",
		"cuda/std/cmath": "#pragma once\n#define _LIBCUDACXX_CUDA_API_VERSION 3000000\n" +
			"namespace cuda { namespace std { struct libcu_round {}; __host__ __device__ inline libcu_round round(float) { return {}; } } }\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(inc, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(cuda.IncludeEnv, inc)
	src := "#include <cmath>\nnamespace g { using ::std::fma; using ::std::round; }\n" +
		"template <class A, class B> struct same { static const bool value = false; };\ntemplate <class A> struct same<A, A> { static const bool value = true; };\n" +
		"static_assert(same<decltype(std::round(1.0f)), cuda::std::libcu_round>::value, \"libcu++'s round is std::round\");\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) { float x = X[0]; double d = x;\n" +
		"  Y[0] = g::fma(x, x, x) + std::fma(x, x, x) + std::fmaf(x, x, x) + std::ldexp(x, 2) + (float)std::round(d); }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("std_fallback"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// TestStdRoundingMathCompilesWithNVRTC: the <cmath> functions libcu++ 1.x
// leaves out under NVRTC (std::round, std::trunc, std::floor, std::fma,
// std::log2, std::exp2: glm's `using ::std::round;`) compile, named and
// brought in with using-declarations, at float and double.
func TestStdRoundingMathCompilesWithNVRTC(t *testing.T) {
	src := "#include <cmath>\nnamespace g { using ::std::round; using ::std::trunc; }\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) { float x = X[0]; double d = x;\n" +
		"  Y[0] = g::round(x) + g::trunc(x) + std::floor(x) + std::fma(x, x, x) + std::log2(x) + std::exp2(x) + std::ceil(x) + std::nearbyint(x);\n" +
		"  Y[1] = (float)(std::round(d) + std::fma(d, d, d) + std::log2(d)); }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("std_round"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}
