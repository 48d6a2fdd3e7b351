package cudaemu_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda/cudaemu"
	_ "github.com/mltop/mltop/kernels/all" // the built-in transpose, a reference
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// open is a Backend for a test; it skips without g++.
func open(t *testing.T) *cudaemu.Backend {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found: the CUDA emulation needs a C++20 compiler with _Float16")
	}
	b, err := cudaemu.Open(context.Background(), cudaemu.EmulatedDevice())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// A row softmax whose entry is a template instance (softmax<T, WG>: T the
// dtype's __half), reducing with warp shuffles (xor and down, with a
// width) and a static __shared__ array of one float a warp.
const softmaxCU = `#include <cuda_fp16.h>
template <bool IS_MAX, int BLOCK>
__device__ float block_reduce(float v, float* red) {
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = IS_MAX ? fmaxf(v, w) : v + w;
    }
    if (threadIdx.x % warpSize == 0) red[threadIdx.x / warpSize] = v;
    __syncthreads();
    v = threadIdx.x < BLOCK / 32 ? red[threadIdx.x] : (IS_MAX ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o, 32);
        v = IS_MAX ? fmaxf(v, w) : v + w;
    }
    v = __shfl_sync(0xffffffffu, v, 0);  // lane 0 of warp 0 has the block's
    __syncthreads();
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();
    return v;
}
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) softmax(const T* __restrict__ x, T* __restrict__ y, int cols) {
    __shared__ float red[BLOCK / 32];
    const T* xr = x + (size_t)blockIdx.x * cols;
    T* yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, __half2float(xr[c]));
    m = block_reduce<true, BLOCK>(m, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += __expf(static_cast<float>(xr[c]) - m);
    s = block_reduce<false, BLOCK>(s, red);
    for (int c = threadIdx.x; c < cols; c += BLOCK) yr[c] = __float2half(__expf(__half2float(xr[c]) - m) / s);
}
`

const softmaxYAML = `name: emu_softmax
sources: {cuda: k.cu}
dtypes: [f16]
knobs:
  WG: {values: [64, 128], default: 128}
dims:
  rows: {default: 5}
  cols: {default: 300}
buffers:
  - {name: X, dtype: T, shape: [rows, cols], init: "normal(0, 2)"}
  - {name: Y, dtype: T, shape: [rows, cols], out: true}
dispatches:
  - entry: "softmax<T, WG>"
    grid: [rows]
    threads: [WG]
    args: [X, Y, cols]
check: {python: ref.py}
`

const softmaxRef = `import numpy as np
def reference(inputs, dims):
    x = inputs["X"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"Y": e / e.sum(axis=1, keepdims=True)}
`

// A tiled transpose through a static __shared__ tile, a 2-D block and a
// 2-D grid; checked against the built-in transpose's reference.
const transposeCU = `#define TILE 32
__global__ void transpose_tiled(const float* src, float* dst, int height, int width) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = src[(size_t)(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x, y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < height && y + j < width) dst[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
`

const transposeYAML = `name: emu_transpose
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  height: {default: 40}
  width: {default: 70}
buffers:
  - {name: src, dtype: f32, shape: [height, width], init: "normal(0, 1)"}
  - {name: dst, dtype: f32, shape: [width, height], out: true, tol: {atol: 0, rtol: 0}}
dispatches:
  - entry: transpose_tiled
    grid: ["cdiv(width, 32)", "cdiv(height, 32)"]
    threads: [32, 8]
    args: [src, dst, height, width]
check:
  against: transpose
  map: {src: X, dst: Y, height: rows, width: cols}
`

// A histogram: a grid-stride loop over the values, atomicAdd of float
// counts and of an unsigned total into inout zeros.
const histCU = `__global__ void histogram(const float* __restrict__ v, float* hist, unsigned* total, int n, int bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int b = min(max(__float2int_rz(v[i] * bins), 0), bins - 1);
        atomicAdd(&hist[b], 1.0f);
        atomicAdd(total, 1u);
    }
}
`

const histYAML = `name: emu_histogram
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  count: {default: 5000}
  bins: {default: 16}
buffers:
  - {name: v, dtype: f32, shape: [count], init: "uniform(0, 1)"}
  - {name: hist, dtype: f32, shape: [bins], inout: true, init: zeros, tol: {atol: 0, rtol: 0}}
  - {name: total, dtype: u32, shape: [1], inout: true, init: zeros, tol: {atol: 0, rtol: 0}}
dispatches:
  - entry: histogram
    grid: [3]
    threads: [96]
    args: [v, hist, total, count, bins]
check: {python: ref.py}
`

