package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
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
	_, found, ok := FindEntry("__global__ void a(int* x) {}\n__global__ void b(int* y) {}", "c")
	if ok || strings.Join(found, ",") != "a,b" {
		t.Errorf("missing entry: found %v", found)
	}
	sig, _, _ := FindEntry(`__global__ void k(const float* x, int n, float alpha) {}`, "k")
	if p := sig.Params; !p[0].Const || !p[0].Pointer || p[1].Pointer || !IsIntScalar(p[1].Scalar) || IsIntScalar(p[2].Scalar) {
		t.Errorf("flags %+v", p)
	}
}

func TestScaffold(t *testing.T) {
	src := "extern \"C\" __global__ void k(const T* __restrict__ x, const int* ids, T* y, int n, int time) {}"
	text, notes, err := Scaffold("my_k", "/w/k.cu", src, "k", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"sources: {cuda: k.cu}", "{name: x, dtype: T, shape: [N], init: \"normal(0, 1)\"}", "{name: ids, dtype: i32, shape: [N], init: \"randint(0, 1024)\"}", "{name: y, dtype: T, shape: [N], out: true}", "TIME: {default", "args: [x, ids, y, N, TIME]", "check: none", "dtypes: [f32, f16, bf16]"} {
		if !strings.Contains(text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, text)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "parameter time is named TIME") {
		t.Errorf("notes %v", notes)
	}
	// what it writes parses (with a source beside it)
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, "k.cu": src})
	if _, err := Load(path); err != nil {
		t.Errorf("the scaffold does not load: %v", err)
	}
	if _, _, err := Scaffold("my_k", "/w/k.txt", src, "k", "/w"); err == nil {
		t.Error("a .txt source was accepted")
	}
	if _, _, err := Scaffold("1bad", "/w/k.cu", src, "k", "/w"); err == nil {
		t.Error("a bad name was accepted")
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

// TestScaffoldWorkAndShared: new never writes zero work (throughput 0) and
// suggests a tgm: item per static shared array, with its bytes when the
// type and extents are known.
func TestScaffoldWorkAndShared(t *testing.T) {
	src := `extern "C" __global__ void rowsum(const float* x, float* y, int rows) {
    __shared__ float red[1024];
    __shared__ T tile[WG][33];
    __shared__ float other[BLOCK];
    __shared__ mystruct s[4];
    extern __shared__ float dyn[];
}`
	text, notes, err := Scaffold("my_rowsum", "/w/k.cu", src, "rowsum", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`- {name: red, bytes: "4096"}`,
		`- {name: tile, bytes: "WG * 33 * sizeof(T)"}`,
		`# - {name: other, bytes: "TODO"}`,
		`# - {name: s, bytes: "TODO"}`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, `flops: "0"`) || strings.Contains(text, `bytes: "0"`) || strings.Contains(text, "\nwork:") {
		t.Errorf("manifest writes zero work:\n%s", text)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "extern shared array dyn") {
		t.Errorf("notes lack the extern array: %v", notes)
	}
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, "k.cu": src})
	if _, err := Load(path); err != nil {
		t.Errorf("the scaffold does not load: %v", err)
	}
}
