package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// pinnedSource is Apex's pattern: the accumulator type is a template
// parameter the launch names as float, whatever the data's type.
const pinnedSource = `
template <typename in_t, typename out_t, typename acc_t, int L>
__global__ void softmax(out_t* y, const in_t* x, const acc_t scale, int n) {}
`

func pinnedFamily(t *testing.T, entry, ybuf string) (*Family, error) {
	t.Helper()
	y := `name: t_pinned
sources: {cuda: k.cu}
dtypes: [f16, f32]
dims:
  N: {default: 64}
values:
  scale: 0.125
buffers:
  - {name: X, dtype: T, shape: [N]}
  - {name: Y, dtype: YT, shape: [N], out: true}
dispatches:
  - {entry: "ENTRY", grid: [1], threads: [32], args: [Y, X, scale, N]}
check: none
`
	y = strings.NewReplacer("ENTRY", entry, "YT", ybuf).Replace(y)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": pinnedSource}))
}

// TestEntryPinsTemplateScalarType: `acc_t scale` with acc_t given as
// float in the entry is passed as a float at every dtype (as the dtype, an
// f16 run passed 2 bytes of half where the kernel read a 4-byte float,
// and Apex's softmax ran with scale ≈ 0); acc_t given as T stays the dtype.
func TestEntryPinsTemplateScalarType(t *testing.T) {
	for _, c := range []struct {
		entry string
		dt    profiler.DType
		kind  profiler.ScalarKind
	}{
		{"softmax<T, T, float, 4>", profiler.F16, profiler.ScalarF32},
		{"softmax<T, T, float, 4>", profiler.F32, profiler.ScalarF32},
		{"softmax<T, T, double, 4>", profiler.F16, profiler.ScalarF64},
		{"softmax<T, T, T, 4>", profiler.F16, profiler.ScalarF16},
	} {
		f, err := pinnedFamily(t, c.entry, "T")
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema()), cudaDev)
		if err != nil {
			t.Fatalf("%s %s: %v", c.entry, c.dt, err)
		}
		if sc := p.Dispatches[0].Scalars[0]; sc.Kind != c.kind || sc.Name != "scale" {
			t.Errorf("%s at %s: scale %+v, want kind %s", c.entry, c.dt, sc, c.kind)
		}
	}
}

// TestEntryPinnedScalarRefusesFraction: acc_t given as an integer type
// takes the value as that type, so 0.125 is refused at load.
func TestEntryPinnedScalarRefusesFraction(t *testing.T) {
	_, err := pinnedFamily(t, "softmax<T, T, unsigned int, 4>", "T")
	if err == nil || !strings.Contains(err.Error(), "u32 holds only whole numbers") {
		t.Errorf("scale 0.125 for acc_t = unsigned int: %v", err)
	}
}

// TestEntryPinsTemplatePointee: out_t given as float makes `out_t* y` a
// float pointer: an f16 buffer for it is refused, an f32 one binds.
func TestEntryPinsTemplatePointee(t *testing.T) {
	f, err := pinnedFamily(t, "softmax<T, float, float, 4>", "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), cudaDev); err == nil || !strings.Contains(err.Error(), "points to f32") {
		t.Errorf("an f16 buffer for out_t = float: %v", err)
	}
	f, err = pinnedFamily(t, "softmax<T, float, float, 4>", "f32")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), cudaDev); err != nil {
		t.Errorf("an f32 buffer for out_t = float: %v", err)
	}
}

func TestEntryTopArgs(t *testing.T) {
	for _, c := range []struct {
		args   []entryPart
		params []string
		want   map[string]string
	}{
		{[]entryPart{{name: "T"}, {lit: ", float, "}, {name: "VEC"}}, []string{"a", "b", "c"}, map[string]string{"b": "float"}},
		{[]entryPart{{lit: "cub::Pair<int, float>, long long"}}, []string{"a", "b"}, map[string]string{"b": "long long"}},
		{[]entryPart{{lit: "(4 > 2), float"}}, []string{"a", "b"}, map[string]string{"b": "float"}},
		{[]entryPart{{lit: "float, double"}}, []string{"a"}, map[string]string{"a": "float"}},
		{[]entryPart{{lit: "float"}}, []string{"Ts..."}, nil},
	} {
		e := &entryExpr{args: c.args, hasArgs: true}
		got := e.pinnedTypes(c.params)
		if len(got) != len(c.want) {
			t.Errorf("%+v: %v, want %v", c.args, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%+v: %v, want %v", c.args, got, c.want)
			}
		}
	}
}