const histRef = `import numpy as np
def reference(inputs, dims):
    v, bins = inputs["v"], dims["bins"]
    b = np.clip((v.astype(np.float32) * np.float32(bins)).astype(np.int64), 0, bins - 1)
    return {"hist": np.bincount(b, minlength=bins).astype(np.float64), "total": np.array([float(len(v))])}
`

// A bf16 row sum: pairs read as __nv_bfloat162, a block reduction through
// extern __shared__ (the dispatch's dynamic shared memory), the result
// rounded to bf16.
const rowsumCU = `#include <cuda_bf16.h>
__global__ void row_sum_bf16(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
    extern __shared__ __align__(16) float partial[];
    const __nv_bfloat162* row = reinterpret_cast<const __nv_bfloat162*>(x + (size_t)blockIdx.x * cols);
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
        float2 f = __bfloat1622float2(row[c]);
        acc += f.x + f.y;
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = __float2bfloat16(partial[0]);
}
`

const rowsumYAML = `name: emu_rowsum
sources: {cuda: k.cu}
dtypes: [bf16]
knobs:
  WG: {values: [64], default: 64}
dims:
  rows: {default: 6}
  cols: {default: 250, multiple: 2}
buffers:
  - {name: X, dtype: T, shape: [rows, cols], init: "normal(0, 1)"}
  - {name: Y, dtype: T, shape: [rows], out: true, terms: cols}
dispatches:
  - entry: row_sum_bf16
    grid: [rows]
    threads: [WG]
    dynamic_tgm: "WG * 4"
    args: [X, Y, cols]
check: {python: ref.py}
`

const rowsumRef = `import numpy as np
def reference(inputs, dims):
    return {"Y": inputs["X"].sum(axis=1)}
`

// Row sums with cooperative groups: a 16-thread tile per row (two tiles
// of a warp reduce at once, with disjoint masks), cg::reduce with a
// __forceinline__ function passed by pointer (llm.c's softmax_forward).
const tileCU = `#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ __forceinline__ float add_op(float a, float b) { return a + b; }
__global__ void row_sum_tiles(const float* x, float* y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int row = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
    if (row >= rows) return;
    float acc = 0.0f;
    for (int c = tile.thread_rank(); c < cols; c += tile.size()) acc += x[(size_t)row * cols + c];
    float total = cg::reduce(tile, acc, cg::plus<float>());
    float again = cg::reduce(tile, acc, add_op);
    if (tile.thread_rank() == 0) y[row] = again == total ? total : NAN;
}
`

const tileYAML = `name: emu_tiles
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  rows: {default: 37}
  cols: {default: 100}
buffers:
  - {name: X, dtype: f32, shape: [rows, cols], init: "normal(0, 1)"}
  - {name: Y, dtype: f32, shape: [rows], out: true, terms: cols}
dispatches:
  - entry: row_sum_tiles
    grid: ["cdiv(rows, 4)"]
    threads: [64]
    args: [X, Y, rows, cols]
check: {python: ref.py}
`

