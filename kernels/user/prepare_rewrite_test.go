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
