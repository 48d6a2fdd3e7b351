package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestKernelNames(t *testing.T) {
	src := `
#include <cuda_bf16.h>
extern "C" __global__ void plain(float* x) {}
namespace ns {
template <typename T, int N>
__global__ void __launch_bounds__(256, 2) layernorm_fwd(T* y, const T* x, int n) {}
}
__global__ __cluster_dims__(2, 1, 1) void clustered(int* p);
static __device__ float helper(float x) { return x; }
__global__ void
  split_line (int a) {}
__global__ void plain(double* x) {}
[[nodiscard]] __device__ int notAKernel(int);
namespace outer { namespace inner { struct S { int a = 1'000; }; __global__ void deep(int* p) { /* } */ const char* s = "}"; } } }
namespace a::b { namespace { __global__ void anon(int* p); } }
using namespace outer;
namespace alias = outer::inner;
__global__ void after(int* p) {}
// namespace commented {
__global__ void last(int* p) {}
`
	want := []string{"plain", "ns::layernorm_fwd", "clustered", "split_line", "outer::inner::deep", "a::b::anon", "after", "last"}
	if got := kernelNames(src); !slices.Equal(got, want) {
		t.Fatalf("kernelNames = %q, want %q", got, want)
	}
	if got := kernelNames("__device__ void f() {}"); len(got) != 0 {
		t.Fatalf("no kernels: %q", got)
	}
}

func TestEntryExpression(t *testing.T) {
	user := profiler.Program{Code: "src", Entry: " layernorm_fwd<__nv_bfloat16, 4> "}
	for _, c := range []struct {
		name  string
		p     profiler.Program
		names bool
		want  string
	}{
		{"user template", user, true, "layernorm_fwd<__nv_bfloat16, 4>"},
		{"user namespace", profiler.Program{Code: "s", Entry: "ns::k"}, true, "ns::k"},
		{"NVRTC without name expressions", user, false, ""},
		{"built-in shader", profiler.Program{Source: "softmax", Entry: "softmax"}, true, ""},
	} {
		if got := entryExpression(c.p, c.names); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestEntryNotFoundSuggests(t *testing.T) {
	err := entryNotFound("k.cu", "layernorm", "NVRTC cannot resolve it as a kernel name:\nidentifier \"layernorm\" is undefined",
		"template <int N> __global__ void layernorm_fwd(float* y) {}")
	for _, want := range []string{`k.cu has no kernel "layernorm"`, `identifier "layernorm" is undefined`, "kernels in k.cu: layernorm_fwd", "name<float, 4>"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// FasterTransformer's kernels are in namespace fastertransformer: an
	// entry without it is suggested with it
	err = entryNotFound("k.cu", "add_bias_tanh<float>", "", "namespace fastertransformer {\ntemplate <typename T> __global__ void add_bias_tanh(T* out) {}\n}\n")
	if !strings.Contains(err.Error(), "kernels in k.cu: fastertransformer::add_bias_tanh (") {
		t.Errorf("not qualified: %v", err)
	}
	if err := entryNotFound("k.cu", "x", "", "int main;"); !strings.Contains(err.Error(), "declares no __global__ function") {
		t.Errorf("no kernels: %v", err)
	}
}

func TestCompileKeyTail(t *testing.T) {
	opts := []string{"--gpu-architecture=sm_90a", "--include-path=/tk"}
	base := compileKeyTail("nvrtc-13.0", opts, "k<float>", nil)
	for name, other := range map[string]string{
		"entry":        compileKeyTail("nvrtc-13.0", opts, "k<double>", nil),
		"include path": compileKeyTail("nvrtc-13.0", []string{"--gpu-architecture=sm_90a", "--include-path=/tk2"}, "k<float>", nil),
		"compiler":     compileKeyTail("nvrtc-12.8", opts, "k<float>", nil),
		"own dirs":     compileKeyTail("nvrtc-13.0", opts, "k<float>", []string{t.TempDir()}),
	} {
		if other == base {
			t.Errorf("a different %s gives the same key tail", name)
		}
	}
}

// An error in the program's own files is found in NVRTC's log; those
// NVRTC puts in its name map (an entry it cannot resolve) are not.
func TestFirstSourceError(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"k.cu:4: error: identifier \"u\" is undefined\n          detected during instantiation of \"void relu(T *) [with T=float]\"\n\n1 error detected", `k.cu:4: error: identifier "u" is undefined`},
		{"__nv_name_map:2: error: cannot determine which instance of function template \"relu\" is intended\n\n__nv_name_map:2: error: Error in parsing name expression", ""},
		{"k.cu:2: warning #177-D: variable \"x\" was declared but never referenced\nk.cu:9: catastrophic error: cannot open source file \"x.h\"", `k.cu:9: catastrophic error: cannot open source file "x.h"`},
		{"__nv_name_map:2: error: no instance\n/src/dir/k.cu:7: error: expected a \";\"", `/src/dir/k.cu:7: error: expected a ";"`},
		{"k.cu:2: warning #177-D: variable \"errors\" was declared but never referenced", ""},
		{"", ""},
	} {
		if got := firstSourceError(c.log); got != c.want {
			t.Errorf("firstSourceError(%q) = %q, want %q", c.log, got, c.want)
		}
	}
	cause := errors.New("nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)")
	log := "k.cu:4: error: identifier \"u\" is undefined\n\n1 error detected in the compilation of \"k.cu\"."
	err := sourceCompileError(fmt.Errorf("%w\n%s", cause, log), log)
	if err == nil || err.Error() != `k.cu:4: error: identifier "u" is undefined`+"\n"+log || !errors.Is(err, cause) {
		t.Errorf("sourceCompileError = %v", err)
	}
	if err := sourceCompileError(cause, "__nv_name_map:2: error: no instance"); err != nil {
		t.Errorf("a name-map error: %v, want nil (the entry is at fault)", err)
	}
}
