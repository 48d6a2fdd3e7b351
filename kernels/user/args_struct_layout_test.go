package user

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// layoutSource holds the structs of the layout table: padding, int64
// after int, pointers, arrays, a nested struct, a base class, member
// usings and macros as array extents.
const layoutSource = `#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#define NDIM 3
typedef uint32_t u32;
struct Padded { char c; int i; short s; };
struct Wide { int n; int64_t big; char tail; };
struct Ptrs { bool flag; void* __restrict__ x_ptr; const float* w; int n; };
struct Arrays { char tag; int shape[NDIM]; double d; short m[2][3]; };
struct Inner { char a; double b; };
struct Outer { int n; Inner in; char c; };
struct ConvBase {
    using index_t = uint32_t;
    int batch, dim, seqlen, width;
    bool silu_activation;
    index_t x_batch_stride;
    void *__restrict__ x_ptr;
    void *__restrict__ out_ptr;
    float scale;
};
struct ConvBwd : public ConvBase {
    index_t dx_batch_stride;
    void *__restrict__ dx_ptr;
    u32 flags;
};
struct TailBase { double d; char c; };
struct TailDerived : TailBase { char e; };
struct __half { unsigned short bits; }; // cuda_fp16.h's is 2 bytes, aligned 2
struct Halves { char c; __half h; char d; };
struct I64s { int n; int64_t v[2]; bool last; };
struct Empty {};
struct HasEmpty { Empty e; int n; };
struct OnEmpty : Empty { char a; int n; };
struct WithStatic { double d; char c; static int s; };
struct OnStatic : WithStatic { char e; };
`

// layoutWant is each struct's size, alignment and fields' offsets, by hand.
var layoutWant = []struct {
	name        string
	size, align int
	offsets     map[string]int
}{
	{"Padded", 12, 4, map[string]int{"c": 0, "i": 4, "s": 8}},
	{"Wide", 24, 8, map[string]int{"n": 0, "big": 8, "tail": 16}},
	{"Ptrs", 32, 8, map[string]int{"flag": 0, "x_ptr": 8, "w": 16, "n": 24}},
	{"Arrays", 40, 8, map[string]int{"tag": 0, "shape": 4, "d": 16, "m": 24}},
	{"Outer", 32, 8, map[string]int{"n": 0, "in.a": 8, "in.b": 16, "c": 24}},
	{"ConvBase", 48, 8, map[string]int{"batch": 0, "dim": 4, "seqlen": 8, "width": 12, "silu_activation": 16, "x_batch_stride": 20, "x_ptr": 24, "out_ptr": 32, "scale": 40}},
	{"ConvBwd", 72, 8, map[string]int{"batch": 0, "scale": 40, "dx_batch_stride": 48, "dx_ptr": 56, "flags": 64}},
	{"TailDerived", 24, 8, map[string]int{"d": 0, "c": 8, "e": 16}},
	{"Halves", 6, 2, map[string]int{"c": 0, "h": 2, "d": 4}},
	{"I64s", 32, 8, map[string]int{"n": 0, "v": 8, "last": 24}},
	{"HasEmpty", 8, 4, map[string]int{"n": 4}},        // an empty struct field takes a byte
	{"OnEmpty", 8, 4, map[string]int{"a": 0, "n": 4}}, // an empty base takes none
	{"OnStatic", 24, 8, map[string]int{"d": 0, "c": 8, "e": 16}},
}

func layoutOf(t *testing.T, name string) structLayout {
	t.Helper()
	st := newStructTypes(layoutSource, typeScope{dtype: "T"})
	l, found, err := st.layout(name, 0)
	if err != nil || !found {
		t.Fatalf("%s: found %v, err %v", name, found, err)
	}
	return l
}

func TestStructLayoutByHand(t *testing.T) {
	for _, c := range layoutWant {
		l := layoutOf(t, c.name)
		if l.size != c.size || l.align != c.align {
			t.Errorf("%s: size %d align %d, want %d and %d", c.name, l.size, l.align, c.size, c.align)
		}
		if len(l.leaves) != len(c.offsets) && c.name != "ConvBwd" {
			t.Errorf("%s: %d fields (%s), want %d", c.name, len(l.leaves), l.fieldList(), len(c.offsets))
		}
		for path, off := range c.offsets {
			if lf, ok := l.leaf(path); !ok || lf.offset != off {
				t.Errorf("%s.%s: offset %d (found %v), want %d", c.name, path, lf.offset, ok, off)
			}
		}
	}
	if l := layoutOf(t, "Arrays"); l.leaves[1].count != 3 || l.leaves[3].count != 6 || l.leaves[3].size != 2 {
		t.Errorf("Arrays: %+v", l.leaves)
	}
	if lf, _ := layoutOf(t, "Ptrs").leaf("w"); !lf.pointer || !lf.readOnly || lf.elem != "f32" {
		t.Errorf("Ptrs.w: %+v", lf)
	}
}

// The same offsets, sizes and alignments as g++ gives them (offsetof on
// every field), where g++ is installed.
func TestStructLayoutAgainstGxx(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	var prog strings.Builder
	prog.WriteString(layoutSource + "#include <stdio.h>\nint main() {\n")
	for _, c := range layoutWant {
		fmt.Fprintf(&prog, "  printf(\"%s %%zu %%zu\\n\", sizeof(%s), alignof(%s));\n", c.name, c.name, c.name)
		for _, lf := range layoutOf(t, c.name).leaves {
			fmt.Fprintf(&prog, "  printf(\"%s.%s %%zu\\n\", offsetof(%s, %s));\n", c.name, lf.path, c.name, lf.path)
		}
	}
	prog.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "layout.cpp"), filepath.Join(dir, "layout")
	if err := os.WriteFile(src, []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-std=c++17", "-Wno-invalid-offsetof", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, c := range layoutWant {
		l := layoutOf(t, c.name)
		fmt.Fprintf(&want, "%s %d %d\n", c.name, l.size, l.align)
		for _, lf := range l.leaves {
			fmt.Fprintf(&want, "%s.%s %d\n", c.name, lf.path, lf.offset)
		}
	}
	if string(out) != want.String() {
		t.Errorf("g++ lays the structs out as\n%s\nmltop as\n%s", out, want.String())
	}
}

func TestStructLayoutRefuses(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"struct P { T alpha; };", "dtype's type"},
		{"struct P { float5 v; };", "type float5, which is neither a scalar type (int, int64_t, float, …, typedefs of them), a pointer, a CUDA vector type"},
		{"struct P { uint3 v[2]; };", "array of structs"},
		{"struct P { int a[N]; };", `extent "N"`},
		{"struct I { int a; }; struct P { I xs[2]; };", "array of structs"},
		{"struct P : Missing { int a; };", "derives from Missing"},
		{"struct B { double d; char c = 0; }; struct P : B { char e; };", "tail padding"},
		// g++ puts e (or f) in the base's tail padding: none of these bases is a C++03 POD
		{"struct A { double d; char c; }; struct B : A { char e; }; struct P : B { char f; };", "tail padding"},
		{"class B { double d; char c; public: int x() { return 0; } }; struct P : B { char e; };", "tail padding"},
		{"struct B { private: double d; public: char c; }; struct P : B { char e; };", "tail padding"},
		{"struct I { int a = 0; }; struct B { double d; I i; char c; }; struct P : B { char e; };", "tail padding"},
	} {
		_, found, err := newStructTypes(c.src, typeScope{dtype: "T"}).layout("P", 0)
		if !found || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: found %v, err %v; want it to say %q", c.src, found, err, c.want)
		}
	}
}
