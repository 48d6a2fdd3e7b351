package metal

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const mlxStyle = `#include <metal_stdlib>
using namespace metal;
template <typename T>
[[kernel]] void scale(const device T* x [[buffer(0)]], const constant int* x_shape [[buffer(1)]],
                      constant float& alpha [[buffer(2)]], constant half& beta [[buffer(3)]],
                      device T* y [[buffer(4)]], uint i [[thread_position_in_grid]]) {}
template [[host_name("scale_f32")]] [[kernel]] decltype(scale<float>) scale<float>;
struct Params { int n; float a; };
[[kernel]] void packed(device float* y [[buffer(0)]], constant Params& p [[buffer(1)]]) {}
`

func TestEntrySignatureFindsHostNames(t *testing.T) {
	sig, _, err := EntrySignature(mlxStyle, "scale_f32")
	if err != nil {
		t.Fatal(err)
	}
	if sig.Entry != "scale_f32" || sig.Params[0].Type != "device float*" || sig.Params[4].Type != "device float*" || sig.Params[0].Pointee != "float" {
		t.Errorf("host-name signature %+v", sig)
	}
	if _, found, err := EntrySignature(mlxStyle, "nope"); err == nil || !strings.Contains(strings.Join(found, " "), "scale_f32") {
		t.Errorf("a missing entry: err %v, found %v (want the host names listed)", err, found)
	}
}

func TestBind(t *testing.T) {
	sig, _, err := EntrySignature(mlxStyle, "scale_f32")
	if err != nil {
		t.Fatal(err)
	}
	slots, err := Slots(sig)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []SlotKind{SlotBuffer, SlotArray, SlotScalar, SlotScalar, SlotBuffer}
	for i, s := range slots {
		if s.Kind != kinds[i] {
			t.Errorf("slot %d %+v: kind %d, want %d", i, s, s.Kind, kinds[i])
		}
	}
	sc := []profiler.Scalar{profiler.I32Param("x_shape[0]", 3), profiler.I32Param("x_shape[1]", 5), profiler.I32Param("alpha", 2), profiler.F32Param("beta", 0.5)}
	b, err := Bind(slots, 2, sc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Buffers, []int{0, 4}) {
		t.Errorf("buffers at %v, want [0 4]", b.Buffers)
	}
	want := []Bound{{1, []byte{3, 0, 0, 0, 5, 0, 0, 0}}, {2, []byte{0, 0, 0, 0x40}}, {3, []byte{0, 0x38}}}
	if len(b.Bytes) != len(want) {
		t.Fatalf("bytes %+v", b.Bytes)
	}
	for i, w := range want {
		if b.Bytes[i].Index != w.Index || !bytes.Equal(b.Bytes[i].Bytes, w.Bytes) {
			t.Errorf("setBytes %d: %+v, want %+v (the int 2 as float 2.0, 0.5 as half)", i, b.Bytes[i], w)
		}
	}
	for _, bad := range []struct {
		nbufs int
		sc    []profiler.Scalar
		want  string
	}{
		{3, sc, "takes 2 device buffers"},
		{2, sc[:3], "beta (constant half&) has no scalar"},
		{2, append(sc[:4:4], profiler.I32Param("extra", 1)), "left over"},
		{2, sc[2:], "parameter x_shape (constant int*) counts as one: give it a buffer, or scalars named x_shape[0]"},
		{2, []profiler.Scalar{profiler.I32Param("x_shape[0]", 3), profiler.F32Param("alpha", 1e39), profiler.F32Param("beta", 1)}, "alpha"},
	} {
		if _, err := Bind(slots, bad.nbufs, bad.sc); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Bind(%d buffers, %v): %v, want an error with %q", bad.nbufs, bad.sc, err, bad.want)
		}
	}

	// A constant array no scalar is named for takes a buffer, at its own
	// index among the device buffers (setBuffer, as Metal binds it).
	b, err = Bind(slots, 3, sc[2:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Buffers, []int{0, 1, 4}) || len(b.Bytes) != 2 || b.Bytes[0].Index != 2 || b.Bytes[1].Index != 3 {
		t.Errorf("x_shape given a buffer: %+v, want buffers at [0 1 4] and bytes at 2, 3", b)
	}

	// One struct: every scalar packed at its index; no slots: the old layout.
	sig, _, _ = EntrySignature(mlxStyle, "packed")
	slots, _ = Slots(sig)
	b, err = Bind(slots, 1, []profiler.Scalar{profiler.I32Param("n", 7), profiler.F32Param("a", 1)})
	if err != nil || len(b.Bytes) != 1 || b.Bytes[0].Index != 1 || len(b.Bytes[0].Bytes) != 8 {
		t.Errorf("struct binding %+v %v", b, err)
	}
	b, err = Bind(nil, 2, []profiler.Scalar{profiler.I32Param("n", 7)})
	if err != nil || !reflect.DeepEqual(b.Buffers, []int{0, 1}) || b.Bytes[0].Index != 2 {
		t.Errorf("built-in binding %+v %v", b, err)
	}
}

