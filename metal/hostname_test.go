package metal

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const templatedSource = `
template <typename T, int N, bool Wide = false>
[[kernel]] void scale(const device T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * T(N);
}
template [[host_name("scale_float_4")]] [[kernel]] decltype(scale<float, 4>) scale<float, 4>;
// template [[host_name("commented_out")]] [[kernel]] decltype(scale<float, 9>) scale<float, 9>;
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
#define instantiate_scale(tname, type, n) instantiate_kernel("scale_" #tname "_" #n, scale, type, n, true)
instantiate_scale(float16, half, 2)
instantiate_scale(int32, int, 3)
#define paste_name(a, b) a ## _ ## b
#if 1
typedef decltype(scale<float, 1>) scale_kernel_t;
template [[host_name("typedef_style")]] kernel scale_kernel_t scale<uint, 5>;
#else
template [[host_name("typedef_style")]] kernel scale_kernel_t scale<uint, 6>;
#endif
#if 0
template [[host_name("scale_float_4")]] [[kernel]] decltype(scale<int, 4>) scale<int, 4>;
#elif 1
#define DEAD_OR_NOT 1
#else
template [[host_name("scale_float_4")]] [[kernel]] decltype(scale<int, 4>) scale<int, 4>;
#endif
template [[host_name("old_style")]] [[kernel]] void scale<short, 1>(const device short* x [[buffer(0)]], device short* y [[buffer(1)]], uint i [[thread_position_in_grid]]);
`

func TestHostNamesFindsDirectAndMacroInstantiations(t *testing.T) {
	got, err := HostNames(templatedSource)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Instantiation{
		"scale_float_4":   {"scale", []string{"float", "4"}},
		"scale_float16_2": {"scale", []string{"half", "2", "true"}},
		"scale_int32_3":   {"scale", []string{"int", "3", "true"}},
		"old_style":       {"scale", []string{"short", "1"}},
		"typedef_style":   {"scale", []string{"uint", "5"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HostNames = %v\nwant %v", got, want)
	}
	binds, err := got["scale_float_4"].Bindings(templatedSource)
	if err != nil || !reflect.DeepEqual(binds, map[string]string{"T": "float", "N": "4", "Wide": "false"}) {
		t.Errorf("Bindings = %v, %v", binds, err)
	}
	if s := SubstituteTemplateArgs("const device T* Tx", binds); s != "const device float* Tx" {
		t.Errorf("SubstituteTemplateArgs = %q", s)
	}
}

// #if conditions on the compiler's macros are read as the emulation
// compiles the source (CompilerMacros: bfloat, Metal 3.1): a list macro
// defined with its bf16 instance under `#if defined(__HAVE_BFLOAT__)` and
// without in the #else takes the first definition (the #else's hid the
// bf16 host name, and mltop added a duplicate instance); a branch on the
// Metal version is taken or not by its comparison; a branch on any other
// macro stays live.
func TestHostNamesReadConditionsAsCompiled(t *testing.T) {
	const src = `
template <typename T> [[kernel]] void neg(device const T* x, device T* y, uint i [[thread_position_in_grid]]) { y[i] = -x[i]; }
#define inst(tname, t) template [[host_name("neg_" #tname)]] [[kernel]] decltype(neg<t>) neg<t>;
#if defined(__HAVE_BFLOAT__)
#define inst_float(x) inst(f32, float) inst(bf16, bfloat)
#else
#define inst_float(x) inst(f32, float)
#endif
inst_float(0)
#if __METAL_VERSION__ >= 220
inst(i64, long)
#endif
#if __METAL_VERSION__ >= 400
inst(future, short)
#endif
#ifndef __HAVE_BFLOAT__
inst(bf16_emulated, ushort)
#endif
#if defined(USER_FLAG)
inst(i32, int)
#endif
`
	got, err := HostNames(src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for h := range got {
		names = append(names, h)
	}
	slices.Sort(names)
	if want := []string{"neg_bf16", "neg_f32", "neg_i32", "neg_i64"}; !slices.Equal(names, want) {
		t.Errorf("host names %v, want %v", names, want)
	}
	if a := got["neg_bf16"].Args; len(a) == 0 || a[0] != "bfloat" {
		t.Errorf("neg_bf16 = %v", got["neg_bf16"])
	}
}

// CompilerMacros claim the Metal version the emulation's metal_stdlib
// defines with bfloat.
func TestCompilerMacrosMatchTheEmulation(t *testing.T) {
	b, err := os.ReadFile("testdata/mslemu/metal_stdlib")
	if err != nil {
		t.Fatal(err)
	}
	_, values := CompilerMacros()
	want := fmt.Sprintf("#if defined(__HAVE_BFLOAT__)\n#define __METAL_VERSION__ %d\n", values["__METAL_VERSION__"])
	if !strings.Contains(string(b), want) {
		t.Errorf("metal_stdlib does not define what CompilerMacros claim: %q", want)
	}
}

func TestHostNamesErrors(t *testing.T) {
	dup := templatedSource + `template [[host_name("scale_float_4")]] [[kernel]] decltype(scale<int, 4>) scale<int, 4>;`
	if _, err := HostNames(dup); err == nil || !strings.Contains(err.Error(), "scale_float_4") {
		t.Errorf("duplicate host name: %v", err)
	}
	if _, err := HostNames(`template [[host_name("x")]] [[kernel]] something;`); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("unreadable instantiation: %v", err)
	}
	bad := []Instantiation{
		{"scale", []string{"float", "4", "true", "extra"}}, // too many
		{"scale", []string{"float"}},                       // N has no default
		{"nosuch", []string{"float"}},                      // no template
	}
	for _, in := range bad {
		if _, err := in.Bindings(templatedSource); err == nil || !strings.Contains(err.Error(), in.Template) {
			t.Errorf("Bindings(%v): %v", in, err)
		}
	}
}

func TestExpandMacros(t *testing.T) {
	src := "#define A 1\n#define F(x, y) x ## y + #x + A\n#define V(...) g(__VA_ARGS__)\nF(p, q) V(a, b) \"A\" F(A, 2)"
	got := strings.Join(strings.Fields(expandMacros(src)), " ")
	want := `pq + "p" + 1 g(a, b) "A" A2 + "A" + 1`
	if got != want {
		t.Errorf("expandMacros = %q, want %q", got, want)
	}
}
