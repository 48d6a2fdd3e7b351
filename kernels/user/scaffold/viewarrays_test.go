package scaffold

import (
	gocontext "context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// stridedScaleSource reads its input through a shape and strides given
// as `constant size_t*` arrays with their rank and the element count, as
// candle's strided unary kernels do.
const stridedScaleSource = `#include <metal_stdlib>
using namespace metal;

METAL_FUNC uint offset_of(uint i, constant size_t &num_dims, constant size_t *dims, constant size_t *strides) {
    uint off = 0;
    for (uint d = 0; d < num_dims; d++) {
        uint k = num_dims - 1 - d;
        off += (i % dims[k]) * strides[k];
        i /= dims[k];
    }
    return off;
}

template <typename T>
[[kernel]] void scale_strided(
    constant size_t &dim,
    constant size_t &num_dims,
    constant size_t *dims,
    constant size_t *strides,
    constant const T *input,
    device T *output,
    uint tid [[thread_position_in_grid]]
) {
    if (tid >= dim) return;
    output[tid] = T(2.0f * float(input[offset_of(tid, num_dims, dims, strides)]));
}
`

// Shape and stride arrays are array values of the kernel's dims (the
// strides contiguous), their rank and element count follow, and the
// source's other integer arrays stay buffers; where the source does not
// tell the view, a TODO says what to set.
func TestScaffoldShapeAndStrideArrays(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want, not []string
	}{
		{"candle: dims, strides, num_dims, dim", stridedScaleSource,
			[]string{`args: ["rows * cols", 2, [rows, cols], [cols, 1], input, output]`, "num_dims = 2, its rank", "dim = rows * cols, its element count",
				"{name: input, dtype: T, shape: [rows, cols]", `grid: ["cdiv(rows * cols, WG)", 1, 1]`},
			[]string{"name: dims", "name: strides", "num_dims: {", "randint"}},
		{"MLX: shape, in_strides, ndim; an index array stays a buffer", `#include <metal_stdlib>
using namespace metal;
kernel void pick(const device float* in, device float* out, const constant int* shape, const constant int64_t* in_strides,
                 const constant int& ndim, constant int* ids, uint i [[thread_position_in_grid]]) {
    out[i] = in[ids[i] * in_strides[0] + (i % shape[ndim - 1]) * in_strides[ndim - 1]];
}
`, []string{"args: [in, out, [rows, cols], [cols, 1], 2, ids]", "{name: ids, dtype: i32"}, []string{"TODO: no rank", "name: shape"}},
		{"declared length 3, no rank parameter", `#include <metal_stdlib>
using namespace metal;
kernel void cp3(device const float* x, device float* y, constant uint shape[3], constant uint strides[3], uint i [[thread_position_in_grid]]) {
    y[i] = x[(i / (shape[1] * shape[2])) * strides[0] + (i / shape[2] % shape[1]) * strides[1] + (i % shape[2]) * strides[2]];
}
`, []string{`args: [x, y, [B, rows, cols], ["rows * cols", cols, 1]]`, "the 3-d view [B, rows, cols]"}, []string{"TODO: no rank", "for another rank"}},
		{"no rank parameter: a TODO", `#include <metal_stdlib>
using namespace metal;
kernel void last(device const float* x, device float* y, constant uint* shape, uint i [[thread_position_in_grid]]) {
    y[i] = x[i * shape[1] + shape[1] - 1];
}
`, []string{"args: [x, y, [rows, cols]]", "TODO: no rank parameter: rank 2 is a guess"}, nil},
		{"strides without a shape: a TODO", `#include <metal_stdlib>
using namespace metal;
kernel void gather2(device const float* x, device float* y, constant int64_t* strides, uint2 i [[thread_position_in_grid]]) {
    y[i.y * 64 + i.x] = x[i.y * strides[0] + i.x * strides[1]];
}
`, []string{"args: [x, y, [cols, 1]]", "TODO: strides: the kernel takes no shape array"}, nil},
		{"a scalar stride is 1, no size (MLX's rms_norm w_stride)", `#include <metal_stdlib>
using namespace metal;
kernel void wscale(const device float* x, const device float* w, device float* y, constant uint& n, constant uint& w_stride,
                   uint i [[thread_position_in_grid]]) {
    if (i < n) y[i] = x[i] * w[i * w_stride];
}
`, []string{"args: [x, w, y, n, 1]", "TODO: w_stride is a stride", "shape: [n]"}, []string{"w_stride: {", "w_stride]"}},
		{"short strides: w_s, h_s scalars and an src_s array (candle's pool2d)", `#include <metal_stdlib>
using namespace metal;
kernel void pool(constant size_t& w_k, constant size_t& w_s, constant size_t& h_s, constant size_t* src_dims, constant size_t* src_s,
                 device const float* src, device float* dst, uint i [[thread_position_in_grid]]) {
    const size_t w_out = (src_dims[0] - w_k) / w_s + 1;
    if (i < w_out) dst[i] = src[i * w_s * src_s[0] + h_s * src_s[1]];
}
`, []string{"args: [w_k, 1, 1, [rows, cols], [cols, 1], src, dst]", "TODO: w_s is a stride", "TODO: h_s is a stride"}, []string{"w_s: {", "h_s: {", "name: src_s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "k", SrcPath: "/w/k.metal", Src: tc.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Text, n) {
					t.Errorf("manifest has %q:\n%s", n, res.Text)
				}
			}
			load(t, res.Text, "k.metal", tc.src)
		})
	}
}

// The manifest new writes for the candle-style kernel runs as it is on
// the MSL emulation (one g++ compile), its output right against NumPy.
func TestScaffoldStridedRunsOnEmulator(t *testing.T) {
	if st := pyref.Probe(gocontext.Background()); !st.OK() {
		t.Skipf("needs NumPy: %v", st.Err)
	}
	eb := mslemu.New(t, "../../../metal/testdata/mslemu", emuDev)
	res, err := Manifest(Request{Name: "scaffold_strided_scale", SrcPath: "/w/k.metal", Src: stridedScaleSource, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(res.Text, "\ncheck: none", "\ncheck: {python: ref.py}\n#", 1)
	f, err := user.Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.metal": stridedScaleSource,
		"ref.py": "def reference(inputs, dims):\n    return {\"output\": 2 * inputs[\"input\"]}\n"}))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if err := user.Install(f); err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	s.Dims["rows"], s.Dims["cols"] = 5, 37
	r := run.NewRunner(eb).Run(gocontext.Background(), s, mslemu.Options(), nil)
	if r.Status != profiler.StatusOK {
		t.Fatalf("status %s (%s) %+v\n%s", r.Status, r.Error, r.Verdict, y)
	}
}

var emuDev = metal.DeviceInfo(metal.RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
