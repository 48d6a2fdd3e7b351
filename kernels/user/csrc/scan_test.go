package csrc

import (
	"fmt"
	"strings"
	"testing"
)

// summary writes each declaration as "kind names device|host first-last".
func summary(f *File) []string {
	var out []string
	for _, d := range f.Decls {
		where := "host"
		if d.Device {
			where = "device"
		}
		if d.Kind != Function && d.Kind != Variable && d.Kind != Instantiation {
			where = "-"
		}
		name := strings.Join(d.Names, ",")
		if d.Kind == Instantiation {
			name = "of " + d.Template
		}
		if d.Scope != "" {
			name = d.Scope + "::" + name
		}
		out = append(out, fmt.Sprintf("%s %s %s %d-%d", d.Kind, name, where, d.Line, d.EndLine))
	}
	return out
}

func TestScanDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"kernel and host launcher", `#include <stdio.h>
__global__ void k(float* x, int n) {
    if (threadIdx.x < n) { x[threadIdx.x] = 0; }
}
void launch(float* x, int n) {
    k<<<1, 256>>>(x, n);
}
int main() { launch(0, 1); return 0; }
`, []string{"function k device 2-4", "function launch host 5-7", "function main host 8-8"}},
		{"templates with default args and launch bounds", `template <typename T, int N = (4 > 2) ? 8 : 4, typename = void>
__device__ __forceinline__ T warp_sum(T v) { return v; }
template <typename T>
__global__ void __launch_bounds__(256, 2) scale(T* __restrict__ y, const T* x, float a) {
    auto f = [&](int i) { y[i] = x[i] * a; };
    f(threadIdx.x);
}
template <class T> void run(T* y) { scale<T><<<1, 1>>>(y, y, 1.f); }
`, []string{"function warp_sum device 1-2", "function scale device 3-7", "function run host 8-8"}},
		{"variables", `__constant__ float weights[16];
__device__ int counter = 0;
static const char* names[] = {"a", "b"};
constexpr int WG = 128;
cublasHandle_t cublas_handle;
int a = 1, b = 2;
float* d_buf = nullptr;
extern __shared__ float smem[];
void (*callback)(int) = nullptr;
`, []string{"variable weights device 1-1", "variable counter device 2-2", "variable names device 3-3",
			"variable WG device 4-4", "variable cublas_handle host 5-5", "variable a,b host 6-6", "variable d_buf host 7-7",
			"variable smem device 8-8", "variable callback host 9-9"}},
		{"types and aliases", `typedef float floatX;
using acc_t = float;
struct __align__(16) Pack { float a[4]; __device__ float sum() const { return a[0]; } };
typedef struct { int x; } Pair;
enum { TILE = 32, PAD = 1 };
enum class Mode : int { Fast, Slow };
namespace cg = cooperative_groups;
using namespace std;
typedef void (*fn_t)(int);
template <typename T> using vec_t = T[4];
`, []string{"alias floatX - 1-1", "alias acc_t - 2-2", "type Pack - 3-3", "alias Pair - 4-4", "type TILE,PAD - 5-5",
			"type Mode - 6-6", "alias cg - 7-7", "alias  - 8-8", "alias fn_t - 9-9", "alias vec_t - 10-10"}},
		{"a variable of an elaborated type (mini-nbody's timer.h)", `struct timeval timerStart;
struct Later;
class Clock;
__device__ struct Pt origin;
union Bits raw, other;
enum Mode mode;
`, []string{"variable timerStart host 1-1", "type Later - 2-2", "type Clock - 3-3", "variable origin device 4-4",
			"variable raw,other host 5-5", "type Mode,mode - 6-6"}},
		{"namespaces and extern C", `namespace ops { namespace detail {
__device__ float relu(float x) { return x > 0 ? x : 0; }
void host_helper() {}
} }
extern "C" {
__global__ void k1(float* x) {}
void k1_launch(float* x);
}
extern "C" __global__ void k2(float* x) {}
`, []string{"namespace ops - 1-4", "namespace ops::detail - 1-4", "function ops::detail::relu device 2-2",
			"function ops::detail::host_helper host 3-3", "function k1 device 6-6", "function k1_launch host 7-7",
			"linkage  - 5-8", "function k2 device 9-9"}},
		{"comments, strings and raw strings holding braces", `// void commented() {
/* } struct X { */
const char* s = "}{";
const char* r = R"x(
} void fake() { )x";
char c = '}';
__device__ float f(float x) { return x; }
`, []string{"variable s device 3-3", "variable r device 4-5", "variable c host 6-6", "function f device 7-7"}},
		{"#if 0 and unbalanced branches", `#if 0
void dead() {
#endif
#ifdef USE_BF16
__global__ void k(__nv_bfloat16* x) {
#else
__global__ void k(float* x) {
#endif
    x[0] = 0;
}
#if 1
int live_host = 1;
#else
int dead_host = 1;
#endif
`, []string{"function k device 5-10", "variable live_host host 12-12"}},
		// Kaldi's base/timer.h: each branch opens the namespace the code
		// after the #endif closes; both classes are read, each in it
		{"a namespace opened once per branch", `#if defined(_WIN32)
namespace a {
class Timer { long t_; };
#else
namespace a { namespace b {
class Timer { int t_; };
} void tick();
#endif
class Profiler { Timer t_; };
}
__global__ void k(float* x) { x[0] = 0; }
`, []string{"namespace a - 2-4", "type a::Timer - 3-3", "namespace a - 5-10", "namespace a::b - 5-7", "type a::b::Timer - 6-6",
			"function a::tick host 7-7", "type a::Profiler - 9-9", "function k device 11-11"}},
		{"an extern C block per branch", `#ifdef X
extern "C" {
__device__ int f(int a) { return a; }
#elif defined(Y)
extern "C" {
__device__ int f(int a) { return -a; }
#else
extern "C" {
#endif
__device__ int g(int a) { return a; }
}
`, []string{"function f device 3-3", "linkage  - 2-4", "function f device 6-6", "linkage  - 5-7",
			"function g device 10-10", "linkage  - 8-11"}},
		// a branch leaving other blocks open (a struct, or one namespace
		// more) keeps the first branch alone, as before
		{"branches that leave different blocks open", `#ifdef X
namespace n {
#else
namespace n { namespace m {
#endif
int v;
}
#ifdef X
struct S {
#else
namespace q {
#endif
int w;
};
`, []string{"namespace n - 2-7", "variable n::v host 6-6", "type S - 9-14"}},
		{"macros that expand to declarations and specifiers", `#define DEVICE_INLINE __device__ __forceinline__
#define KERNEL(name) __global__ void name(float* x)
#define HD __host__ __device__
DEVICE_INLINE float sq(float x) { return x * x; }
KERNEL(zero) { x[0] = 0; }
HD int cdiv(int a, int b) { return (a + b - 1) / b; }
__host__ int host_only(int a) { return a; }
DECLARE_THING(foo)
static_assert(sizeof(float) == 4, "f32");
`, []string{"function sq device 4-4", "other  - 5-5", "function cdiv device 6-6", "function host_only host 7-7",
			"other  - 8-8", "other  - 9-9"}},
		{"operators, qualified definitions and explicit instantiations", `__device__ float2 operator+(float2 a, float2 b) { return a; }
struct Runner { void go(); };
void Runner::go() {}
template __global__ void scale<float>(float*, const float*, float);
constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
`, []string{"function  device 1-1", "type Runner - 2-2", "function  host 3-3", "instantiation of scale device 4-4", "function cdiv device 5-5"}},
		// cuda-samples' reduction_kernel.cu: a host template and its explicit
		// instantiations; only those of device templates (or saying so) stay
		{"explicit instantiations of host and device templates", `template <class T> __global__ void reduce6(T* g, unsigned int n) {}
template <class T> void reduce(int size, T* d_idata) { reduce6<T><<<1, 1>>>(d_idata, size); }
template void reduce<int>(int size, int* d_idata);
extern template void reduce<float>(int size, float* d_idata);
template void reduce6<float>(float*, unsigned int);
template __global__ void ops::other<double, 4>(double*);
#define KERN __global__
template KERN void __launch_bounds__(128) far<float>(float*);
template struct SharedMemory<float>;
template void launch<int>(int*);
`, []string{"function reduce6 device 1-1", "function reduce host 2-2", "instantiation of reduce host 3-3",
			"instantiation of reduce host 4-4", "instantiation of reduce6 device 5-5", "instantiation of other device 6-6",
			"instantiation of far device 8-8", "other  - 9-9", "instantiation of launch host 10-10"}},
		// causal-conv1d's ConvParamsBase opens with `using index_t = uint32_t;`:
		// a member alias, nested type or using-declaration of a class body
		// is the class's, not an alias of the file
		{"member using, nested types and namespace aliases", `struct Params {
    using index_t = unsigned;
    int n;
    index_t stride;
};
struct Outer { struct Inner { using T = int; }; enum E { A, B }; using Base::f; } outer;
template <typename T> struct Traits { using vec_t = T; typedef T elem_t; static constexpr int N = 4; };
union U { using word = unsigned; word w; float f; };
namespace ops { using index_t = long; struct Q { using K = int; }; }
__global__ void k(Params p) { using local_t = float; }
`, []string{"type Params - 1-5", "type Outer,outer - 6-6", "type Traits - 7-7", "type U - 8-8",
			"namespace ops - 9-9", "alias ops::index_t - 9-9", "type ops::Q - 9-9", "function k device 10-10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summary(Scan(tc.src))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestScanDirectivesAndUses(t *testing.T) {
	src := `#include <stdio.h>
#include "common.h"
#ifndef WG
#define WG 256
#endif
#if defined(ENABLE_BF16) && BLOCK > 2
typedef __nv_bfloat16 floatX;
#endif
#if 0
#ifdef DEAD_NAME
#endif
int dead_use = N_DEAD;
#endif
#define TILE (WG * 2)
/* a comment
   over lines */ __global__ void k(float* x, int T) { x[0] = T + TILE; }
#pragma unroll UNROLL
`
	f := Scan(src)
	for name, line := range map[string]int{"WG": 3, "ENABLE_BF16": 6, "BLOCK": 6, "TILE": 14, "DEAD_NAME": 0, "T": 0, "floatX": 0} {
		d := f.FirstDirective(name)
		got := 0
		if d != nil {
			got = d.Line
		}
		if got != line {
			t.Errorf("FirstDirective(%s) = line %d, want %d", name, got, line)
		}
	}
	for name, line := range map[string]int{"T": 16, "WG": 14, "N_DEAD": 0, "floatX": 7, "UNROLL": 17, "TILE": 16} {
		if got := f.FirstUse(name); got != line {
			t.Errorf("FirstUse(%s) = %d, want %d", name, got, line)
		}
	}
	if !f.CleanLine(15) || f.CleanLine(16) || !f.CleanLine(17) {
		t.Errorf("CleanLine 15, 16, 17 = %v %v %v, want true false true", f.CleanLine(15), f.CleanLine(16), f.CleanLine(17))
	}
	if d := f.Directives[0]; d.Include != "stdio.h" || !d.System {
		t.Errorf("first include %+v", d)
	}
	if d := f.Directives[1]; d.Include != "common.h" || d.System {
		t.Errorf("second include %+v", d)
	}
	if got := strings.Join(f.DirectiveNames(), " "); got != "WG ENABLE_BF16 BLOCK TILE" {
		t.Errorf("DirectiveNames = %s", got)
	}
	if got := strings.Join(f.DeclaredNames(), " "); got != "floatX k" {
		t.Errorf("DeclaredNames = %s", got)
	}
	if _, ok := f.Declared("floatX"); !ok {
		t.Error("floatX (typedef under #if) not declared")
	}
	if _, ok := f.Declared("T"); ok {
		t.Error("a parameter T counted as a file-scope declaration")
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"__global__ void k(float* x) { x[0] = 1; }",
		"#if 0\nvoid f() {\n#else\nvoid f(int) {\n#endif\n}\n",
		"template <typename T, int N = (1 > 2)> __device__ T f(T x) { return [](){ return 1; }(); }",
		`const char* r = R"d( } )d"; char c = '\''; /* unterminated`,
		"namespace a { extern \"C\" { struct S { int x; }; enum { A = 1 }; } }}}}{{{",
		"#define X(a) __device__ a\nX(int) y;\n#ifdef\n#elif\n#else\n#endif\n#endif\n",
		"typedef void (*fn)(int); using namespace std; int a = 1, b{2}, c(3);",
		"R\"", "'", "#", "\\\n#define A \\\n B", "1'000'000 .5e+3f 0x1p-3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sc := Scan(src)
		for _, d := range sc.Decls {
			if d.Start < 0 || d.End > len(src) || d.Start > d.End || d.Line > d.EndLine {
				t.Fatalf("decl %+v out of bounds for %d bytes", d, len(src))
			}
		}
		for _, d := range sc.Directives {
			if d.Start < 0 || d.End > len(src) || d.Start > d.End {
				t.Fatalf("directive %+v out of bounds", d)
			}
		}
		_ = Blank(src, sc)
	})
}

