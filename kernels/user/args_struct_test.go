package user

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// structHeader is a local header defining the struct, as causal-conv1d's
// causal_conv1d.h does.
const structHeader = `#pragma once
struct AxpyParams {
    using index_t = uint32_t;
    const float* __restrict__ x_ptr;
    float* __restrict__ y_ptr;
    index_t n;
    float alpha;
    int64_t stride;
    int shape[2];
};
`

const structKernel = `#include "params.h"
__global__ void axpy(AxpyParams params, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < params.n) params.y_ptr[i * params.stride] += params.alpha * params.x_ptr[i * params.stride] + extra;
}
__global__ void takes_int(int n) {}
__global__ void takes_ptr(float* y) {}
`

const structManifest = `name: t_struct
sources: {cuda: k.cu}
dims:
  N: {default: 100}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], inout: true, init: "normal(0, 1)"}
  - {name: i, dtype: i32, shape: [N], init: arange}
  - {name: o, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: ENTRY, grid: ["cdiv(N, 32)"], threads: [32], args: ARGS}
check: none
`

func structFamily(t *testing.T, entry, args string) (*Family, error) {
	t.Helper()
	y := strings.Replace(strings.Replace(structManifest, "ENTRY", entry, 1), "ARGS", args, 1)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": structKernel, "params.h": structHeader}))
}

// A struct read from a local header, filled from a mapping: scalars at
// their C offsets, pointer fields named as buffers the launch fills in,
// unset fields zero and listed in the plan's notes.
func TestStructArgPlan(t *testing.T) {
	f, err := structFamily(t, "axpy", `[{y_ptr: y, x_ptr: x, n: N, alpha: "0.5", shape: [N, 1]}, 3]`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	if len(d.Structs) != 1 || !slices.Equal(d.Args, []string{"y", "x"}) || len(d.Scalars) != 1 {
		t.Fatalf("dispatch %+v", d)
	}
	if want := []profiler.ArgRef{{Struct: true}, {Scalar: true}}; !slices.Equal(d.Order, want) {
		t.Errorf("order %+v, want %+v", d.Order, want)
	}
	st := d.Structs[0]
	if st.Name != "params" || st.Type != "AxpyParams" || len(st.Bytes) != 40 {
		t.Fatalf("struct %s %s of %d bytes, want params AxpyParams of 40", st.Name, st.Type, len(st.Bytes))
	}
	wantPtrs := []profiler.StructPointer{{Field: "y_ptr", Offset: 8, Arg: 0}, {Field: "x_ptr", Offset: 0, Arg: 1}}
	if !slices.Equal(st.Pointers, wantPtrs) {
		t.Errorf("pointers %+v, want %+v", st.Pointers, wantPtrs)
	}
	le := binary.LittleEndian
	if n, a, stride, s0, s1 := le.Uint32(st.Bytes[16:]), math.Float32frombits(le.Uint32(st.Bytes[20:])), le.Uint64(st.Bytes[24:]), le.Uint32(st.Bytes[32:]), le.Uint32(st.Bytes[36:]); n != 100 || a != 0.5 || stride != 0 || s0 != 100 || s1 != 1 {
		t.Errorf("n %d alpha %v stride %d shape [%d %d]; want 100 0.5 0 [100 1]", n, a, stride, s0, s1)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "struct AxpyParams params (40 bytes): fields not in args are zero: stride")
	}) {
		t.Errorf("notes %q do not name the zero field", p.Notes)
	}
}

func TestStructArgErrors(t *testing.T) {
	for _, c := range []struct{ entry, args, want string }{
		{"axpy", `[{x_ptr: x, nn: N}, 1]`, "k.cu:2) has no field nn: its fields are x_ptr, y_ptr, n, alpha, stride, shape[2]"},
		{"axpy", `[{x_ptr: N}, 1]`, "expression N goes to field `const float* x_ptr` of struct AxpyParams, a pointer: give a buffer (x, y, i, o)"},
		{"axpy", `[{n: x}, 1]`, "buffer x goes to field `index_t n` of struct AxpyParams, a scalar: give an expression"},
		{"axpy", `[{x_ptr: o}, 1]`, ""},
		{"axpy", `[{shape: [N], stride: "i + 1"}, 1]`, "i + 1 reads i, the element index of an array field, but field `int64_t stride` of struct AxpyParams is not an array"},
		{"axpy", `[{shape: [1, 2, 3]}, 1]`, "list [1, 2, 3] has 3 elements for field `int shape[2]` of struct AxpyParams: give at most 2"},
		{"axpy", `[{n: [1, 2]}, 1]`, "list [1, 2] goes to field `index_t n` of struct AxpyParams, which is not an array"},
		{"axpy", `[{n: -1}, 1]`, "-1 = -1 goes to field `index_t n` of struct AxpyParams"},
		{"axpy", `[N, 1]`, "k.cu:2, a struct taken by value: give a mapping of its fields, as {x_ptr: …, y_ptr: …, n: …} (fields: x_ptr, y_ptr, n, alpha, stride, shape[2])"},
		{"axpy", `[x, 1]`, "buffer x goes to parameter `AxpyParams params`"},
		{"takes_int", `[{n: N}]`, "k.cu:6, but mltop finds no struct int"},
		{"takes_ptr", `[{n: N}]`, "k.cu:7, a pointer: a {field: value} mapping fills a struct taken by value"},
	} {
		_, err := structFamily(t, c.entry, c.args)
		if c.want == "" { // an output to a const pointer field
			c.want = "output buffer o goes to field `const float* x_ptr`"
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v\nwant it to say %q", c.entry, c.args, err, c.want)
		}
	}
}

// A pointer field whose type is not the buffer's is invalid at plan time,
// as a pointer parameter is.
func TestStructArgBufferType(t *testing.T) {
	f, err := structFamily(t, "axpy", `[{y_ptr: i}, 1]`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err == nil || !strings.Contains(err.Error(), "buffer i holds i32 but field `float* y_ptr` points to f32") {
		t.Errorf("%v", err)
	}
}
