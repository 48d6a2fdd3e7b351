package csrc

import (
	"strings"
	"testing"
)

// A PyTorch-extension style file ends with macro invocations that define
// host functions: those are blanked; invocations that give device code,
// types or assertions stay.
func TestHostMacroInvocations(t *testing.T) {
	const defs = `#define BIND_SCALE(tag, elem) \
  void scale_##tag(Tensor x) { scale_kernel<<<1, 32>>>((elem*)x.ptr()); }
#define MAKE_KERNEL(ty) __global__ void twice_##ty(ty* x) { x[threadIdx.x] *= 2; }
#define DEVFN __device__
#define MAKE_HELPER(ty) DEVFN ty half_of(ty v) { return v / 2; }
#define INSTANCE(ty) template __global__ void scale_kernel<ty>(ty*);
#define PAIR_TYPE(n) struct n { float a, b; };
#define HOST_COUNTER(n) static int n##_calls = 0;
`
	for _, tc := range []struct {
		name, use string
		host      bool
	}{
		{"file's macro defining a host launcher", "BIND_SCALE(f32, float)", true},
		{"file's macro defining a host variable", "HOST_COUNTER(scale);", true},
		{"undefined macro with a body (pybind)", "PYBIND11_MODULE(ext, m) {\n  m.def(\"scale\", &scale_f32);\n}", true},
		{"undefined macro with a body (torch)", "TORCH_LIBRARY(ops, m) { m.def(\"scale(Tensor x) -> ()\"); }", true},
		{"file's macro defining a kernel", "MAKE_KERNEL(float)", false},
		{"file's macro whose device word is another macro", "MAKE_HELPER(float)", false},
		{"file's macro instantiating a kernel", "INSTANCE(float)", false},
		{"file's macro defining a type", "PAIR_TYPE(pair)", false},
		{"undefined macro with a body reading threadIdx", "HEADER_KERNEL(zero, float* y) { y[threadIdx.x] = 0; }", false},
		{"undefined macro with a body declaring a __global__ kernel", "KERNEL_BODY(zero) { __global__ void zero(float* y) { y[0] = 0; } }", false},
		{"undefined macro whose arguments say __global__", "WITH_BOUNDS(__global__ void fill(float* y)) { y[0] = 1; }", false},
		{"undefined macro with a body calling a __device__ lambda", "ON_DEVICE(k) { auto f = [] __device__ (float v) { return v; }; }", false},
		{"undefined macro without a body", "REGISTER_OP(scale);", false},
		{"undefined macro without a body naming a host function (ATen's REGISTER_DISPATCH)", "REGISTER_DISPATCH(scale_stub, &launch_scale);", true},
		{"undefined macro without a body naming the kernel", "REGISTER_KERNEL(scale_kernel<float>);", false},
		{"undefined macro without a body naming a device function", "REGISTER_HELPER(twice_value);", false},
		{"static_assert", "static_assert(sizeof(float) == 4, \"32-bit float\");", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := defs + "template <typename T> __global__ void scale_kernel(T* x) { x[threadIdx.x] *= 3; }\n" +
				"__device__ float twice_value(float v) { return 2 * v; }\n" +
				"void launch_scale(float* x) { scale_kernel<<<1, 32>>>(x); }\n" + tc.use + "\n"
			f := Scan(src)
			last := f.Decls[len(f.Decls)-1]
			if got := last.Host(); got != tc.host {
				t.Errorf("%q: host %v, want %v (decls %v)", tc.use, got, tc.host, summary(f))
			}
			blanked := Blank(src, f)
			if kept := strings.Contains(blanked, tc.use); kept == tc.host {
				t.Errorf("%q kept %v after Blank:\n%s", tc.use, kept, blanked)
			}
			if !strings.Contains(blanked, "__global__ void scale_kernel") || strings.Count(blanked, "\n") != strings.Count(src, "\n") {
				t.Errorf("the kernel or the line count changed:\n%s", blanked)
			}
		})
	}
}

// A macro that an included local header defines is read through the
// header's replacement: a device function's head stays, a host launcher
// goes, as for the file's own macros.
func TestScanWithHeaderMacros(t *testing.T) {
	header := Scan("#define BINARY_OP(name) __device__ float name(float a, float b)\n" +
		"#define LAUNCHER(name) void name(float* x) { k<<<1, 1>>>(x); }\n")
	for _, tc := range []struct {
		use        string
		host, bare bool // bare: Scan without the header
	}{
		{"BINARY_OP(add_op) { return a + b; }", false, true},
		{"LAUNCHER(launch_k)", true, false},
	} {
		if got := ScanWith(tc.use+"\n", header).Decls[0].Host(); got != tc.host {
			t.Errorf("ScanWith(%q, header): host %v, want %v", tc.use, got, tc.host)
		}
		if got := Scan(tc.use + "\n").Decls[0].Host(); got != tc.bare {
			t.Errorf("Scan(%q): host %v, want %v", tc.use, got, tc.bare)
		}
	}
}

// A table written through a pair of macros, one opening the initializer
// and one closing it (ggml's GGML_TABLE_BEGIN / GGML_TABLE_END), is one
// declaration, host or device as the opening macro expands: device data
// stays, host data goes, and the code after it is read as before.
func TestTableMacroPairs(t *testing.T) {
	const defs = "#define ROWS_BEGIN(ty, name, n) static const __device__ ty name[n] = {\n" +
		"#define HOST_ROWS_BEGIN(ty, name, n) static ty name[n] = {\n" +
		"#define ROWS_END() };\n#define ROWS_CLOSE };\n"
	const after = "void host_fn(float* x) { x[0] = 0; }\n__global__ void k(float* y) { y[0] = 1; }\n"
	for _, tc := range []struct {
		name, table string
		host        bool
	}{
		{"device table", "ROWS_BEGIN(float, weights, 4)\n  1.0f, 2.0f,\n  {3.0f}, 4.0f,\nROWS_END()\n", false},
		{"device table closed by an object-like macro", "ROWS_BEGIN(int, idx, 2)\n  7, 8,\nROWS_CLOSE\n", false},
		{"host table", "HOST_ROWS_BEGIN(float, host_rows, 2)\n  1.0f, 2.0f,\nROWS_END()\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := defs + tc.table + after
			blanked := Blank(src, Scan(src))
			if kept := strings.Contains(blanked, tc.table); kept == tc.host {
				t.Errorf("table kept %v, want %v:\n%s", kept, !tc.host, blanked)
			}
			if strings.Contains(blanked, "void host_fn") || !strings.Contains(blanked, "__global__ void k(float* y) { y[0] = 1; }") {
				t.Errorf("the code after the table is not read as before:\n%s", blanked)
			}
			if strings.Count(blanked, "\n") != strings.Count(src, "\n") {
				t.Errorf("the line count changed:\n%s", blanked)
			}
		})
	}
	// the macros defined in a local header the file includes
	header := Scan(defs)
	src := "ROWS_BEGIN(float, w, 2)\n  1.0f, 2.0f,\nROWS_END()\n" + after
	if blanked := Blank(src, ScanWith(src, header)); !strings.Contains(blanked, "1.0f, 2.0f,\nROWS_END()") || strings.Contains(blanked, "host_fn") {
		t.Errorf("with the header's macros:\n%s", blanked)
	}
}
