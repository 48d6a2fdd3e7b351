package csrc

import (
	"slices"
	"strings"
	"testing"
)

func TestFindEntries(t *testing.T) {
	for _, c := range []struct {
		name, src, entry string
		want             []string // "type name" per bindable param
		line             int
	}{
		{"plain", `extern "C" __global__ void k(const float* x, float* y, int n) {}`, "k", []string{"float* x", "float* y", "int n"}, 1},
		{"restrict and comments", "// k(int) is not it\n/* __global__ void fake(int a) */\nextern \"C\" __global__ void\nk(const T* __restrict__ X, /* out */ T* __restrict__ Y,\n  unsigned int rows) {}", "k", []string{"T* X", "T* Y", "unsigned int rows"}, 4},
		{"launch bounds", `extern "C" __global__ void __launch_bounds__(256, 2) k2(float* a) {}`, "k2", []string{"float* a"}, 1},
		{"template", "template <int BM, typename U>\n__global__ void tk(const U* a, U* b, int n) {}", "tk", []string{"U* a", "U* b", "int n"}, 2},
		{"metal", "#include <metal_stdlib>\nkernel void mk(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]],\n constant P& p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {}", "mk", []string{"device T* X", "device T* Y", "constant P& p"}, 2},
		{"metal [[kernel]]", "[[kernel]] void mk2(device float* x [[buffer(0)]]) {}", "mk2", []string{"device float* x"}, 1},
		// MLX's gemv: kernel among other attributes, one with arguments
		{"metal [[kernel, …(…)]]", "template <typename T, int BM>\n[[kernel, max_total_threads_per_threadgroup(BM * 32)]] void gemv(\n    const device T* mat [[buffer(0)]], device T* out [[buffer(1)]]) {}", "gemv", []string{"device T* mat", "device T* out"}, 2},
		{"metal [[…, kernel]]", "[[max_total_threads_per_threadgroup(64), kernel]] void mk3(device float* x [[buffer(0)]]) {}", "mk3", []string{"device float* x"}, 1},
		{"void params", `__global__ void v(void) {}`, "v", nil, 1},
		{"macro lines skipped", "#define K(x) __global__ void bad(x)\n__global__ void good(int* p) {}", "good", []string{"int* p"}, 2},
		{"string literal", "const char* s = \"__global__ void fake(int)\";\n__global__ void real(float *x) {}", "real", []string{"float* x"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig, found, ok := FindEntry(c.src, c.entry)
			if !ok {
				t.Fatalf("not found; found %v", found)
			}
			var got []string
			for _, p := range sig.Bindable() {
				got = append(got, strings.TrimSpace(p.Type+" "+p.Name))
			}
			if strings.Join(got, ", ") != strings.Join(c.want, ", ") {
				t.Errorf("params %q, want %q", got, c.want)
			}
			if sig.Line != c.line {
				t.Errorf("line %d, want %d", sig.Line, c.line)
			}
		})
	}
	// A [[host_name]] instantiation is not an entry named decltype.
	inst := "template <typename T> [[kernel]] void k(device T* y [[buffer(0)]]) {}\ntemplate [[host_name(\"k_f32\")]] [[kernel]] decltype(k<float>) k<float>;"
	if _, found, _ := FindEntry(inst, "k_f32"); strings.Join(found, ",") != "k" {
		t.Errorf("host_name instantiation: entries found %v, want only the template k", found)
	}
	// An attribute's argument named kernel does not make a kernel.
	if _, found, _ := FindEntry("[[deprecated(kernel)]] void helper(device float* x) {}\nkernel void k(device float* y) {}", "helper"); strings.Join(found, ",") != "k" {
		t.Errorf("attribute argument: entries found %v, want only k", found)
	}
	_, found, ok := FindEntry("__global__ void a(int* x) {}\n__global__ void b(int* y) {}", "c")
	if ok || strings.Join(found, ",") != "a,b" {
		t.Errorf("missing entry: found %v", found)
	}
	sig, _, _ := FindEntry(`__global__ void k(const float* x, int n, float alpha) {}`, "k")
	if p := sig.Params; !p[0].Const || !p[0].Pointer || p[1].Pointer || !IsIntScalar(p[1].Scalar) || IsIntScalar(p[2].Scalar) {
		t.Errorf("flags %+v", p)
	}
}

