package csrc

import (
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
