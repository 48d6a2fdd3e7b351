package csrc

import (
	"strings"
	"testing"
)

const convParams = `
#pragma once
struct ConvParamsBase {
    using index_t = uint32_t;
    int batch, dim, seqlen, width;
    bool silu_activation;
    index_t x_batch_stride;
    // pointers
    void *__restrict__ x_ptr;
    const float* w_ptr, *b_ptr;
    int32_t *__restrict__ conv_state_indices_ptr;
    float scale = 1.0f;
    int shape[4];
    int m[2][3];
    __device__ int twice() const { return 2 * dim; }
    static constexpr int kMax = 8;
    struct Tag { int t; };
public:
    ConvParamsBase() {}
};

struct ConvParamsBwd: public ConvParamsBase {
    index_t dx_batch_stride;
    void *__restrict__ dx_ptr;
};

typedef struct { float eps; long n; } NormArgs;
struct Fwd;
`

func TestFindStruct(t *testing.T) {
	d, found, err := FindStruct(convParams, "ConvParamsBase")
	if err != nil || !found {
		t.Fatalf("found %v, err %v", found, err)
	}
	var got []string
	for _, f := range d.Fields {
		got = append(got, f.Declared())
	}
	want := "int batch|int dim|int seqlen|int width|bool silu_activation|index_t x_batch_stride|void* x_ptr|const float* w_ptr|const float* b_ptr|int32_t* conv_state_indices_ptr|float scale|int shape[4]|int m[2][3]"
	if strings.Join(got, "|") != want {
		t.Errorf("fields\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if !d.Initialized || d.Base != "" || d.Line != 3 {
		t.Errorf("initialized %v base %q line %d", d.Initialized, d.Base, d.Line)
	}
	bwd, found, err := FindStruct(convParams, "ns::ConvParamsBwd")
	if err != nil || !found || bwd.Base != "ConvParamsBase" || len(bwd.Fields) != 2 || bwd.Initialized {
		t.Errorf("ConvParamsBwd: %+v found %v err %v", bwd, found, err)
	}
	na, found, err := FindStruct(convParams, "NormArgs")
	if err != nil || !found || len(na.Fields) != 2 || na.Fields[1].Type != "long" {
		t.Errorf("NormArgs: %+v found %v err %v", na, found, err)
	}
	if _, found, _ := FindStruct(convParams, "Fwd"); found {
		t.Error("a forward declaration is not a definition")
	}
}

// A struct mltop cannot lay out is refused naming the first member at
// fault, and Members still names every data member, the refused ones
// too, for the message that lists them.
func TestFindStructRefuses(t *testing.T) {
	for _, c := range []struct{ src, want, members string }{
		{"struct P { int a : 3, b : 5; float x; };", "bit-field", "a b x"},
		{"struct P { float& r; int n; };", "reference", "r n"},
		{"struct P { void (*fn)(int); float* y; };", "function pointer", "fn y"},
		{"struct P { alignas(16) float a[4]; int n = 2; };", "alignment", "a n"},
		{"struct P { float** pp; };", "pointer to a pointer", "pp"},
		{"struct P : A, B { int a; };", "several base classes", ""},
		{"struct P : virtual A { int a; };", "virtual base", ""},
		{"struct P { struct { int a; } inner; long m; };", "define the inner type on its own", "inner m"},
		{"struct P { union { int a; float b; }; int c; };", "anonymous union", "c"},
		{"struct P { union U { int a; float b; } u, v; };", "define the inner type", "u v"},
		{"struct P {\n  const float* x;\n  int shape[2];\n  __device__ int size() const { return shape[0]; }\n  struct { int a; } in;\n  static int count;\n  float eps = 0;\n};",
			"line 5 defines a struct", "x shape in eps"},
	} {
		d, found, err := FindStruct(c.src, "P")
		if !found || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: found %v, err %v; want it to say %q", c.src, found, err, c.want)
		}
		if got := strings.Join(d.Members, " "); err != nil && !strings.Contains(c.want, "base") && got != c.members {
			t.Errorf("%s: members %q, want %q", c.src, got, c.members)
		}
	}
	d, _, err := FindStruct(convParams, "ConvParamsBase")
	if got := strings.Join(d.Members, " "); err != nil || got != "batch dim seqlen width silu_activation x_batch_stride x_ptr w_ptr b_ptr conv_state_indices_ptr scale shape m" {
		t.Errorf("the members of a struct FindStruct reads: %q, %v", got, err)
	}
}

// A nested extent ends in `]]`, which the lexer reads as one token (an
// attribute's): the member's extents are still each bracket's contents.
func TestFindStructNestedExtents(t *testing.T) {
	const src = `constexpr int lens[3] = {8, 6, 4};
template <int n> struct Lists {
  void* addresses[n][lens[n - 1]];
  int sizes[lens[n - 1]];
  int flat[4];
};
`
	d, found, err := FindStruct(src, "Lists")
	if err != nil || !found {
		t.Fatal(found, err)
	}
	want := map[string]string{"addresses": "n|lens [ n - 1 ]", "sizes": "lens [ n - 1 ]", "flat": "4"}
	for _, f := range d.Fields {
		if got := strings.Join(f.Extents, "|"); got != want[f.Name] {
			t.Errorf("%s: extents %q, want %q", f.Name, got, want[f.Name])
		}
	}
	if len(d.Fields) != 3 {
		t.Errorf("fields %+v", d.Fields)
	}
}