// TestKernelsOnEmulation runs kernels of our own through the real Runner
// on the emulation against their references; each broken variant (one
// edit of its source) must be caught: an off-by-one index and a missing
// __syncthreads as a mismatch (the emulation runs a block's threads in
// order, each until it waits, so the race shows every time), a write past
// the end through the runner's guard.
func TestKernelsOnEmulation(t *testing.T) {
	if st := pyref.Probe(context.Background()); !st.OK() {
		t.Skipf("the Python references need NumPy in the interpreter of %s: %v", pyref.Rule, st.Err)
	}
	b := open(t)
	r := run.NewRunner(b)
	opt := cudaemu.Options()
	cases := []struct {
		name, yaml, cu, ref string
		edit                [2]string // the broken variant's edit of cu
		dtype               profiler.DType
		want                profiler.Status
		why                 string // in the error of a broken one
	}{
		{name: "softmax_template_f16", yaml: softmaxYAML, cu: softmaxCU, ref: softmaxRef, dtype: profiler.F16, want: profiler.StatusOK},
		{name: "transpose_static_shared", yaml: transposeYAML, cu: transposeCU, dtype: profiler.F32, want: profiler.StatusOK},
		{name: "transpose_no_syncthreads", yaml: transposeYAML, cu: transposeCU, dtype: profiler.F32, edit: [2]string{"__syncthreads();", ""},
			want: profiler.StatusMismatch},
		{name: "histogram_atomics_grid_stride", yaml: histYAML, cu: histCU, ref: histRef, dtype: profiler.F32, want: profiler.StatusOK},
		{name: "histogram_past_the_end", yaml: histYAML, cu: histCU, ref: histRef, dtype: profiler.F32, edit: [2]string{"atomicAdd(total, 1u);", "atomicAdd(total + 1, 1u);"},
			want: profiler.StatusMismatch, why: "wrote past the end of total"},
		{name: "rowsum_bf16_extern_shared", yaml: rowsumYAML, cu: rowsumCU, ref: rowsumRef, dtype: profiler.BF16, want: profiler.StatusOK},
		{name: "cooperative_groups_tiles", yaml: tileYAML, cu: tileCU, ref: rowsumRef, dtype: profiler.F32, want: profiler.StatusOK},
		{name: "rowsum_off_by_one", yaml: rowsumYAML, cu: rowsumCU, ref: rowsumRef, dtype: profiler.BF16, edit: [2]string{"partial[threadIdx.x + s]", "partial[threadIdx.x + s - 1]"},
			want: profiler.StatusMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cu := c.cu
			if c.edit[0] != "" {
				if cu = strings.Replace(cu, c.edit[0], c.edit[1], 1); cu == c.cu {
					t.Fatalf("test setup: %q is not in the source", c.edit[0])
				}
			}
			files := map[string]string{"kernel.yaml": strings.Replace(c.yaml, "name: emu_", "name: emu_"+c.name+"_", 1), "k.cu": cu}
			if c.ref != "" {
				files["ref.py"] = c.ref
			}
			f, err := user.Load(usertest.Write(t, files))
			if err != nil {
				t.Fatal(err)
			}
			if err := user.Install(f); err != nil {
				t.Fatal(err)
			}
			spec := profiler.Spec{Kernel: f.Name(), DType: c.dtype}.WithDefaults(f.Schema())
			res := r.Run(context.Background(), spec, opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s\nverdict %+v", res.Status, c.want, res.Error, res.Verdict)
			}
			if c.why != "" && !strings.Contains(res.Error, c.why) {
				t.Errorf("the error does not say %q: %s", c.why, res.Error)
			}
			t.Logf("%s: %s", res.Status, res.Error)
		})
	}
}

// TestRefusals: what the emulation cannot run is refused before any
// compile, naming the construct and the user's line.
func TestRefusals(t *testing.T) {
	b := open(t)
	cases := []struct {
		name, code, want string
	}{
		{"inline_ptx", "__global__ void k(float* x) {\n    float v;\n    asm volatile(\"mov.f32 %0, 1.0;\" : \"=f\"(v));\n    x[0] = v;\n}\n",
			"inline PTX `asm(...)` at k.cu:3: the CUDA emulation cannot run it; run `mltop check --run` on a machine with an NVIDIA GPU"},
		{"ptx_in_a_macro", "#define LANEID(r) asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(r))\n__global__ void k(unsigned* x) {\n    unsigned l;\n    LANEID(l);\n    x[0] = l;\n}\n",
			"inline PTX `asm(...)` at k.cu:4"},
		{"wmma", "namespace nvcuda { namespace wmma { struct row_major; } }\nusing namespace nvcuda;\n__global__ void k(float* x) {\n    wmma::row_major* p = nullptr;\n    x[0] = p == nullptr;\n}\n",
			"WMMA (nvcuda::wmma tensor-core fragments) at k.cu:4"},
		{"cub", "#include <cub/block/block_reduce.cuh>\n__global__ void k(float* x) { x[0] = 1; }\n",
			"at k.cu:1: the CUDA emulation does not have CUB"},
		{"grid_sync", "namespace cg { struct grid_group { void sync() {} }; inline grid_group this_grid() { return {}; } }\n__global__ void k(float* x) {\n    x[threadIdx.x] = 1;\n    cg::this_grid().sync();\n}\n",
			"cooperative grid synchronisation (cg::this_grid) at k.cu:1"},
		{"asm_under_a_false_if", "__global__ void k(float* x) {\n#if 0\n    asm(\"trap;\");\n#endif\n    x[0] = 1;\n}\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := profiler.Program{Code: "#line 1 \"k.cu\"\n" + c.code, File: "k.cu", Entry: "k"}
			err := b.Refuse(p)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var r *cudaemu.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("not refused: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("the refusal\n  %v\ndoes not say\n  %s", err, c.want)
			}
		})
	}
}