func FuzzFindEntries(f *testing.F) {
	for _, s := range []string{
		`extern "C" __global__ void k(const float* x, float* y, int n) {}`,
		"kernel void mk(device const T* X [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {}",
		"__global__ void __launch_bounds__(256) k(",
		"/* unterminated", "\"unterminated", "[[kernel]] void f(int a = 3, float* [[x]]",
		"template <typename T> __global__ void t(T* a) {}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, s := range FindEntries(src) {
			if s.Entry == "" {
				t.Fatal("empty entry name")
			}
			_ = s.String()
			_ = s.Bindable()
		}
	})
}

func TestFindEntryNames(t *testing.T) {
	src := `
namespace ops {
namespace fwd {
template <typename T, int VEC = 4, class Op>
__global__ void __launch_bounds__(256) scale(T* out, const T* in, int n) {}
}  // namespace fwd
__global__ __attribute__((noinline)) void plain(float* y) { if (1) { } }
}
template <typename U> __device__ U helper(U x) { return x; }
__global__ void [[maybe_unused]] top(float* y, float a) {}
__global__ void top(float* y, float a, int n) {}
__global__ void top(double* y, double a) {}
`
	for _, c := range []struct {
		name, want, ns string
		tmpl           []string
	}{
		{"scale", "scale", "ops::fwd", []string{"T", "VEC", "Op"}},
		{"fwd::scale", "scale", "ops::fwd", []string{"T", "VEC", "Op"}},
		{"ops::fwd::scale", "scale", "ops::fwd", []string{"T", "VEC", "Op"}},
		{"::ops::plain", "plain", "ops", nil},
		{"plain", "plain", "ops", nil},
		{"top", "top", "", nil},
	} {
		sig, found, ok := FindEntry(src, c.name)
		if !ok {
			t.Errorf("%s: not found (found %v)", c.name, found)
			continue
		}
		if sig.Entry != c.want || sig.Namespace != c.ns || strings.Join(sig.Template, ",") != strings.Join(c.tmpl, ",") {
			t.Errorf("%s: got %s in %q template %v", c.name, sig.Entry, sig.Namespace, sig.Template)
		}
	}
	for _, bad := range []string{"other::scale", "fwd::plain", "helper", "nope"} {
		if _, found, ok := FindEntry(src, bad); ok {
			t.Errorf("%s found", bad)
		} else if strings.Join(found, ",") != "ops::fwd::scale,ops::plain,top" {
			t.Errorf("%s: names %v", bad, found)
		}
	}
	sigs, _ := Overloads(src, "top")
	if len(sigs) != 3 {
		t.Fatalf("overloads of top: %d", len(sigs))
	}
	byCount := func(n int) func(Signature) bool {
		return func(s Signature) bool { return len(s.Bindable()) == n }
	}
	if s, err := Pick("top", sigs, byCount(3)); err != nil || len(s.Params) != 3 {
		t.Errorf("pick by 3: %v %v", s, err)
	}
	if _, err := Pick("top", sigs, byCount(2)); err == nil || !strings.Contains(err.Error(), "ambiguous: 2 overloads") {
		t.Errorf("two overloads of 2 parameters: %v", err)
	}
	if _, err := Pick("top", sigs, byCount(5)); err == nil || !strings.Contains(err.Error(), "none takes these arguments") || !strings.Contains(err.Error(), "line 11") {
		t.Errorf("no overload of 5: %v", err)
	}
	one, _ := Overloads(src, "plain")
	if s, err := Pick("plain", one, byCount(7)); err != nil || s.Entry != "plain" {
		t.Errorf("a single candidate is returned as it is: %v", err)
	}
}

func TestParamPointee(t *testing.T) {
	sig, _, ok := FindEntry(`__global__ void k(const float* __restrict__ a, float* const b, const __nv_bfloat16 *c,
		unsigned long long n, const int m, volatile float4* v, unsigned int, size_t s) {}`, "k")
	if !ok {
		t.Fatal("not found")
	}
	want := []struct {
		name, pointee, scalar string
		ptr, ro               bool
	}{
		{"a", "float", "", true, true},
		{"b", "float", "", true, false},
		{"c", "__nv_bfloat16", "", true, true},
		{"n", "", "unsigned long long", false, false},
		{"m", "", "int", false, false},
		{"v", "float4", "", true, false},
		{"", "", "unsigned int", false, false},
		{"s", "", "size_t", false, false},
	}
	if len(sig.Params) != len(want) {
		t.Fatalf("params %+v", sig.Params)
	}
	for i, w := range want {
		p := sig.Params[i]
		if p.Name != w.name || p.Pointee != w.pointee || p.Scalar != w.scalar || p.Pointer != w.ptr || p.ReadOnly != w.ro {
			t.Errorf("param %d: %+v, want %+v", i, p, w)
		}
	}
	msig, _, _ := FindEntry("kernel void mk(device const half* x [[buffer(0)]], constant float* c [[buffer(1)]], device float* y [[buffer(2)]]) {}", "mk")
	for i, ro := range []bool{true, true, false} {
		if p := msig.Params[i]; p.ReadOnly != ro || !p.Pointer {
			t.Errorf("metal param %d: %+v", i, p)
		}
	}
	if msig.Params[0].Pointee != "half" {
		t.Errorf("metal pointee %q", msig.Params[0].Pointee)
	}
}

