package user

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// extensionSource puts GCC's __extension__ before an anonymous union, as
// ggml's common header does.
const extensionSource = `struct two { __extension__ union { struct { float lo, hi; } p; float both[2]; }; };
extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {
  two t; t.both[0] = X[0]; t.both[1] = X[1];
  Y[0] = t.p.lo + t.p.hi;
}
`

// TestExtensionKeywordDefinedAway: a source that says __extension__ gets
// it defined empty (under #ifndef) ahead of the source, and compiles.
func TestExtensionKeywordDefinedAway(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("ext"), "k.cu": extensionSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	head, _, _ := strings.Cut(prog.Code, "#line 1 ")
	if !strings.Contains(head, "#ifndef __extension__\n#define __extension__\n#endif\n") {
		t.Errorf("__extension__ is not defined away ahead of the source:\n%s", head)
	}
	compileOrSkip(t, prog)

	path = usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("noext"), "k.cu": usertest.Source})
	if prog, _ := preparedProgram(t, path, profiler.F32); strings.Contains(prog.Code, "__extension__") {
		t.Errorf("__extension__ defined for a source that does not use it:\n%s", prog.Code)
	}
}

// asmSource writes inline PTX with GCC's keywords, as llm-awq does.
const asmSource = `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {
  unsigned a, b;
  __asm__ __volatile__("mov.u32 %0, 1;" : "=r"(a));
  __asm volatile("mov.u32 %0, 2;" : "=r"(b));
  Y[0] = X[0] * (T)(a + b);
}
`

// TestGNUAsmKeywords: __asm__ and __asm (nvcc takes them, NVRTC does not)
// are defined as asm ahead of a source that writes them, which compiles.
func TestGNUAsmKeywords(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("asm"), "k.cu": asmSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	head, _, _ := strings.Cut(prog.Code, "#line 1 ")
	for _, kw := range []string{"__asm__", "__asm"} {
		if !strings.Contains(head, "#ifndef "+kw+"\n#define "+kw+" asm\n#endif\n") {
			t.Errorf("%s is not defined as asm ahead of the source:\n%s", kw, head)
		}
	}
	compileOrSkip(t, prog)
}

// TestByteOrderMarkStripped: a UTF-8 byte-order mark at the start of the
// source and of a local header is dropped (nvcc skips it; after mltop's
// prelude it would be mid-text), and every line keeps its number.
func TestByteOrderMarkStripped(t *testing.T) {
	files := map[string]string{
		"kernel.yaml": usertest.Manifest("bom"),
		"k.cu":        "\ufeff// saved with a byte-order mark\n#include \"half.h\"\n" + usertest.Source + "\n",
		"half.h":      "\ufeff#pragma once\n__device__ float half_of(float x) { return 0.5f * x; }\n",
	}
	prog, _ := preparedProgram(t, usertest.Write(t, files), profiler.F32)
	for name, text := range prog.Includes {
		if strings.Contains(text, "\ufeff") {
			t.Errorf("%s keeps the byte-order mark:\n%q", name, text)
		}
	}
	if strings.Contains(prog.Code, "\ufeff") {
		t.Errorf("the source keeps the byte-order mark:\n%q", prog.Code)
	}
	if !strings.Contains(prog.Code, "k.cu\"\n// saved with a byte-order mark\n#include \"half.h\"\n") {
		t.Errorf("the source's first lines moved:\n%s", prog.Code)
	}
	if h := prog.Includes["half.h"]; !strings.Contains(h, "half.h\"\n#pragma once\n") {
		t.Errorf("the header's first line moved:\n%s", h)
	}
	compileOrSkip(t, prog)
}

// frameworkHeader is a framework's common header: the loop macro kernels
// use, and host-only aliases and a class over stubbed headers' types.
const frameworkHeader = `#pragma once
#include <string>
#include <vector>
#include <cublas_v2.h>
#include <glog/logging.h>
namespace logflags = google;
#define EACH_INDEX(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
namespace fw {
using std::string;
using std::vector;
class Session {
 public:
  static Session& Instance();
  cublasHandle_t blas() { return blas_; }
 private:
  cublasHandle_t blas_;
  vector<string> layers_;
};
}  // namespace fw
`

