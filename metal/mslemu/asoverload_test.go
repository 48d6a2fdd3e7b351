package mslemu

import (
	"strings"
	"testing"
)

// Definitions overloaded only on the address space keep their first one
// per scope; the rest become blank lines (line numbers kept), a kept
// member loses its trailing address space, and overloads that differ in
// more than the address space, or sit in another struct, stay.
func TestDropAddressSpaceOverloads(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"ctors",
			"struct C {\n  float r;\n  constexpr C() thread : r(0) {};\n  constexpr C() threadgroup : r(0) {};\n  template <typename U, typename = void>\n  constexpr C(U x) device : r(x) {}\n  template <typename U, typename = void>\n  constexpr C(U x) thread : r(x) {}\n};",
			"struct C {\n  float r;\n  constexpr C()  : r(0) {};\n\n  template <typename U, typename = void>\n  constexpr C(U x)  : r(x) {}\n\n\n};"},
		{"free_functions",
			"template <typename T>\nconstexpr thread C<T>& operator+=(thread C<T>& a, C<T> b) { a.r += b.r; return a; }\n\ntemplate <typename T>\nconstexpr device C<T>& operator+=(device C<T>& a, C<T> b) { a.r += b.r; return a; }\nint f(int x) { return x; }",
			"template <typename T>\nconstexpr thread C<T>& operator+=(thread C<T>& a, C<T> b) { a.r += b.r; return a; }\n\n\n\nint f(int x) { return x; }"},
		{"conversions",
			"struct V {\n  operator float() const thread { return 1; }\n  operator float() const device { return 1; }\n  operator int() const constant { return 2; }\n};",
			"struct V {\n  operator float() const  { return 1; }\n\n  operator int() const  { return 2; }\n};"},
		{"lone_constant_ctor",
			"struct L {\n  constexpr L(constant char*, constant char*) constant {}\n};",
			"struct L {\n  constexpr L(constant char*, constant char*)  {}\n};"},
		{"other_struct_and_overload_kept",
			"struct A { float g() const thread { return 1; } };\nstruct B { float g() const thread { return 2; } };\nfloat h(thread float& x) { return x; }\nfloat h(thread int& x) { return x; }",
			"struct A { float g() const  { return 1; } };\nstruct B { float g() const  { return 2; } };\nfloat h(thread float& x) { return x; }\nfloat h(thread int& x) { return x; }"},
		{"parameter_comments", // a ')' in a comment is no parameter list's end
			"template <int c>\n[[kernel]] void k(\n    const device float* x [[buffer(0)]], // (batch, n)\n    device float* y [[buffer(1)]], /* (n) */ constant int& n [[buffer(2)]]) {}\nvoid g(device float* p) { f(p) ; }",
			"template <int c>\n[[kernel]] void k(\n    const device float* x [[buffer(0)]], // (batch, n)\n    device float* y [[buffer(1)]], /* (n) */ constant int& n [[buffer(2)]]) {}\nvoid g(device float* p) { f(p) ; }"},
		{"multi_line_macros", // a macro body spread over continued lines is no definition: both kernels stay
			"# define OP_A(NAME, T) \\\nkernel void NAME( \\\n    constant uint& n, \\\n    device T* y) { \\\n  y[0] = T(n); \\\n}\n#define OP_B(NAME, T) \\\r\nkernel void NAME( \\\r\n    constant uint& n, \\\r\n    device T* y) { \\\r\n  y[0] = T(n) + 1; \\\r\n}\r\nOP_A(a_f32, float)\nOP_B(b_f32, float)",
			"# define OP_A(NAME, T) \\\nkernel void NAME( \\\n    constant uint& n, \\\n    device T* y) { \\\n  y[0] = T(n); \\\n}\n#define OP_B(NAME, T) \\\r\nkernel void NAME( \\\r\n    constant uint& n, \\\r\n    device T* y) { \\\r\n  y[0] = T(n) + 1; \\\r\n}\r\nOP_A(a_f32, float)\nOP_B(b_f32, float)"},
		{"comments_and_macros",
			"// thread { } ( device\n#define M(x) { x }\nfloat k(device float* p) { return p[0]; } /* } */\nfloat k(constant float* p) { return p[0]; }",
			"// thread { } ( device\n#define M(x) { x }\nfloat k(device float* p) { return p[0]; }\n"},
	} {
		if got := dropAddressSpaceOverloads(c.in); lineWords(got) != lineWords(c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// lineWords is s with each line's blanks collapsed, the line count kept.
func lineWords(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// A `template <>` inside a struct goes (the specialization becomes an
// overload); one at namespace scope, or in a function, stays.
func TestDropClassScopeSpecializations(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"struct F {\n  template <typename T> T operator()(T x) { return x; }\n  template <>\n  float operator()(float x) { return -x; }\n};",
			"struct F {\n  template <typename T> T operator()(T x) { return x; }\n\n  float operator()(float x) { return -x; }\n};"},
		{"template <typename T> T g(T x) { return x; }\ntemplate <> float g(float x) { return -x; }",
			"template <typename T> T g(T x) { return x; }\ntemplate <> float g(float x) { return -x; }"},
		{"template <typename T> struct S { T v; };\ntemplate <> struct S<float> { float w; };",
			"template <typename T> struct S { T v; };\ntemplate <> struct S<float> { float w; };"},
	} {
		if got := dropClassScopeSpecializations(c.in); lineWords(got) != lineWords(c.want) {
			t.Errorf("dropClassScopeSpecializations(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