// TestEntryPinsThroughTypedef: OLCF's my_remove_if<mytype> with
// `typedef int mytype;` takes `const T remove_val` as an int (as the
// dtype, f32, -1 reached the kernel as the bits of -1.0f and nothing was
// removed, found on an H200); a typedef of a struct pins nothing.
func TestEntryPinsThroughTypedef(t *testing.T) {
	src := `
typedef int mytype;
struct Traits { int a; };
template <typename T> __global__ void rm(const T* in, const T v, T* out, int n) {}
`
	y := `name: t_pin_typedef
sources: {cuda: k.cu}
dtypes: [f32]
dims: {N: {default: 64}}
values: {v: -1}
buffers:
  - {name: X, dtype: BUF, shape: [N], init: "INIT"}
  - {name: Y, dtype: BUF, shape: [N], out: true}
dispatches:
  - {entry: "ENTRY", grid: [1], threads: [32], args: [X, v, Y, N]}
check: none
`
	for _, c := range []struct {
		entry, buf string
		kind       profiler.ScalarKind
	}{
		{"rm<mytype>", "i32", profiler.ScalarI32},
		{"rm<T>", "T", profiler.ScalarF32},
	} {
		init := "normal(0, 1)"
		if c.buf == "i32" {
			init = "randint(-1, 3)"
		}
		m := strings.NewReplacer("ENTRY", c.entry, "BUF", c.buf, "INIT", init).Replace(y)
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src}))
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		if sc := p.Dispatches[0].Scalars[0]; sc.Kind != c.kind || sc.I != -1 && sc.F != -1 {
			t.Errorf("%s: v %+v, want kind %s", c.entry, sc, c.kind)
		}
	}
	// an f32 buffer for T = mytype (int) is refused
	m := strings.NewReplacer("ENTRY", "rm<mytype>", "BUF", "f32", "INIT", "normal(0, 1)").Replace(y)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src}))
	if err == nil {
		_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	}
	if err == nil || !strings.Contains(err.Error(), "points to i32") {
		t.Errorf("an f32 buffer for T = mytype: %v", err)
	}
	// a struct pins nothing: T stays the dtype
	ts := typeScope{typedefs: map[string]string{"mytype": "int"}}
	if got := ts.pinnedScalars(map[string]string{"T": "Traits", "U": "mytype"}); len(got) != 1 || got["U"] != "int" {
		t.Errorf("pinnedScalars: %v", got)
	}
}

// TestTorchPointeeTypes: a pointer to PyTorch's fp8 type, also through
// `using FP8_TYPE = c10::Float8_e4m3fn;`, wants an fp8e4m3 buffer; an f32
// buffer for it is refused at plan (check said ok before, and the kernel
// would have written bytes into a float buffer).
func TestTorchPointeeTypes(t *testing.T) {
	src := `#include <c10/util/Float8_e4m3fn.h>
using FP8_TYPE = c10::Float8_e4m3fn;
__global__ void q(FP8_TYPE* out, const float* in, int n) {}
__global__ void h(at::Half* out, const float* in, int n) {}
`
	y := `name: t_torch_pointee
sources: {cuda: k.cu}
dtypes: [f32]
dims: {N: {default: 64}}
buffers:
  - {name: out, dtype: OUT, shape: [N], out: true}
  - {name: in, dtype: f32, shape: [N]}
dispatches:
  - {entry: ENTRY, grid: [1], threads: [32], args: [out, in, N]}
check: none
`
	for _, c := range []struct {
		entry, out, err string
	}{
		{"q", "fp8e4m3", ""},
		{"q", "f32", "points to fp8e4m3"},
		{"h", "f16", ""},
		{"h", "f32", "points to f16"},
	} {
		m := strings.NewReplacer("ENTRY", c.entry, "OUT", c.out).Replace(y)
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src}))
		if err == nil {
			_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
		}
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s with a %s buffer: %v, want %q", c.entry, c.out, err, c.err)
		}
	}
}