// TestFrameworkHeaderCompiles: the host-only aliases and classes of a
// framework header are blanked (lines kept), so the kernel beside them
// compiles with NVRTC.
func TestFrameworkHeaderCompiles(t *testing.T) {
	src := "#include \"fw.hpp\"\nnamespace fw {\n__global__ void k(const T* X, T* Y, int rows, int cols) {\n" +
		"  EACH_INDEX(i, rows * cols) { Y[i] = 2 * X[i]; }\n}\n}\n"
	m := strings.Replace(usertest.Manifest("fw"), "{entry: k,", "{entry: \"fw::k\",", 1)
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src, "fw.hpp": frameworkHeader}), profiler.F32)
	h := prog.Includes["fw.hpp"]
	for _, gone := range []string{"logflags", "using std::", "class Session", "cublasHandle_t"} {
		if strings.Contains(h, gone) {
			t.Errorf("%q is not blanked:\n%s", gone, h)
		}
	}
	if !strings.Contains(h, "#define EACH_INDEX") || strings.Count(h, "\n") < strings.Count(frameworkHeader, "\n") {
		t.Errorf("the macro or the lines are gone:\n%s", h)
	}
	compileOrSkip(t, prog)
}

// mixedMathSource calls the two-argument math functions with mixed
// argument types, as nvcc programs may (nvcc has the host <cmath>'s
// promoting overloads), and asserts the promoted result types.
const mixedMathSource = `template <class A, class B> struct same_type { enum { value = 0 }; };
template <class A> struct same_type<A, A> { enum { value = 1 }; };
__device__ float relu(float z) { return fmax(0.0, z); }
extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {
  float f = X[0]; double d = X[1]; int i = cols;
  static_assert(same_type<decltype(fmax(f, f)), float>::value, "(float, float) calls the float fmax");
  static_assert(same_type<decltype(fmin(d, f)), double>::value, "(double, float) promotes to double");
  static_assert(same_type<decltype(pow(f, d)), double>::value, "(float, double) promotes to double");
  static_assert(same_type<decltype(atan2(i, f)), float>::value, "(int, float) calls the float atan2, as without the overloads");
  static_assert(same_type<decltype(fdim(i, 2)), double>::value, "(int, int) calls the double fdim");
  Y[0] = relu(f) + fmax(0.0, f) + fmin(f, 0.0) + pow(2, f) + atan2(d, f) + fmod(f, 2.0) + hypot(i, f) +
         copysign(1.0, f) + remainder(f, 3.0) + fdim(f, 1.0) + fmax(f, f) + powf(f, 2.0f);
}
`

// TestMixedMathOverloads: the promoting overloads are declared for the
// functions the source calls (only those), and NVRTC accepts the mixed
// calls with C++'s result types.
func TestMixedMathOverloads(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("mixed_math"), "k.cu": mixedMathSource})
	prog, _ := preparedProgram(t, path, profiler.F32)
	head, _, _ := strings.Cut(prog.Code, "#line 1 ")
	for _, f := range mixedMathFunctions {
		if !strings.Contains(head, "::type "+f+"(A a, B b)") {
			t.Errorf("no promoting %s ahead of the source:\n%s", f, head)
		}
	}
	if log := compileOrSkip(t, prog); strings.Contains(log, "warning") {
		t.Errorf("NVRTC warns:\n%s", log)
	}

	path = usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("fmax_only"),
		"k.cu": `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = fmax(0.0, X[0]); }`})
	prog, _ = preparedProgram(t, path, profiler.F32)
	if !strings.Contains(prog.Code, " fmax(A a, B b)") || strings.Contains(prog.Code, " pow(A a, B b)") {
		t.Errorf("want the fmax overload alone:\n%s", prog.Code)
	}
}

// valuesManifest gives the manifest values of each kind.
func valuesManifest(name string) string {
	return strings.Replace(usertest.Manifest(name), "rules:", "values:\n  SCALE: 3\n  EPS: 1e-5\n  HALF_WG: \"WG / 2.0\"\n  WIDE: \"cols > 8\"\n  UNUSED: 7\nrules:", 1)
}

// TestValuesReachTheSource: values reach the source like dims: a
// constexpr (int, double for a float, bool) when the source only uses
// them, a #define when a preprocessor line tests them; NVRTC compiles it.
func TestValuesReachTheSource(t *testing.T) {
	src := "#if WIDE\n#define WIDTH_NOTE 1\n#endif\n" + `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {
  Y[0] = SCALE * X[0] + EPS + HALF_WG;
}
`
	prog, f := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": valuesManifest("values"), "k.cu": src}), profiler.F32)
	for _, want := range []string{"constexpr int SCALE = 3;", "constexpr double EPS = 1e-05;", "constexpr double HALF_WG = 32.0;", "#define WIDE 1\n#line 1 "} {
		if !strings.Contains(prog.Code, want) {
			t.Errorf("want %q in:\n%s", want, prog.Code)
		}
	}
	if got := injectionsOf(f, "cuda"); got["SCALE"] != "constexpr" || got["WIDE"] != "macro" || got["UNUSED"] != "unused" {
		t.Errorf("injections %v", got)
	}
	compileOrSkip(t, prog)
}