func TestTypedefs(t *testing.T) {
	got := Typedefs(`
typedef unsigned long long u64_t;
using idx_t = long;
#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif
typedef struct { int a; } Pair;
typedef void (*fn_t)(int);
namespace ns { using real = double; }
`)
	want := map[string]string{"u64_t": "unsigned long long", "idx_t": "long", "floatX": "", "real": "double"}
	if len(got) != len(want) {
		t.Errorf("typedefs %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %q (%v), want %q", k, g, ok, v)
		}
	}
}

// The signature prints its parameters as declared: const and the address
// space stay (a note that drops them misreads which buffers are inputs).
func TestSignatureStringKeepsQualifiers(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`extern "C" __global__ void k(float* out, const float* x, const int n) {}`,
			"k(float* out, const float* x, const int n)"},
		{`__global__ void k(float* __restrict__ y, float* const p, int n) {}`,
			"k(float* y, float* const p, int n)"},
		{"kernel void mk(device const float* X [[buffer(0)]], constant uint& n [[buffer(1)]], uint i [[thread_position_in_grid]]) {}",
			"mk(device const float* X, constant uint& n, uint i)"},
	} {
		sigs := FindEntries(c.src)
		if len(sigs) != 1 {
			t.Fatalf("%s: %d entries", c.src, len(sigs))
		}
		if got := sigs[0].String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

// A Metal buffer parameter without [[buffer(n)]] takes the first index no
// other parameter takes, in parameter order, as Apple's compiler assigns it.
func TestImplicitMetalBufferIndices(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // Attr per parameter
	}{
		{"none written", "kernel void add(device const float* a, device const float* b, device float* out, uint i [[thread_position_in_grid]]) {}",
			[]string{"buffer(0)", "buffer(1)", "buffer(2)", "thread_position_in_grid"}},
		{"a constant scalar", "kernel void s(device float* r, const device float* a, constant uint& n, uint3 g [[threadgroup_position_in_grid]]) {}",
			[]string{"buffer(0)", "buffer(1)", "buffer(2)", "threadgroup_position_in_grid"}},
		{"mixed: explicit indices are skipped", "kernel void m(device float* a [[buffer(0)]], device float* b, constant int& n [[buffer(1)]], device float* c) {}",
			[]string{"buffer(0)", "buffer(2)", "buffer(1)", "buffer(3)"}},
		{"threadgroup pointer keeps no index", "kernel void t(device float* a, threadgroup float* s [[threadgroup(0)]], device float* b) {}",
			[]string{"buffer(0)", "threadgroup(0)", "buffer(1)"}},
		{"CUDA parameters untouched", "__global__ void c(const float* a, float* b, int n) {}",
			[]string{"", "", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sigs := FindEntries(c.src)
			if len(sigs) != 1 {
				t.Fatalf("found %d kernels", len(sigs))
			}
			var got []string
			for _, p := range sigs[0].Params {
				got = append(got, p.Attr)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("attributes %q, want %q", got, c.want)
			}
		})
	}
}