// One program, three launches. Mode 2: a struct parameter's pointer field
// gets its buffer's address (cuda.ParamRelocs), beside a scalar and a
// plain pointer, in the dispatch's order. Mode 0: a shuffle whose mask
// names lanes that wait elsewhere (at __syncthreads) is a deadlock on the
// GPU; the emulation says so and stops instead of hanging. Mode 1: a
// kernel that dies of a signal (a write far past its buffer) is said with
// what it most likely did. Both ways of running a block's threads: fibers
// (Linux) and OS threads passing a baton (macOS).
func TestStructDeadlockCrash(t *testing.T) {
	for _, osThreads := range []bool{false, true} {
		t.Run(map[bool]string{false: "fibers", true: "os_threads"}[osThreads], func(t *testing.T) {
			b := open(t)
			b.SetOSThreads(osThreads)
			structDeadlockCrash(t, b)
		})
	}
}

func structDeadlockCrash(t *testing.T, b *cudaemu.Backend) {
	code := `#line 1 "k.cu"
struct P {
    int n;
    float* x;
};
__global__ void k(int mode, P p, float* y) {
    if (mode == 2) {
        if (threadIdx.x < p.n) p.x[threadIdx.x] = 2.0f * threadIdx.x;
        y[threadIdx.x] = p.n;
        return;
    }
    if (mode == 1) {
        p.x[threadIdx.x + (1ll << 40)] = 1;
        return;
    }
    float v = p.x[threadIdx.x];
    if (threadIdx.x % 32 < 16) v += __shfl_xor_sync(0xffffffffu, v, 1);
    __syncthreads();
    p.x[threadIdx.x] = v;
}
`
	k, err := b.Compile(profiler.Program{Code: code, File: "k.cu", Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := b.Alloc(64 * 4)
	y, _ := b.Alloc(64 * 4)
	st := make([]byte, 16)
	st[0] = 40 // n
	launch := func(mode int) error {
		d := &profiler.Dispatch{Name: "k", Grid: [3]int{1, 1, 1}, Group: [3]int{64, 1, 1}, Args: []string{"x", "y"},
			Scalars: []profiler.Scalar{profiler.I32Param("mode", mode)},
			Structs: []profiler.StructArg{{Name: "p", Type: "P", Bytes: st, Pointers: []profiler.StructPointer{{Field: "x", Offset: 8, Arg: 0}}}},
			Order:   []profiler.ArgRef{{Scalar: true}, {Struct: true}, {Index: 1}}}
		return b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{x, y}}})
	}
	if err := launch(2); err != nil {
		t.Fatal(err)
	}
	xs, ys := make([]byte, 256), make([]byte, 256)
	b.Download(x, xs)
	b.Download(y, ys)
	for i := range 64 {
		wantX := float32(0)
		if i < 40 {
			wantX = float32(2 * i)
		}
		if gx, gy := math.Float32frombits(binary.LittleEndian.Uint32(xs[4*i:])), math.Float32frombits(binary.LittleEndian.Uint32(ys[4*i:])); gx != wantX || gy != 40 {
			t.Fatalf("thread %d: x %g (want %g), y %g (want 40)", i, gx, wantX, gy)
		}
	}
	for mode, want := range []string{
		"block (0,0,0): deadlock: 32 threads wait in __syncthreads and 32 in warp collectives; warp 0 waits in one of mask ffffffff for lanes ffff0000",
		"(a read or write far outside a buffer",
	} {
		if err := launch(mode); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("mode %d: got %v\nwant %q", mode, err, want)
		}
	}
}

