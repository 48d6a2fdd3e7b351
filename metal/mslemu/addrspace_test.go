package mslemu

import "testing"

// Threadgroup variables become statics wherever they are declared (arrays
// and single values, of template types too), while threadgroup function
// parameters and pointers stay as they are (the qualifier itself is
// emptied by the emulated stdlib).
func TestThreadgroupDeclarationsBecomeStatic(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  threadgroup float s[32];", "  static float s[32];"},
		{"    threadgroup MD<T> shared[N];                  \\", "    static MD<T> shared[N];                  \\"},
		{"    threadgroup MD<T> md_total;", "    static MD<T> md_total;"},
		{"  threadgroup metal::pair<int, vec<float, 4>> p[2][4];", "  static metal::pair<int, vec<float, 4>> p[2][4];"},
		{"  threadgroup atomic_uint count;", "  static atomic_uint count;"},
		{"    threadgroup R shared[BLOCKSIZE],", "    threadgroup R shared[BLOCKSIZE],"},
		{"    threadgroup MD<T> &md_total,", "    threadgroup MD<T> &md_total,"},
		{"  threadgroup float* p = s + 4;", "  threadgroup float* p = s + 4;"},
		{"  threadgroup_barrier(mem_flags::mem_threadgroup);", "  threadgroup_barrier(mem_flags::mem_threadgroup);"},
	} {
		if got := forEmulation(c.in, ""); got != c.want {
			t.Errorf("forEmulation(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Defaulted constructors overloaded on the address space (candle's MD<T>)
// collapse to the one C++ declares implicitly when the struct has no
// other constructor, and to the first, unqualified, when it has.
func TestDefaultedAddressSpaceConstructors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"struct MD {\n  float m;\n  constexpr MD<T>() = default;\n  constexpr MD<T>() threadgroup = default;\n};",
			"struct MD {\n  float m;\n\n\n};"},
		{"struct I {\n  constexpr I<T>() threadgroup = default;\n};", "struct I {\n\n};"},
		{"struct P {\n  P() threadgroup = default;\n  P() = default;\n  P(float v) : x(v) {}\n};",
			"struct P {\n  P() = default;\n\n  P(float v) : x(v) {}\n};"},
		{"struct A {\n  constexpr A<T>() = default;\n};\nA<float> r = make<float, 64>(a, s);", "struct A {\n\n};\nA<float> r = make<float, 64>(a, s);"},
		{"struct C {\n  C(const thread C&) device = default;\n  C(const thread C&) = default;\n};",
			"struct C {\n\n  C(const thread C&) = default;\n};"},
	} {
		if got := dropDefaultedCtors(c.in); got != c.want {
			t.Errorf("dropDefaultedCtors(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