// An array declarator makes a parameter a pointer, as in C and Metal (MLX's
// binary_g_nd2 takes `constant const int64_t a_strides[2]`).
func TestArrayParams(t *testing.T) {
	sig, _, ok := FindEntry("kernel void g(device const float* a, constant const int64_t a_strides[2], constant const int64_t b_strides [ N * 2 ], const float w[], uint2 index [[thread_position_in_grid]]) {}", "g")
	if !ok {
		t.Fatal("not found")
	}
	want := []struct{ name, pointee, extent, declared string }{
		{"a", "float", "", "device const float*"},
		{"a_strides", "int64_t", "2", "constant const int64_t*"},
		{"b_strides", "int64_t", "N * 2", "constant const int64_t*"},
		{"w", "float", "", "const float*"},
	}
	for i, w := range want {
		p := sig.Params[i]
		if p.Name != w.name || !p.Pointer || !p.ReadOnly || p.Pointee != w.pointee || p.Extent != w.extent || p.Declared != w.declared || p.Scalar != "" {
			t.Errorf("param %d: %+v, want %+v", i, p, w)
		}
	}
	if p := sig.Params[4]; p.Name != "index" || p.Pointer || p.Attr != "thread_position_in_grid" {
		t.Errorf("param 4: %+v", p)
	}
	if got := sig.Params[2].Extents; !slices.Equal(got, []string{"N * 2"}) {
		t.Errorf("b_strides has extents %q, want [N * 2]", got)
	}
	if got := sig.Params[1].Attr; got != "buffer(1)" {
		t.Errorf("a_strides gets %q, want buffer(1) (Apple's implicit index)", got)
	}
}

// A multi-dimensional array parameter records every extent, outermost
// first; its pointee is the element type.
func TestMultiDimArrayParams(t *testing.T) {
	sig, _, ok := FindEntry("kernel void g(device float* out, constant const float taps[2][3], constant int idx[N][2 * R + 1][4] [[buffer(5)]], const float w[][8]) {}", "g")
	if !ok {
		t.Fatal("not found")
	}
	for i, want := range []struct {
		name, pointee, extent string
		extents               []string
	}{
		{"taps", "float", "2", []string{"2", "3"}},
		{"idx", "int", "N", []string{"N", "2 * R + 1", "4"}},
		{"w", "float", "", []string{"", "8"}},
	} {
		p := sig.Params[i+1]
		if p.Name != want.name || !p.Pointer || p.Pointee != want.pointee || p.Extent != want.extent || !slices.Equal(p.Extents, want.extents) {
			t.Errorf("param %d: %+v, want %+v", i+1, p, want)
		}
	}
	if got := sig.Params[2].Attr; got != "buffer(5)" {
		t.Errorf("idx gets %q, want buffer(5)", got)
	}
	if got := sig.Params[0].Extents; got != nil {
		t.Errorf("a pointer has extents %q", got)
	}
}

// An explicit specialization or instantiation of a template kernel is the
// same template, not an overload: the primary template is the one entry.
// True overloads (other parameter lists, non-templates) stay overloads.
func TestExplicitSpecializationsAreNotOverloads(t *testing.T) {
	primary := "template <typename T>\n__global__ void k(float* out, const T* in, int n) {}\n"
	for _, c := range []struct {
		name, src string
		wantLines []int // lines of the overloads of k
	}{
		{"specialization, args deduced", primary + "template <>\n__global__ void k(float* out, const half* in, int n) {}\n", []int{2}},
		{"specialization, args written", primary + "template <> __global__ void k<half>(float* out, const half* in, int n) {}\n", []int{2}},
		{"specialization before nested args", primary + "template <> __global__ void k<vec<half, 2>>(float* out, const vec<half, 2>* in, int n) {}\n", []int{2}},
		{"explicit instantiation", primary + "template __global__ void k<float>(float*, const float*, int);\n", []int{2}},
		{"extern template", primary + "extern template __global__ void k<float>(float*, const float*, int);\n", []int{2}},
		{"launch bounds", primary + "template <> __global__ void __launch_bounds__(256) k<half>(float* out, const half* in, int n) {}\n", []int{2}},
		{"forward declaration", "__global__ void k(float* out, const float*, int);\n__global__ void k(float* out, const float* in, int n) {}\n", []int{2}},
		{"true overload kept", primary + "__global__ void k(float* out, const half* in, int n) {}\n", []int{2, 3}},
		{"other parameter list kept", primary + "template <>\n__global__ void k(float* out, int n) {}\n__global__ void k(double* out, int n) {}\n", []int{2, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sigs, found := Overloads(c.src, "k")
			var lines []int
			for _, s := range sigs {
				lines = append(lines, s.Line)
			}
			if !slices.Equal(lines, c.wantLines) {
				t.Fatalf("overloads at lines %v, want %v (found %v)", lines, c.wantLines, found)
			}
			if c.wantLines[0] == 2 && strings.HasPrefix(c.src, "template") && (strings.Join(sigs[0].Template, ",") != "T" || sigs[0].Specialization) {
				t.Errorf("the primary template binds the args: got %+v", sigs[0])
			}
			if entries := FindEntries(c.src); len(entries) != len(c.wantLines) {
				t.Errorf("FindEntries: %d kernels, want %d", len(entries), len(c.wantLines))
			}
		})
	}
	// One kernel name with two overloads that take as many args is still ambiguous.
	sigs, _ := Overloads(primary+"__global__ void k(float* out, const half* in, int n) {}\n", "k")
	if _, err := Pick("k", sigs, func(Signature) bool { return true }); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("true overloads: %v", err)
	}
}

