package csrc

import "testing"

func TestLaunchBounds(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"__global__ void __launch_bounds__(256) k(float* x) {}", "256"},
		{"__global__ void __launch_bounds__(NT, 2) k(float* x) {}", "NT"},
		{"template <int B> __global__ void __launch_bounds__(B * 2, min(B, 4)) k(float* x) {}", "B * 2"},
		{"__launch_bounds__(128) void other();\n__global__ void k(float* x) {}", ""},
		{"__global__ void k(float* x) {}", ""},
	} {
		toks := Tokenize(c.src)
		at := -1
		for i, tk := range toks {
			if tk.Text == "k" {
				at = i
			}
		}
		if got, _ := LaunchBounds(toks, at); got != c.want {
			t.Errorf("%q: LaunchBounds = %q, want %q", c.src, got, c.want)
		}
	}
}