// The include views kernels/user gives NVRTC: a stub of a host-only
// header (cublas_v2.h) and the program's own headers come before the C++
// library's folders (where the toolkit may have the real cublas_v2.h),
// the stubs of the C++ library's own headers (<cmath>) after them, unused.
func TestIncludeViews(t *testing.T) {
	b := open(t)
	code := `#line 1 "k.cu"
#include <cmath>
#include <cublas_v2.h>
#include "local.cuh"
#if !defined(STUB_SEEN) || LOCAL_VALUE != 3
#error the views were not used
#endif
__global__ void k(float* x) { x[threadIdx.x] = std::sqrt(float(LOCAL_VALUE)); }
`
	p := profiler.Program{Code: code, File: "k.cu", Entry: "k", Includes: map[string]string{
		"cmath":       "#error the NVRTC stub of <cmath> is used\n",
		"cublas_v2.h": "#pragma once\n#define STUB_SEEN 1\n",
		"local.cuh":   "#pragma once\n#define LOCAL_VALUE 3\n",
	}}
	if _, err := b.Compile(p); err != nil {
		t.Fatal(err)
	}
}

// What g++ cannot compile is said with the user's line, and with the two
// things it may be (the source, or CUDA the emulation lacks).
func TestCompileErrorNamesLine(t *testing.T) {
	b := open(t)
	code := "#line 1 \"k.cu\"\n__global__ void k(float* x) {\n    x[0] = __not_an_intrinsic(x[1]);\n}\n"
	_, err := b.Compile(profiler.Program{Code: code, File: "k.cu", Entry: "k"})
	for _, want := range []string{"the CUDA emulation (g++) cannot compile k.cu (entry k)", "or CUDA the emulation lacks", "k.cu:2:", "__not_an_intrinsic"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// What mltop's NVRTC preparation writes where the toolkit has libcu++:
// <cuda/std/…> headers (the emulation's own, the host library's std, even
// where g++ would find the toolkit's in /usr/include) and numeric_limits
// specialised in cuda::std (PyTorch's Half stub); and the toolkit's 8-bit
// floats (cuda_fp8.h): rounded to nearest even, saturating, subnormals;
// and a kernel's own global lerp beside <math.h>.
func TestLibcuStdAndFP8(t *testing.T) {
	b := open(t)
	code := `#line 1 "k.cu"
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda_fp8.h>
#include <math.h>
struct My {};
// a kernel's own lerp (llm.c's adamw.cu): no std::lerp in the global namespace to clash with
__device__ inline float lerp(float a, float b, float t) { return fmaf(t, b, fmaf(-t, a, a)); }
namespace cuda { namespace std {
template <> class numeric_limits<My> { public: static constexpr float max() { return 7.0f; } };
} }  // namespace cuda::std
__global__ void k(float* y) {
    const float e4[] = {0.1f, 500.0f, -3.3f, 0.001f, 1.0625f, -1e30f};
    const float e5[] = {0.1f, 70000.0f, -0.3f};
    int i = threadIdx.x;
    if (i < 6) y[i] = float(__nv_fp8_e4m3(e4[i]));
    if (i < 3) y[6 + i] = float(__nv_fp8_e5m2(e5[i]));
    if (i == 0) y[9] = cuda::std::numeric_limits<My>::max() + (cuda::std::is_same_v<int, int> ? 1 : 0);
    if (i == 0) y[10] = cuda::std::numeric_limits<float>::max() == 3.40282347e38f;
    if (i == 0) y[11] = lerp(1.0f, 3.0f, 0.25f) + sqrt(4.0f);
}
`
	k, err := b.Compile(profiler.Program{Code: code, File: "k.cu", Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := b.Alloc(16 * 4)
	d := &profiler.Dispatch{Name: "k", Grid: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1}, Args: []string{"y"}}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{y}}}); err != nil {
		t.Fatal(err)
	}
	ys := make([]byte, 64)
	b.Download(y, ys)
	want := []float32{
		0.1015625, 448, -3.25, 0.001953125, 1, -448, // e4m3: 13/8·2⁻⁴, saturated, 13/4, the least subnormal, a tie to even, saturated
		0.09375, 57344, -0.3125, // e5m2: 6·2⁻⁶, saturated, 5·2⁻⁴
		8, 1,
		3.5, // lerp 1.5 + sqrt(float) 2
	}
	for i, w := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(ys[4*i:])); got != w {
			t.Errorf("y[%d] = %g, want %g", i, got, w)
		}
	}
}