// TestValuesReachMetal: a float value is a float constant in MSL, which
// has no double.
func TestValuesReachMetal(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const float* X [[buffer(0)]], device float* Y [[buffer(1)]]) { Y[0] = EPS * X[0]; }\n"
	m := strings.Replace(valuesManifest("values_metal"), "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
	m = strings.Replace(m, "args: [X, Y, rows, cols]", "args: [X, Y]", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.metal": src}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), metalDev)
	if err != nil {
		t.Fatal(err)
	}
	if code := p.Dispatches[0].Program.Code; !strings.Contains(code, "constant constexpr float EPS = 1e-05f;") {
		t.Errorf("want a float EPS in:\n%s", code)
	}
}

func TestValueText(t *testing.T) {
	for _, tc := range []struct {
		x          any
		lang, want string
	}{
		{3, "cuda", "3"}, {true, "cuda", "true"}, {2.0, "cuda", "2.0"}, {0.125, "metal", "0.125f"}, {1e-30, "cuda", "1e-30"},
	} {
		if v, err := valueText(tc.x, tc.lang); err != nil || v.text != tc.want {
			t.Errorf("valueText(%v, %s) = %q, %v; want %q", tc.x, tc.lang, v.text, err, tc.want)
		}
	}
	if _, err := valueText(math.Inf(1), "cuda"); err == nil || !strings.Contains(err.Error(), "+Inf") {
		t.Errorf("an infinite value: %v", err)
	}
}

// TestPDLFunctionsDeclared: a kernel calling the programmatic-dependent-
// launch functions (ggml-cuda on sm_90) gets them ahead of the source,
// only those it calls, and NVRTC compiles it (for sm_90 and below).
func TestPDLFunctionsDeclared(t *testing.T) {
	src := `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {
  cudaGridDependencySynchronize();
  Y[0] = X[0];
  cudaTriggerProgrammaticLaunchCompletion();
}
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("pdl"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	head, _, _ := strings.Cut(prog.Code, "#line 1 ")
	for _, want := range []string{"void cudaGridDependencySynchronize() {", "griddepcontrol.wait;", "void cudaTriggerProgrammaticLaunchCompletion() {", "griddepcontrol.launch_dependents;"} {
		if !strings.Contains(head, want) {
			t.Errorf("no %q ahead of the source:\n%s", want, head)
		}
	}
	compileOrSkip(t, prog)

	path = usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("no_pdl"),
		"k.cu": `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0]; }`})
	prog, _ = preparedProgram(t, path, profiler.F32)
	if strings.Contains(prog.Code, "griddepcontrol") {
		t.Errorf("a kernel that calls neither gets them:\n%s", prog.Code)
	}
}

// TestHeaderTwoSpellingsOneName: a local header reached by two spellings
// (`"../status.h"` from one header, `"status.h"` from another, as
// flashinfer's tree does) reaches NVRTC under one name, and every
// #include of it says that name: the second spelling could not be opened,
// and a #pragma once header under two names was compiled twice.
func TestHeaderTwoSpellingsOneName(t *testing.T) {
	m := strings.Replace(usertest.Manifest("two_spellings"), "sources: {cuda: k.cu}", "sources: {cuda: k.cu}\ninclude_dirs: [inc]", 1)
	path := usertest.Write(t, map[string]string{
		"kernel.yaml":            m,
		"k.cu":                   "#include \"lib/detail/first.h\"\n#include \"lib/second.cuh\"\nextern \"C\" __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = twice(X[0]); }\n",
		"inc/lib/status.h":       "#pragma once\n__device__ inline float twice(float x) { return 2.0f * x; }\n",
		"inc/lib/second.cuh":     "#pragma once\n#include \"status.h\"\n",
		"inc/lib/detail/first.h": "#pragma once\n#include \"../status.h\"\n",
	})
	prog, _ := preparedProgram(t, path, profiler.F32)
	var names []string
	for name, text := range prog.Includes {
		if strings.Contains(text, "inline float twice") {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("status.h reaches the compiler as %v, want one name", names)
	}
	for name, text := range prog.Includes {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "#include") && strings.Contains(l, "status.h") && l != "#include \""+names[0]+"\"" {
				t.Errorf("%s includes status.h as %q, not as %s", name, l, names[0])
			}
		}
	}
	compileOrSkip(t, prog)
}

// TestHostOnlyConstantNoWarning: a whole program's file-scope constant
// that only main reads reaches NVRTC blanked with main, so NVRTC does not
// warn it is never referenced; the kernel's own constant stays.
func TestHostOnlyConstantNoWarning(t *testing.T) {
	src := "#include <stdio.h>\nconst int ITERS = 10;\nconstexpr int LANES = 32;\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) { Y[threadIdx.x % LANES] = X[0]; }\n" +
		"int main() { for (int i = 0; i < ITERS; i++) printf(\"%d\\n\", i); return 0; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("host_const"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	if strings.Contains(prog.Code, "ITERS = 10") || !strings.Contains(prog.Code, "LANES = 32") {
		t.Errorf("want ITERS blanked and LANES kept:\n%s", prog.Code)
	}
	if log := compileOrSkip(t, prog); strings.Contains(log, "never referenced") {
		t.Errorf("NVRTC warns:\n%s", log)
	}
}

// TestHeaderTwoPathsFromWorkingDir: run from the manifest's own folder
// (`mltop check .`), an include_dirs entry of ".." reaches the folder's
// header "sub/common.cuh" as "../sub/common.cuh" while a header beside it
// includes it as "common.cuh" (ggml's rope.cu: "convert.cuh" includes
// "common.cuh", rope.cu "ggml-cuda/common.cuh"). It is one file: NVRTC
// gets it once, not twice under two names ("function has already been
// defined"). From another folder the two paths were already equal.
func TestHeaderTwoPathsFromWorkingDir(t *testing.T) {
	m := strings.Replace(usertest.Manifest("two_paths"), "sources: {cuda: k.cu}", "sources: {cuda: k.cu}\ninclude_dirs: [..]", 1)
	path := usertest.Write(t, map[string]string{
		"sub/kernel.yaml": m,
		"sub/k.cu":        "#include \"convert.cuh\"\n#include \"sub/common.cuh\"\nextern \"C\" __global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = four(X[0]); }\n",
		"sub/common.cuh":  "#pragma once\n__device__ inline float twice(float x) { return 2.0f * x; }\n",
		"sub/convert.cuh": "#pragma once\n#include \"common.cuh\"\n__device__ inline float four(float x) { return twice(twice(x)); }\n",
	})
	t.Chdir(filepath.Join(filepath.Dir(path), "sub"))
	prog, _ := preparedProgram(t, "kernel.yaml", profiler.F32)
	var names []string
	for name, text := range prog.Includes {
		if strings.Contains(text, "inline float twice") {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("common.cuh reaches the compiler as %v, want one name", names)
	}
	compileOrSkip(t, prog)
}

// TestHostMembersBlanked: a class device code uses, in a local header,
// with __host__-only members (flashinfer's fast divisor: a constructor
// that throws, an assignment that recomputes) compiles: those members are
// blanked as top-level __host__ functions are, the class and its
// __host__ __device__ members stay, and the lines keep their numbers.
func TestHostMembersBlanked(t *testing.T) {
	header := `#pragma once
