package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// preparedSourceText is the prepared text of src (as k.cu of a default
// manifest) from its #line 1 on, with the toolkit headers given.
func preparedSourceText(t *testing.T, src string, toolkit ...string) string {
	t.Helper()
	withToolkit(t, toolkit...)
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("rewrite"), "k.cu": src}), profiler.F32)
	_, code, _ := strings.Cut(prog.Code, "#line 1 ")
	return code
}

const rewriteKernel = "__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = X[0]; }\n"

// `__host__` on a namespace-scope variable (nvcc ignores it with a
// warning, NVRTC refuses it) goes, written out or through a macro that
// writes it (c10's C10_HOST_DEVICE, the source's own); `__device__` stays,
// and so do functions', lambdas' and other macros' words.
func TestHostOffNamespaceVariables(t *testing.T) {
	for _, c := range []struct {
		name, src  string
		want, lack []string
	}{
		{"written out", "__host__ __device__ constexpr float LIMIT = 448.0f;\n",
			[]string{"         __device__ constexpr float LIMIT = 448.0f;"}, []string{"__host__"}},
		{"host alone", "__host__ constexpr int Q = 2;\n", []string{"         constexpr int Q = 2;"}, []string{"__host__"}},
		{"c10's macro", "#include <c10/macros/Macros.h>\nC10_HOST_DEVICE constexpr auto M = 448.0f;\n",
			[]string{"\n__device__      constexpr auto M = 448.0f;"}, nil},
		{"the source's macro, in a namespace", "#define HD __host__ __device__\n#define MY_HD HD\nnamespace ns { MY_HD constexpr int Z = 3; }\n",
			[]string{"namespace ns { __device__ constexpr int Z = 3; }"}, nil},
		{"a variable template", "template <typename S> __host__ __device__ constexpr S one = S(1);\n",
			[]string{"template <typename S>          __device__ constexpr S one = S(1);"}, nil},
		{"a function keeps it", "__host__ __device__ inline float f() { return 1.0f; }\n",
			[]string{"__host__ __device__ inline float f()"}, nil},
		{"a lambda in the initializer keeps it", "constexpr auto twice = [] __host__ __device__ (int x) { return 2 * x; };\n",
			[]string{"[] __host__ __device__ (int x)"}, nil},
		{"a macro that writes no __host__", "#define C10_HOST_DEVICE __device__\nC10_HOST_DEVICE constexpr int W = 1;\n",
			[]string{"\nC10_HOST_DEVICE constexpr int W = 1;"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := preparedSourceText(t, c.src+rewriteKernel, libcuToolkit...)
			for _, w := range c.want {
				if !strings.Contains(code, w) {
					t.Errorf("want %q in\n%s", w, code)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(code, l) {
					t.Errorf("%q left in\n%s", l, code)
				}
			}
			if strings.Count(code, "\n") != strings.Count(c.src+rewriteKernel, "\n")+1 { // and the #line's
				t.Errorf("the lines changed:\n%s", code)
			}
		})
	}
}

// TestHostDeviceVariablesCompileWithNVRTC: the spellings above compile
// with NVRTC where it is found (sgl-kernel's utils.h:
// `C10_HOST_DEVICE constexpr auto FP8_E4M3_MAX = …;`).
func TestHostDeviceVariablesCompileWithNVRTC(t *testing.T) {
	src := "#include <c10/macros/Macros.h>\n#define HD __host__ __device__\n" +
		"__host__ __device__ constexpr float LIMIT = 448.0f;\n__host__ constexpr int Q = 2;\nC10_HOST_DEVICE constexpr auto M = 2.0f;\n" +
		"namespace ns { HD constexpr int Z = 3; }\ntemplate <typename S> __host__ __device__ constexpr S one = S(1);\n" +
		"constexpr auto twice = [] (float x) { return 2 * x; };\n" +
		"__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = fminf(twice(X[0]) * M, LIMIT) + Q + ns::Z + one<float>; }\n"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("hd_vars"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}

// Edits apply where their line still holds what they replace (after
// host code is blanked), right to left within a line.
func TestApplyLineEdits(t *testing.T) {
	code := "a __host__ b __host__\nc HD d\n"
	got := applyLineEdits(code, []lineEdit{
		{line: 1, col: 2, old: "__host__", text: "        "},
		{line: 1, col: 13, old: "__host__", text: "X"},
		{line: 2, col: 2, old: "HD", text: "__device__"},
		{line: 2, col: 0, old: "zz", text: "never"}, // no longer there
		{line: 9, col: 0, old: "a", text: "never"},
	})
	if want := "a          b X\nc __device__ d\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A `namespace std {` block that specializes numeric_limits or a type
// trait (templates libcu++ alone declares, which std names through a
// using-directive) opens `namespace cuda::std {`; one that also
// specializes another (tuple_size, which CCCL declares in std itself),
// one that specializes nothing, and any without libcu++ stay as they are.
func TestStdSpecializationBlocks(t *testing.T) {
	limits := "template <> struct numeric_limits<my_fp8> { static constexpr float max() { return 448.0f; } };\n"
	trait := "template <> struct is_floating_point<my_fp8> : true_type {};\n"
	for _, c := range []struct {
		name, src string
		toolkit   []string
		rewritten bool
	}{
		{"numeric_limits", "namespace std {\n" + limits + "}  // namespace std\n", libcuToolkit, true},
		{"a type trait, brace on the next line", "namespace std\n{\n" + trait + "}\n", libcuToolkit, true},
		{"a partial specialization", "namespace std { template <typename S> struct is_arithmetic<W<S>> : true_type {}; }\n", libcuToolkit, true},
		{"beside tuple_size", "namespace std {\n" + limits + "template <> struct tuple_size<P> : integral_constant<int, 2> {};\n}\n", libcuToolkit, false},
		{"no specialization", "namespace std { inline int mine() { return 1; } }\n", libcuToolkit, false},
		{"no libcu++", "namespace std {\n" + limits + "}\n", fullToolkit, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "struct my_fp8 { unsigned char bits; };\n" + c.src + rewriteKernel
			code := preparedSourceText(t, src, c.toolkit...)
			if got := strings.Contains(code, "namespace cuda::std"); got != c.rewritten {
				t.Errorf("rewritten %v, want %v:\n%s", got, c.rewritten, code)
			}
			if strings.Count(code, "\n") != strings.Count(src, "\n")+1 {
				t.Errorf("the lines changed:\n%s", code)
			}
		})
	}
}

// TestStdSpecializationCompilesWithNVRTC: a source specializes
// std::numeric_limits and std::is_floating_point for its own fp8 type and
// uses both through std:: (NVRTC said "cannot be specialized in the
// current scope").
func TestStdSpecializationCompilesWithNVRTC(t *testing.T) {
	src := `#include <limits>
#include <type_traits>
struct my_fp8 { unsigned char bits; };
namespace std {
template <> struct numeric_limits<my_fp8> {
  static constexpr bool is_specialized = true;
  __host__ __device__ static constexpr float max() { return 448.0f; }
};
template <> struct is_floating_point<my_fp8> : true_type {};
}  // namespace std
static_assert(std::is_floating_point<my_fp8>::value && std::numeric_limits<my_fp8>::is_specialized, "");
__global__ void k(const T* X, T* Y, int rows, int cols) { Y[0] = fminf(X[0], std::numeric_limits<my_fp8>::max()); }
`
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("std_spec"), "k.cu": src})
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)
}
