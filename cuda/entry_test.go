package cuda

import (
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
`
	want := []string{"plain", "layernorm_fwd", "clustered", "split_line"}
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