#include <stdexcept>
class FastDiv {
 public:
  __host__ FastDiv() : d_(1) {}
  __host__ FastDiv(int d) : d_(d) {
    if (d == 0) throw std::invalid_argument("FastDiv: zero");
  }
  __host__ FastDiv& operator=(int d) { d_ = d; return *this; }
  __host__ __device__ int div(int x) const { return x / d_; }
 private:
  int d_;
};
`
	src := "#include \"fastdiv.cuh\"\n__device__ int rows_of(const FastDiv& f, int i) { return f.div(i); }\n" + usertest.Source
	files := map[string]string{"kernel.yaml": usertest.Manifest("hostmember"), "k.cu": src, "fastdiv.cuh": header}
	prog, _ := preparedProgram(t, usertest.Write(t, files), profiler.F32)
	h := prog.Includes["fastdiv.cuh"]
	if strings.Contains(h, "throw") || strings.Contains(h, "operator=") || !strings.Contains(h, "int div(int x) const") {
		t.Errorf("the header's __host__ members are not blanked, or more is:\n%s", h)
	}
	if got, want := strings.Count(h, "\n"), strings.Count(header, "\n")+1; got < want {
		t.Errorf("the header lost lines (%d, want at least %d):\n%s", got, want, h)
	}
	compileOrSkip(t, prog)
}
