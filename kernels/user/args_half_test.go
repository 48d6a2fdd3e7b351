package user

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// haxpySource takes 16-bit floats by value as NVIDIA's haxpy blog post
// does, as the dtype's type, and inside a struct.
const haxpySource = `#include <cuda_fp16.h>
#include <cuda_bf16.h>
struct HalfParams { int n; __half a; __nv_bfloat16 b; float c; };
__global__ void haxpy(int n, half a, const half* x, half* y) {}
__global__ void baxpy(int n, __nv_bfloat16 a, const __nv_bfloat16* x, __nv_bfloat16* y) {}
__global__ void taxpy(int n, T a, const T* x, T* y) {}
__global__ void faxpy(int n, float a, const half* x, half* y) {}
__global__ void saxpy(HalfParams p, const half* x, half* y) {}
`

const haxpyManifest = `name: t_haxpy
sources: {cuda: k.cu}
dtypes: [f16, bf16, f32]
dims: {N: {default: 256}}
values: {a: 2.1, b: 3, c: 0.1}
buffers:
  - {name: x, dtype: T, shape: [N]}
  - {name: y, dtype: T, shape: [N], inout: true, init: "normal(0, 1)"}
dispatches:
  - {entry: ENTRY, grid: ["cdiv(N, 128)"], threads: [128], args: ARGS}
check: none
`

func haxpyFamily(t *testing.T, entry, args string) *Family {
	t.Helper()
	y := strings.Replace(strings.Replace(haxpyManifest, "ENTRY", entry, 1), "ARGS", args, 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": haxpySource}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A half, bf16 or dtype-typed scalar is passed as 2 bytes of its type's
// bits, rounded to nearest even (2.1 is 2.099609375 as a half).
func TestHalfScalarArgs(t *testing.T) {
	for _, c := range []struct {
		entry string
		dt    profiler.DType
		kind  profiler.ScalarKind
		f     float64
		bytes []byte
	}{
		{"haxpy", profiler.F16, profiler.ScalarF16, 2.099609375, []byte{0x33, 0x40}},
		{"baxpy", profiler.BF16, profiler.ScalarBF16, 2.09375, []byte{0x06, 0x40}},
		{"taxpy", profiler.F16, profiler.ScalarF16, 2.099609375, []byte{0x33, 0x40}},
		{"taxpy", profiler.BF16, profiler.ScalarBF16, 2.09375, []byte{0x06, 0x40}},
		{"taxpy", profiler.F32, profiler.ScalarF32, 2.1, []byte{0x66, 0x66, 0x06, 0x40}},
	} {
		f := haxpyFamily(t, c.entry, "[N, a, x, y]")
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema()), cudaDev)
		if err != nil {
			t.Errorf("%s at %s: %v", c.entry, c.dt, err)
			continue
		}
		sc := p.Dispatches[0].Scalars[1]
		if sc.Name != "a" || sc.Kind != c.kind || sc.F != c.f || !bytes.Equal(sc.Bytes(), c.bytes) {
			t.Errorf("%s at %s: scalar %+v bytes %x, want %s %v %x", c.entry, c.dt, sc, sc.Bytes(), c.kind, c.f, c.bytes)
		}
	}
}

// __half and __nv_bfloat16 struct fields are laid out at 2 bytes, aligned
// 2, and filled with their bits.
func TestHalfStructFields(t *testing.T) {
	f := haxpyFamily(t, "saxpy", "[{n: N, a: a, b: b, c: c}, x, y]")
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F16}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Dispatches[0].Structs[0]
	want := []byte{0, 1, 0, 0, 0x33, 0x40, 0x40, 0x40, 0xcd, 0xcc, 0xcc, 0x3d} // n=256, a=half(2.1), b=bf16(3), c=0.1f
	if !bytes.Equal(st.Bytes, want) {
		t.Errorf("struct bytes %x, want %x", st.Bytes, want)
	}
}

// The reference sees a value passed by itself to a 16-bit parameter as
// the kernel does, rounded; a value passed as float, or inside a larger
// expression, as written.
func TestHalfValueReferenceRounded(t *testing.T) {
	for _, c := range []struct {
		entry, args string
		dt          profiler.DType
		a           any
	}{
		{"haxpy", "[N, a, x, y]", profiler.F16, 2.099609375},
		{"taxpy", "[N, a, x, y]", profiler.BF16, 2.09375},
		{"taxpy", "[N, a, x, y]", profiler.F32, 2.1},
		{"faxpy", "[N, a, x, y]", profiler.F16, 2.1},
		{"haxpy", `[N, "a * 1", x, y]`, profiler.F16, 2.1},
		{"saxpy", "[{n: N, a: a}, x, y]", profiler.F16, 2.099609375},
	} {
		f := haxpyFamily(t, c.entry, c.args)
		s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
		e, err := f.env(s)
		if err != nil {
			t.Fatal(err)
		}
		call, err := f.pyCall(e, c.dt, 1<<20, 1)
		if err != nil {
			t.Fatal(err)
		}
		if call.dims["a"] != c.a || call.dims["b"] != 3 {
			t.Errorf("%s %s at %s: the reference sees a = %v, b = %v; want %v, 3", c.entry, c.args, c.dt, call.dims["a"], call.dims["b"], c.a)
		}
	}
}
