package user

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A header of kernel args, as ggml keeps them beside its .metal file.
const structArgsHeader = `#pragma once
#define NSRC 2
typedef struct {
    int32_t  cols;
    uint64_t row_bytes;
    float    eps;
    int32_t  rep[NSRC];
} scale_args;
`

// A kernel that takes its scalars as one struct, first, and is instantiated
// under host names through a typedef of its type.
const structArgsSource = `#include "args.h"
#include <metal_stdlib>
using namespace metal;
template <typename T>
kernel void scale_impl(constant scale_args & args, device const char * src, device char * dst,
                       uint row [[threadgroup_position_in_grid]], uint i [[thread_position_in_threadgroup]]) {
    device const T * x = (device const T *) (src + row * args.row_bytes);
    device T * y = (device T *) (dst + row * args.row_bytes);
    if ((int) i < args.cols) { y[i] = x[i] * args.eps * args.rep[0]; }
}
typedef decltype(scale_impl<float>) scale_t;
template [[host_name("scale_f32")]] kernel scale_t scale_impl<float>;
#if 0
template [[host_name("scale_f32")]] kernel scale_t scale_impl<half>;
#endif
`

const structArgsManifest = `name: struct_args
sources: {metal: k.metal}
dtypes: [f32]
dims:
  rows: {default: 4}
  cols: {default: 32}
buffers:
  - {name: x, dtype: f32, shape: [rows, cols]}
  - {name: y, dtype: f32, shape: [rows, cols], out: true}
dispatches:
  - entry: scale_f32
    grid: [rows]
    threads: [cols]
    args: ARGS
check: none
`

func structArgsFamily(t *testing.T, args string) (*Family, error) {
	t.Helper()
	return Load(usertest.Write(t, map[string]string{
		"kernel.yaml": strings.Replace(structArgsManifest, "ARGS", args, 1),
		"k.metal":     structArgsSource,
		"args.h":      structArgsHeader,
	}))
}

// The struct's fields take their declared types, an array value fills an
// array field, and metal.Bind packs them at C's offsets.
func TestMetalStructFieldsTyped(t *testing.T) {
	for _, args := range []string{
		`[x, y, cols, "cols * 4", 0.5, [3, 1]]`,
		`[x, y, cols, "cols * 4", 0.5, 3, 1]`, // array elements one by one
	} {
		f, err := structArgsFamily(t, args)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), emuDev)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		want := []profiler.Scalar{
			{Name: "cols", Kind: profiler.ScalarI32, I: 32},
			{Name: "row_bytes", Kind: profiler.ScalarU64, I: 128},
			{Name: "eps", Kind: profiler.ScalarF32, F: 0.5},
			{Name: "rep[0]", Kind: profiler.ScalarI32, I: 3},
			{Name: "rep[1]", Kind: profiler.ScalarI32, I: 1},
		}
		if got := p.Dispatches[0].Scalars; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: scalars %+v\nwant %+v", args, got, want)
		}
	}
}

func TestMetalStructFieldsRefused(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`[x, y, cols, "cols * 4", 0.5]`, "rep have no value"},
		{`[x, y, cols, "cols * 4", 0.5, [3, 1], 7]`, "7 is one arg too many: struct scale_args has 4 fields (cols, row_bytes, eps, rep[2])"},
		{`[x, y, [cols], "cols * 4", 0.5, [3, 1]]`, "goes to field `int32_t cols` of struct scale_args, which is not an array"},
		{`[x, y, cols, "cols * 4", 0.5, [3, 1, 1]]`, "has 3 elements for field `int32_t rep[2]`"},
	} {
		if _, err := structArgsFamily(t, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("args %s: got %v, want an error with %q", c.args, err, c.want)
		}
	}
	// a value its field cannot hold makes the spec invalid when planned
	f, err := structArgsFamily(t, `[x, y, cols, "-cols", 0.5, [3, 1]]`)
	if err == nil {
		_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), emuDev)
	}
	if err == nil || !strings.Contains(err.Error(), "row_bytes") {
		t.Errorf("a negative uint64_t field: %v", err)
	}
}