// A kernel a #define writes is found by its name, with the macro's
// arguments in its parameter types; a name neither written out nor
// written by a macro lists every kernel, the macro's included.
func TestKernelOverloadsReadsKernelsMacrosWrite(t *testing.T) {
	src := `#define FILL_OP(NAME, T) \
kernel void fill_##NAME(device T* out, constant T& value, uint i [[thread_position_in_grid]]) { out[i] = value; }
FILL_OP(f32, float)
FILL_OP(u8, uchar)
kernel void plain(device float* out, uint i [[thread_position_in_grid]]) { out[i] = 0; }
`
	for _, c := range []struct {
		name, wantValue string
	}{{"fill_f32", "constant float& value"}, {"fill_u8", "constant uchar& value"}, {"plain", ""}} {
		sigs, _ := KernelOverloads(src, c.name)
		if len(sigs) != 1 {
			t.Errorf("%s: %d kernels, want 1", c.name, len(sigs))
			continue
		}
		if c.wantValue != "" && (len(sigs[0].Params) != 3 || sigs[0].Params[1].Type+" "+sigs[0].Params[1].Name != c.wantValue) {
			t.Errorf("%s: params %+v, want the second %q", c.name, sigs[0].Params, c.wantValue)
		}
		if sig, _, err := EntrySignature(src, c.name); err != nil || sig.Entry != c.name {
			t.Errorf("EntrySignature(%s) = %+v, %v", c.name, sig, err)
		}
	}
	sigs, found := KernelOverloads(src, "fill_f16")
	if len(sigs) != 0 || !strings.Contains(strings.Join(found, " "), "fill_f32") || !strings.Contains(strings.Join(found, " "), "plain") {
		t.Errorf("fill_f16: %d kernels, found %v; want none, naming fill_f32 and plain", len(sigs), found)
	}
}

// The macro may be written `# define` and spread over continued lines (as
// candle's indexing.metal writes INDEX_OP); the kernel it writes is found
// and reported at the line that invokes the macro.
func TestKernelOverloadsSpacedMultiLineDefine(t *testing.T) {
	src := "#include <metal_stdlib>\n" +
		"# define COPY_OP(NAME, T) \\\n" +
		"kernel void NAME( \\\n" +
		"    constant uint& n, \\\n" +
		"    device const T* x, \\\n" +
		"    device T* y, \\\n" +
		"    uint i [[thread_position_in_grid]]) { \\\n" +
		"  if (i < n) y[i] = x[i]; \\\n" +
		"}\n" +
		"\n" +
		"COPY_OP(copy_f32, float)\n" +
		"COPY_OP(copy_f16, half)\n"
	for _, c := range []struct {
		name, wantX string
		line        int
	}{{"copy_f32", "device const float* x", 11}, {"copy_f16", "device const half* x", 12}} {
		sigs, found := KernelOverloads(src, c.name)
		if len(sigs) != 1 {
			t.Errorf("%s: %d kernels (found %v), want 1", c.name, len(sigs), found)
			continue
		}
		if p := sigs[0].Params; len(p) != 4 || p[1].Declared+" "+p[1].Name != c.wantX {
			t.Errorf("%s: params %+v, want the second %q", c.name, p, c.wantX)
		}
		if sigs[0].Line != c.line {
			t.Errorf("%s: at line %d, want %d (the macro's invocation)", c.name, sigs[0].Line, c.line)
		}
	}
}

// A `constant half&` or `constant bfloat&` slot gets its value rounded to
// nearest even once, from the scalar's float64, and a value that rounds
// beyond the type's range is refused naming the parameter.
func TestBindHalfSlots(t *testing.T) {
	sig, _, err := EntrySignature(`#include <metal_stdlib>
using namespace metal;
[[kernel]] void k(device float* y [[buffer(0)]], constant half& a [[buffer(1)]], constant bfloat& b [[buffer(2)]]) {}
`, "k")
	if err != nil {
		t.Fatal(err)
	}
	slots, err := Slots(sig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b         profiler.Scalar
		wantA, wantB []byte
	}{
		{profiler.F32Param("a", 0.1), profiler.F32Param("b", 2), []byte{0x66, 0x2e}, []byte{0x00, 0x40}},
		{profiler.F32Param("a", 65519), profiler.I32Param("b", 257), []byte{0xff, 0x7b}, []byte{0x80, 0x43}},
		{profiler.F32Param("a", 1+0x1p-11+0x1p-40), profiler.Scalar{Name: "b", Kind: profiler.ScalarBF16, F: -2}, []byte{0x01, 0x3c}, []byte{0x00, 0xc0}},
		{profiler.Scalar{Name: "a", Kind: profiler.ScalarF16, F: 2}, profiler.F32Param("b", 1.0/3), []byte{0x00, 0x40}, []byte{0xab, 0x3e}},
	} {
		bd, err := Bind(slots, 1, []profiler.Scalar{c.a, c.b})
		if err != nil {
			t.Errorf("%v, %v: %v", c.a, c.b, err)
			continue
		}
		if len(bd.Bytes) != 2 || !bytes.Equal(bd.Bytes[0].Bytes, c.wantA) || !bytes.Equal(bd.Bytes[1].Bytes, c.wantB) {
			t.Errorf("%v, %v: setBytes %+v, want %x and %x", c.a, c.b, bd.Bytes, c.wantA, c.wantB)
		}
	}
	for _, c := range []struct {
		a, b profiler.Scalar
		want string
	}{
		{profiler.F32Param("a", 65520), profiler.F32Param("b", 1), "parameter a (half): scalar a: 65520 does not fit in f16"},
		{profiler.F32Param("a", 1), profiler.F32Param("b", 1e39), "parameter b (bfloat): scalar b: 1e+39 does not fit in bf16"},
	} {
		if _, err := Bind(slots, 1, []profiler.Scalar{c.a, c.b}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, %v: %v, want an error with %q", c.a, c.b, err, c.want)
		}
	}
}
