package user

import (
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// stridedSumMetal is written in the style of MLX's general kernels: the
// input is addressed through `constant` shape and stride arrays, and the
// host name instantiates a template per type. Each thread sums one row of
// a [rows, cols] view; the manifests below store X transposed ([cols,
// rows]) so that only the strides make the sum right.
const stridedSumMetal = `#include <metal_stdlib>
using namespace metal;

template <typename T>
[[kernel]] void strided_sum(
    const device T* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    const constant int* shape [[buffer(2)]],
    const constant int64_t* strides [[buffer(3)]],
    const constant size_t& ndim [[buffer(4)]],
    uint gid [[thread_position_in_grid]]) {
  if (gid >= uint(shape[0])) {
    return;
  }
  float acc = 0;
  for (int j = 0; j < shape[ndim - 1]; j++) {
    acc += float(in[gid * strides[0] + j * strides[ndim - 1]]);
  }
  out[gid] = acc;
}

template [[host_name("strided_sum_float32")]] [[kernel]] decltype(strided_sum<float>) strided_sum<float>;
`

// stridedSumYAML passes the shape and strides as array values.
const stridedSumYAML = `name: t_strided_sum
sources: {metal: s.metal}
dtypes: [f32]
knobs:
  WG: {values: [32, 64], default: 32}
dims:
  rows: {default: 50}
  cols: {default: 7}
buffers:
  - {name: X, shape: [cols, rows]}
  - {name: out, dtype: f32, shape: [rows], out: true, terms: cols}
dispatches:
  - entry: strided_sum_float32
    grid: ["cdiv(rows, WG)"]
    threads: WG
    args: [X, out, [rows, cols], [1, rows], 2]
check: {python: ref.py}
`

const stridedSumRef = `def reference(inputs, dims):
    return {"out": inputs["X"].sum(axis=0)}
`

// asBuffers rewrites stridedSumYAML to pass the shape and strides as
// buffers read from .npy files (for the default dims, 50 × 7).
func asBuffers(y string) string {
	y = strings.Replace(y, "  - {name: out,", `  - {name: shape, dtype: i32, shape: [2], init: "npy:shape.npy"}
  - {name: strides, dtype: i64, shape: [2], init: "npy:strides.npy"}
  - {name: out,`, 1)
	return strings.Replace(y, "args: [X, out, [rows, cols], [1, rows], 2]", "args: [X, out, shape, strides, 2]", 1)
}

// A `constant T*` parameter of a plain Metal manifest takes an array
// value or a buffer; the kernel runs on the MSL emulation against the
// reference, and a kernel that drops a term is a mismatch either way.
func TestConstantArraysOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	drop := func(s string) string {
		return strings.Replace(s, "j < shape[ndim - 1];", "j < shape[ndim - 1] - 1;", 1)
	}
	keep := func(s string) string { return s }
	for _, c := range []struct {
		name      string
		yaml, src func(string) string
		want      profiler.Status
		err       string
	}{
		{"array values", keep, keep, profiler.StatusOK, ""},
		{"buffers", asBuffers, keep, profiler.StatusOK, ""},
		{"an element with a comma, quoted", func(y string) string { return strings.Replace(y, "[rows, cols]", `[rows, "max(cols, 1)"]`, 1) }, keep, profiler.StatusOK, ""},
		{"array values, a term dropped", keep, drop, profiler.StatusMismatch, ""},
		{"buffers, a term dropped", asBuffers, drop, profiler.StatusMismatch, ""},
		{"an element beyond int", func(y string) string { return strings.Replace(y, "[rows, cols]", "[rows, 3000000000]", 1) }, keep, profiler.StatusInvalid, "shape[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(c.yaml(stridedSumYAML), "t_strided_sum", "t_strided_sum_"+strings.NewReplacer(" ", "_", ",", "").Replace(c.name), 1)
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": y, "s.metal": c.src(stridedSumMetal), "ref.py": stridedSumRef,
				"shape.npy": npyFile(t, []int{2}, []float64{50, 7}), "strides.npy": npyFile(t, []int{2}, []float64{1, 50})}, map[string]int{"WG": 32}, nil)
			if res.Status != c.want || !strings.Contains(res.Error, c.err) {
				t.Fatalf("status %s, want %s (error %q, want it to say %q) %+v", res.Status, c.want, res.Error, c.err, res.Verdict)
			}
		})
	}
}

// What a `constant T*` parameter does not take, and where an array value
// does not go, is refused at load naming the parameter.
func TestConstantArrayArgsRefused(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		want           []string
	}{
		{"array value for a device pointer", "args: [X, out, [rows, cols]", "args: [[rows], out, [rows, cols]", []string{"args[0]", "array value [rows]", "`const device float* in`", "only a Metal `constant T*`"}},
		{"array value for a scalar", "[1, rows], 2]", "[1, rows], [2]]", []string{"args[4]", "array value [2]", "constant size_t& ndim"}},
		{"empty array value", "[1, rows], 2]", "[], 2]", []string{"args[3]", "empty array value"}},
		{"output buffer for a constant array", "args: [X, out, [rows, cols]", "args: [X, out, out", []string{"output buffer out", "`constant int* shape`", "read-only constant address space"}},
		{"unknown name in an element", "[1, rows]", "[1, rowz]", []string{"args[3][1]", "unknown name 'rowz'"}},
		{"a mapping in args", "[1, rows], 2]", "{a: 1}, 2]", []string{"args[3]", "struct value {a: 1}", "a {field: value} mapping is for CUDA kernels that take a struct by value"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(stridedSumYAML, c.from) {
				t.Fatalf("test setup: %q is not in the manifest", c.from)
			}
			y := strings.Replace(stridedSumYAML, c.from, c.to, 1)
			_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": stridedSumMetal, "ref.py": stridedSumRef}))
			errorSays(t, err, c.want)
		})
	}
}

// An array value is a Metal constant array's: a CUDA pointer parameter
// refuses one.
func TestArrayValueRefusedOnCUDA(t *testing.T) {
	y := strings.Replace(goodYAML, "args: [X, Y, rows, cols]", "args: [[rows], Y, rows, cols]", 1)
	if y == goodYAML {
		t.Fatal("test setup: goodYAML's args moved")
	}
	_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
	if err == nil || !strings.Contains(err.Error(), "only a Metal `constant T*`") {
		t.Fatalf("err %v, want the array value refused for a CUDA pointer", err)
	}
}

// arrayText splits an array value at the commas outside parentheses, and
// takes nothing else for one.
func TestArrayText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"[rows, cols]", []string{"rows", "cols"}, true},
		{"[cdiv(cols, 4), 1]", []string{"cdiv(cols, 4)", "1"}, true},
		{"[max(a, min(b, c))]", []string{"max(a, min(b, c))"}, true},
		{"[]", nil, true},
		{"rows", nil, false},
		{"cdiv(rows, 2)", nil, false},
	} {
		got, ok := arrayText(c.in)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("arrayText(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
