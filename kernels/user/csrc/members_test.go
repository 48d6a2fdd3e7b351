package csrc

import (
	"strings"
	"testing"
)

// A class's member functions marked __host__ alone are blanked (NVRTC:
// "a function explicitly marked as a __host__ function is not allowed in
// JIT mode"); the class, its other members and the lines stay. Each case
// lists what must go and what must stay.
func TestBlankHostMembers(t *testing.T) {
	for _, c := range []struct {
		name, src  string
		gone, kept []string
	}{
		{"throwing constructor, initializer list",
			"class Scale {\n public:\n  __host__ Scale() : s(1.f) {}\n  __host__ Scale(float v) : s(v) {\n    if (v == 0.f) throw 1;\n  }\n" +
				"  __host__ __device__ float get() const { return s; }\n private:\n  float s;\n};\n",
			[]string{"Scale()", "Scale(float v)", "throw"}, []string{"class Scale {", "float get() const", "float s;", "};"}},
		{"brace initializers",
			"struct D {\n  __host__ D(int d) : a{d}, b(d ? d : 1), c{} { set(d); }\n  __device__ int div(int x) const { return x / a; }\n  int a, b, c;\n};\n",
			[]string{"set(d)", "a{d}"}, []string{"struct D {", "__device__ int div", "int a, b, c;"}},
		{"through a macro; operator, template, declaration only",
			"#define HOST __host__\n#define HD __host__ __device__\nstruct F {\n  HOST F& operator=(int d) { return *this; }\n" +
				"  template <typename T> HOST static F make(T t) { return F(); }\n  HOST void update();\n  HD int get() const { return 0; }\n" +
				"  int plain() const { return 1; }\n};\n",
			[]string{"operator=", "make(T t)", "update()"}, []string{"HD int get()", "int plain()", "#define HOST __host__"}},
		{"nested class, in a namespace, class template",
			"namespace n {\ntemplate <int N> struct Outer {\n  struct Inner {\n    __host__ Inner() {}\n    __device__ void f() {}\n  };\n" +
				"  __host__ __forceinline__ Outer(int a,\n      int b) {}\n  enum { K = N };\n};\n}\n__global__ void k() {}\n",
			[]string{"Inner() {}", "Outer(int a", "int b) {}"}, []string{"struct Inner {", "__device__ void f()", "enum { K = N };", "__global__ void k()"}},
		{"nothing host-only",
			"struct P { __host__ __device__ P() {} __device__ int f(); int g() { return 0; } __host__ int x; };\n",
			nil, []string{"P() {}", "int f();", "int g()"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Blank(c.src, Scan(c.src))
			if strings.Count(got, "\n") != strings.Count(c.src, "\n") {
				t.Errorf("lines changed:\n%s", got)
			}
			for _, g := range c.gone {
				if strings.Contains(got, g) {
					t.Errorf("%q kept:\n%s", g, got)
				}
			}
			for _, k := range c.kept {
				if !strings.Contains(got, k) {
					t.Errorf("%q blanked:\n%s", k, got)
				}
			}
		})
	}
}