func TestBlankExplicitInstantiations(t *testing.T) {
	src := "template <class T> __global__ void k(T* x) {}\ntemplate <class T> void run(T* x) {}\n" +
		"template void run<int>(int* x);\ntemplate void k<int>(int*);\nextern template void run<float>(\n    float* x);\n"
	want := "template <class T> __global__ void k(T* x) {}\n\n\ntemplate void k<int>(int*);\n\n\n"
	if got := Blank(src, Scan(src)); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestBlank(t *testing.T) {
	src := "#include <stdio.h>\nint g = 1; __device__ int d = 2;\nvoid host(int x) {\n#ifdef X\n  puts(\"}\");\n#endif\n}\n__global__ void k() {}\n"
	want := "#include <stdio.h>\n           __device__ int d = 2;\n\n#ifdef X\n\n#endif\n\n__global__ void k() {}\n"
	if got := Blank(src, Scan(src)); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// A host global of an elaborated type from a host header (mini-nbody's
// timer.h: `struct timeval timerStart;` beside <sys/time.h>, a stub for
// NVRTC) is blanked with the host code that uses it: NVRTC would refuse
// the incomplete type.
func TestBlankElaboratedHostVariable(t *testing.T) {
	src := "#include <sys/time.h>\nstruct timeval timerStart;\nvoid StartTimer() { gettimeofday(&timerStart, NULL); }\n__global__ void k() {}\n"
	want := "#include <sys/time.h>\n\n\n__global__ void k() {}\n"
	if got := Blank(src, Scan(src)); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