// A specialization written out of its namespace (`ns::k<half>`) belongs to
// ns, and one whose primary template is elsewhere (another file) stays,
// marked, so that the caller can look further.
func TestSpecializationNamespaces(t *testing.T) {
	src := "namespace ns {\ntemplate <typename T> __global__ void k(T* x) {}\n}\ntemplate <> __global__ void ns::k<half>(half* x) {}\n"
	if sigs, _ := Overloads(src, "ns::k"); len(sigs) != 1 || sigs[0].Line != 2 {
		t.Errorf("ns::k: %+v", sigs)
	}
	alone := "template <> __global__ void k<half>(half* x) {}\n"
	sigs, _ := Overloads(alone, "k")
	if len(sigs) != 1 || !sigs[0].Specialization || sigs[0].Template != nil {
		t.Errorf("a specialization alone: %+v", sigs)
	}
	outOfLine := "namespace a { __global__ void f(int* x); }\n__global__ void a::f(int* x) {}\n"
	if sigs, _ := Overloads(outOfLine, "a::f"); len(sigs) != 1 || sigs[0].Line != 2 {
		t.Errorf("out-of-line definition: %+v", sigs)
	}
}

func TestEntryFunction(t *testing.T) {
	for in, want := range map[string]string{"kern": "kern", "ns::kern": "kern", " ns::a::kern<T, BLOCK * 2> ": "kern", "k<cub::Pair<int, float>>": "k"} {
		if got := EntryFunction(in); got != want {
			t.Errorf("EntryFunction(%q) = %q, want %q", in, got, want)
		}
	}
}

// A CUDA variable named kernel (a function pointer the launcher picks,
// as exllamav2's rms_norm.cu does) is not Metal's kernel keyword: only
// the __global__ template is an entry; Metal's `kernel void` still is.
func TestKernelVariableIsNoEntry(t *testing.T) {
	cuda := `typedef void (*fp_scale)(const float*, float*, int);
template <int VEC> __global__ void scale(const float* x, float* y, int n) {}
fp_scale pick(int vec) { if (vec == 1) return scale<1>; return scale<2>; }
void run(const float* x, float* y, int n, int vec) {
    fp_scale kernel = pick(vec);
    kernel<<<n / 256, 256>>>(x, y, n);
}
`
	var names []string
	for _, s := range FindEntries(cuda) {
		names = append(names, s.Entry)
	}
	if strings.Join(names, ",") != "scale" {
		t.Errorf("entries %v, want [scale]", names)
	}
	metal := "#include <metal_stdlib>\nkernel void add(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] += 1; }\n"
	if es := FindEntries(metal); len(es) != 1 || es[0].Entry != "add" {
		t.Errorf("metal entries %v", es)
	}
}

// A header's #if and #else branches that each open the same namespace,
// closed once after #endif (Kaldi's base/timer.h), leave the kernels after
// it outside that namespace; a kernel inside a namespace keeps it.
func TestFindEntriesNamespacePerBranch(t *testing.T) {
	src := `#if defined(_MSC_VER)
namespace kaldi {
class Timer { long t; };
#else
namespace kaldi {
class Timer { int t; };
#endif
}  // namespace kaldi

namespace inner { __global__ void in_ns(float* y) { y[0] = 1; } }
template <typename Real>
__global__ static void _normalize_per_row(Real* y) { y[0] = 0; }
`
	got := map[string]string{}
	for _, s := range FindEntries(src) {
		got[s.Entry] = s.Namespace
	}
	if ns, ok := got["_normalize_per_row"]; !ok || ns != "" {
		t.Errorf("_normalize_per_row: namespace %q (found %v), want none", ns, ok)
	}
	if ns := got["in_ns"]; ns != "inner" {
		t.Errorf("in_ns: namespace %q, want inner", ns)
	}
}
