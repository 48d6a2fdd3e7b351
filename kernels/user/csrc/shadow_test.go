package csrc

import "testing"

// Hidden: a name every use of which a parameter or local shadows, with
// the function whose parameter it is; one used anywhere else (a file-scope
// expression, a #define's body, a parameter's type) is not hidden.
func TestHidden(t *testing.T) {
	for _, c := range []struct {
		name, src string
		hidden    bool
		fn        string
	}{
		{"cols", "kernel void k(device float* y [[buffer(0)]], constant uint& cols [[buffer(1)]]) { y[0] = cols; }", true, "k"},
		{"cols", "__global__ void k(float* y, int rows, int cols) { y[0] = cols * rows; }", true, "k"},
		{"n", "__global__ void k(float* y) { int n = 4; y[0] = n; }", true, ""},
		{"cols", "__global__ void k(float* y, int rows) { y[0] = cols; }", false, ""},
		{"cols", "__global__ void k(float* y, int cols) { y[0] = cols; }\n__global__ void j(float* y) { y[0] = cols; }", false, ""},
		{"T", "__global__ void k(const T* x, T* y) { y[0] = x[0]; }", false, ""},
		{"cols", "#define W (cols * 2)\n__global__ void k(float* y, int cols) { y[0] = cols; }", false, ""},
		{"cols", "__global__ void k(float* y) { y[0] = 1; }", false, ""},
	} {
		hidden, fn := Scan(c.src).Hidden(c.name)
		if hidden != c.hidden || fn != c.fn {
			t.Errorf("%s in %q: hidden %v in %q, want %v in %q", c.name, c.src, hidden, fn, c.hidden, c.fn)
		}
	}
}

// HiddenBy tells a template parameter (the entry's argument sets it) from
// a function parameter of the same name.
func TestHiddenByTemplateParameter(t *testing.T) {
	for _, c := range []struct {
		name, src string
		tparam    bool
	}{
		{"T", "template <typename T>\n__global__ void k(const T* x, T* y) { y[0] = x[0]; }", true},
		{"WG", "template <int WG>\n__global__ void k(float* y) { __shared__ float s[WG]; y[0] = s[0]; }", true},
		{"cols", "template <typename T>\n__global__ void k(T* y, int cols) { y[0] = cols; }", false},
	} {
		hidden, fn, tparam := Scan(c.src).HiddenBy(c.name)
		if !hidden || fn != "k" || tparam != c.tparam {
			t.Errorf("%s in %q: hidden %v in %q, template parameter %v; want hidden in k, %v", c.name, c.src, hidden, fn, tparam, c.tparam)
		}
	}
}
