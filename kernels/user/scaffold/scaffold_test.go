package scaffold

import (
	"errors"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/usertest"
)

// wholeProgram is an llm.c-style file: includes, a floatX-free f32 build,
// helpers, three kernels, host launchers and main().
const wholeProgram = `#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "common.h"

__global__ void encoder_forward_kernel(float* out, const int* inp, const float* wte, const float* wpe,
                                       int B, int T, int C, int V) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * T * C) return;
    int bt = idx / C, c = idx % C;
    out[idx] = wte[inp[bt] * C + c] + wpe[(bt % T) * C + c];
}

__global__ void layernorm_forward_kernel(float* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                                         const float* __restrict__ inp, const float* __restrict__ weight,
                                         const float* __restrict__ bias, int N, int C, float eps) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N) return;
    const float* x = inp + idx * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) m += x[i];
    m = m / C;
    float v = 0.0f;
    for (int i = 0; i < C; i++) { float d = x[i] - m; v += d * d; }
    float s = rsqrtf(v / C + eps);
    float* o = out + idx * C;
    for (int i = 0; i < C; i++) o[i] = s * (x[i] - m) * weight[i] + bias[i];
    mean[idx] = m;
    rstd[idx] = s;
}

__global__ void residual_forward_kernel(float* acc, const float* inp, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) acc[idx] += inp[idx];
}

void encoder_forward(float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C, int V) {
    const int block_size = 256;
    encoder_forward_kernel<<<(B * T * C + block_size - 1) / block_size, block_size>>>(out, inp, wte, wpe, B, T, C, V);
}

int main(int argc, char** argv) {
    float* d_out;
    cudaMalloc(&d_out, 16);
    encoder_forward(d_out, NULL, NULL, NULL, 4, 64, 768, 50257);
    printf("ok\n");
    return 0;
}
`

const templateKernel = `#include <cuda_bf16.h>
namespace ops {
template <typename scalar_t, int BLOCK_SIZE = 128, bool kUseBias = true>
__global__ void __launch_bounds__(BLOCK_SIZE) scale_bias(const scalar_t* __restrict__ x, const scalar_t* bias,
                                                         scalar_t* __restrict__ y, float scale, size_t n) {
    __shared__ float tile[BLOCK_SIZE];
    size_t i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i < n) y[i] = (scalar_t)((float)x[i] * scale + (kUseBias ? (float)bias[i] : 0.0f));
}
}  // namespace ops
`

const intBTC = `__global__ void rms_forward(float* out, const float* inp, int B, int T, int C) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= B * T) return;
    float s = 0.0f;
    for (int c = 0; c < C; ++c) s += inp[row * C + c] * inp[row * C + c];
    out[row] = sqrtf(s / C);
}
`

// plainMetalKernel has no include and no [[buffer(n)]], and a scalar
// before a buffer.
const plainMetalKernel = `kernel void scale(device float* out, constant float& s, device const float* a,
                  constant uint& n, uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = s * a[i];
}
`

const metalKernel = `#include <metal_stdlib>
using namespace metal;

struct RowParams {
    uint rows;
    uint cols;
    float eps;
};

kernel void rms_norm(device const float* x [[buffer(0)]],
                     device float* y [[buffer(1)]],
                     constant RowParams& p [[buffer(2)]],
                     uint gid [[thread_position_in_grid]]) {
    if (gid >= p.rows) return;
    float s = 0.0f;
    for (uint c = 0; c < p.cols; ++c) s += x[gid * p.cols + c] * x[gid * p.cols + c];
    float r = rsqrt(s / p.cols + p.eps);
    for (uint c = 0; c < p.cols; ++c) y[gid * p.cols + c] = x[gid * p.cols + c] * r;
}

kernel void axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant uint& n [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    if (gid < n) y[gid] = 2.0f * x[gid] + y[gid];
}
`

const floatXProgram = `#include <cuda_bf16.h>
typedef __nv_bfloat16 floatX;
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 512
#endif
#define WARP_SIZE 32
__global__ void adamw_kernel(floatX* params, const floatX* grads, float* m, float* v, long num_parameters,
                             float learning_rate, float beta1, float beta2, float eps, float weight_decay, bool use_master) {
    __shared__ float red[BLOCK_SIZE];
    long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num_parameters) return;
    float g = (float)grads[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float p = (float)params[i];
    params[i] = __float2bfloat16(p - learning_rate * (mi / (sqrtf(vi) + eps) + weight_decay * p));
}
`

const indexProgram = `
__global__ void ce_kernel(float* losses, const float* logits, const int* targets, int N, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) losses[i] = -logits[i * V + targets[i]];
}
__global__ void gather_kernel(float* out, const float* src, const long* idx, int M) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) out[i] = src[idx[i]];
}
__global__ void scatter_kernel(float* out, const unsigned long* counts, int M) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) out[i] = (float)counts[i];
}
`

const gatherOnly = `
__global__ void gather_kernel(float* out, const float* src, const int64_t* idx, int M) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) out[i] = src[idx[i]];
}
`

// load writes the manifest beside its source and loads it as it is.
func load(t *testing.T, text, file, src string) *user.Family {
	t.Helper()
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, file: src, "common.h": "#pragma once\n"})
	f, err := user.Load(path)
	if err != nil {
		t.Fatalf("the scaffold does not load: %v\n%s", err, text)
	}
	return f
}

func TestScaffoldRealisticSources(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		entries         []string
		want, not       []string // lines (substrings) the manifest must and must not have
		notes           []string // substrings of the summary
		dispatches      int
	}{
		{name: "whole program, three kernels in the given order", file: "train.cu", src: wholeProgram,
			entries: []string{"residual_forward_kernel", "encoder_forward_kernel", "layernorm_forward_kernel"},
			want: []string{
				"dtype_name: floatX", "dtypes: [f32]",
				"{name: acc, dtype: f32, shape: [B, T], init: \"normal(0, 1)\", inout: true}",
				"{name: inp_2, dtype: i32, shape: [B, T, C], init: \"randint(0, V)\"}   # indices below V, encoder_forward_kernel's vocabulary size",
				"{name: out, dtype: f32, shape: [B, T, C], out: true}",
				`args: [acc, inp, "B * T"]`, "args: [out, inp_2, wte, wpe, B, T, C, V]",
				`args: [out, mean, rstd, inp, weight, bias, "B * T", C, eps]`,
				"  eps: 1e-5", "  B: {default: 4", "  T: {default: 256",
				"- entry: residual_forward_kernel",
				"dtype_name: floatX   # a kernel takes int T",
				`args: [acc, inp, "B * T"]   # the kernel's parameters, in order; TODO: N guessed to be B * T`,
			},
			not:        []string{"main", "encoder_forward(", "  N: {default: 1024"},
			notes:      []string{"acc is read and written", "N is guessed to be B * T", "residual_forward_kernel: guessed buffer shapes [B, T] for acc, inp"},
			dispatches: 3},
		{name: "template in a namespace", file: "ops.cu", src: templateKernel,
			want: []string{
				"dtype_name: scalar_t", "dtypes: [f32, f16, bf16]",
				`- entry: "ops::scale_bias<scalar_t, BLOCK_SIZE, kUseBias>"`,
				"BLOCK_SIZE: {values: [32, 64, 128, 256, 512, 1024], default: 128",
				"kUseBias: {default: true}",
				"{name: x, dtype: scalar_t, shape: [n], init: \"normal(0, 1)\"}",
				"{name: y, dtype: scalar_t, shape: [n], out: true}",
				"args: [x, bias, y, scale, n]", "threads: [BLOCK_SIZE, 1, 1]",
				`- {name: tile, bytes: "BLOCK_SIZE * 4"}`,
			},
			dispatches: 1},
		{name: "int B, int T, int C", file: "rms.cu", src: intBTC,
			want: []string{"dtype_name: floatX   # a kernel takes int T", "  T: {default: 256", "args: [out, inp, B, T, C]",
				"{name: out, dtype: f32, shape: [B, T, C], out: true}", "WG: {values:"},
			dispatches: 1},
		{name: "Metal: a parameter struct and a constant scalar", file: "norm.metal", src: metalKernel,
			entries: []string{"rms_norm", "axpy"},
			want: []string{"sources: {metal: norm.metal}", "args: [x, y, rows, cols, eps]", "args: [x, y_2, n]",
				"{name: y_2, dtype: f32, shape: [n], init: \"normal(0, 1)\", inout: true}", "  eps: 1e-5"},
			notes:      []string{"RowParams) is a struct"},
			dispatches: 2},
		// Unmarked Metal parameters are numbered in order, so a scalar
		// between buffers is bound where it stands (the manifest loads).
		{name: "Metal: no [[buffer(n)]], a scalar between buffers", file: "scale.metal", src: plainMetalKernel,
			want:       []string{"args: [out, s, a, n]   # the kernel's parameters, in order"},
			not:        []string{"args: [out, a", "one struct"},
			dispatches: 1},
		{name: "launches in host code", file: "launch.cu", src: launchProgram, entries: []string{"rows_kernel", "fixed_kernel", "plain_kernel"},
			want: []string{
				"block_size: {values: [64, 128, 256], default: 256, doc: threads per group}   # from the launch at line 11 and the values the program loops block_size over",
				`grid: ["cdiv(N * 32, block_size)", 1, 1]   # from the launch at line 11`, "threads: [block_size, 1, 1]",
				"WG: {values: [256], default: 256, doc: threads per group}   # TODO: the launch at line 14 uses 256 threads",
				`grid: ["(N + 255) / 256", 1, 1]   # from the launch at line 14`, "threads: [WG, 1, 1]",
				"threads: [nthreads, 1, 1]", "nthreads: {values: [32, 64, 128, 256, 512, 1024], default: 128",
				`grid: ["cdiv(N, nthreads)", 1, 1]   # TODO: guessed one thread per element of N; set the groups (blocks) your launch uses (the launch at line 19 has grid ` + "`ceil_div(N, nthreads * x128::size)`" + `, which names no dims mltop knows)`,
			},
			not:        []string{"<<<1, 64>>>", `grid: ["ceil_div`, `grid: ["cdiv(N, nthreads * x128`},
			notes:      []string{"fixed_kernel: its launch at line 14 uses 256 threads: knob WG has that one value", "rows_kernel: guessed buffer shapes [N] for out, inp"},
			dispatches: 3},
		// A 2-D dim3 block (here named like CUDA's own blockDim) is no 1-D
		// knob (a knob blockDim would hide the built-in the kernel reads):
		// its sizes are the threads, and the dim3 grid of dims the grid.
		{name: "dim3 block named blockDim", file: "tile.cu", src: dim3Program,
			want:       []string{"threads: [16, 16, 1]", `grid: ["OC / 16", "C / 16", 1]   # from the launch at line 7`},
			not:        []string{"blockDim:", "[blockDim", "WG", "TODO: guessed one thread"},
			dispatches: 1},
		// A 1-D dim3 block is a thread count like an int's: a knob from the
		// launch, with its value as the default (renamed when it is blockDim).
		{name: "1-D dim3 blocks", file: "vec.cu", src: dim3OneDProgram, entries: []string{"vadd", "vscale"},
			want: []string{"block: {values: [32, 64, 128, 256, 512, 1024], default: 128, doc: threads per group}   # from the launch at line 10 (block threads)",
				"threads: [block, 1, 1]",
				"WG: {values: [32, 64, 128, 256, 512, 1024], default: 512, doc: threads per group}   # from the launch at line 12 (blockDim threads)",
				"threads: [WG, 1, 1]"},
			not:        []string{"blockDim:", "set threads: to those x, y, z"},
			dispatches: 2},
		{name: "index inputs: bounded by the kernel's vocabulary size, else a TODO", file: "ce.cu", src: indexProgram,
			entries: []string{"ce_kernel", "gather_kernel", "scatter_kernel"},
			want: []string{
				"{name: targets, dtype: i32, shape: [N], init: \"randint(0, V)\"}   # indices below V, ce_kernel's vocabulary size",
				"{name: idx, dtype: i64, shape: [M], init: \"randint(0, V)\"}   # TODO: guessed indices below V",
				"{name: counts, dtype: u64, shape: [M], init: \"randint(0, 16)\"}   # integer data (scatter_kernel uses no element as an index)", // counts[i] is a value, not an index
				"args: [losses, logits, targets, N, V]", "args: [out, src, idx, M]",
			},
			dispatches: 3},
		{name: "an index input and no vocabulary size: a TODO", file: "g.cu", src: gatherOnly,
			want:       []string{"{name: idx, dtype: i64, shape: [M], init: \"randint(0, 1024)\"}   # TODO: indices below 1024: bound them by the size they index, e.g. randint(0, V)"},
			dispatches: 1},
		// FasterTransformer specialises a template kernel for half: one
		// kernel (no --entry needed), the primary template's parameters.
		{name: "explicit specialization for half", file: "spec.cu", src: specializedKernel,
			want:       []string{`- entry: "scale<T>"`, "args: [out, in, n]", "# line 3: scale(float* out, const T* in, int n)"},
			not:        []string{"half* in"},
			dispatches: 1},
		{name: "floatX typedef, guarded block macro, in-place optimizer", file: "adamw.cu", src: floatXProgram,
			want: []string{"dtype_name: floatX", "dtypes: [bf16]",
				"{name: params, dtype: floatX, shape: [num_parameters], init: \"normal(0, 1)\", inout: true}",
				"{name: m, dtype: f32, shape: [num_parameters], init: \"normal(0, 1)\", inout: true}",
				"BLOCK_SIZE: {values: [32, 64, 128, 256, 512, 1024], default: 512",
				"use_master: {default: false}", "beta2: 0.999",
				"args: [params, grads, m, v, num_parameters, learning_rate, beta1, beta2, eps, weight_decay, use_master]",
				`- {name: red, bytes: "BLOCK_SIZE * 4"}`},
			not:        []string{"WARP_SIZE", "WG:"},
			dispatches: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/" + tc.file, Src: tc.src, Entries: tc.entries, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, tc.want, tc.not)
			notes := strings.Join(res.Notes, "\n")
			for _, w := range tc.notes {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
			checkNotesHaveTODOs(t, res)
			f := load(t, res.Text, tc.file, tc.src)
			if n := len(f.DispatchInfos()); n != tc.dispatches {
				t.Errorf("%d dispatches, want %d", n, tc.dispatches)
			}
		})
	}
}

const specializedKernel = `#include <cuda_fp16.h>
template <typename T>
__global__ void scale(float* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * static_cast<float>(in[i]);
}
template <>
__global__ void scale<half>(float* out, const half* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * __half2float(in[i]);
}
`

// TestScaffoldRefuses: bad names, other file types, no kernels, unknown
// entries and several kernels without a choice are errors that say what
// to do; the choice lists every kernel with its line and parameters.
func TestScaffoldRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"bad name", Request{Name: "1bad", SrcPath: "k.cu", Src: intBTC}, "not a usable kernel name"},
		{"not a kernel file", Request{Name: "k", SrcPath: "k.txt", Src: intBTC}, "want a .cu or .metal file"},
		{"no kernels", Request{Name: "k", SrcPath: "k.cu", Src: "int main() { return 0; }"}, "has no kernels"},
		// the kernels in a header included by a path under an include directory
		{"kernels in an unread header", Request{Name: "k", SrcPath: "src/ops/act.cu", Src: "#include <cuda_fp16.h>\n#include \"src/ops/act.h\"\n#include \"src/ops/util.h\"\n#if 0\n#include \"dead.h\"\n#endif\ntemplate void launch<float>(float*, int);\n"},
			"has no kernels: mltop looks for __global__ (CUDA) and kernel / [[kernel]] (Metal) functions in it and in the headers it includes from its own folder; it also includes src/ops/act.h, src/ops/util.h, not found there: the kernels may be in one of those headers (reached through include_dirs): pass --from that header"},
		{"unknown entry", Request{Name: "k", SrcPath: "k.cu", Src: wholeProgram, Entries: []string{"nope"}}, `no kernel "nope" (kernels found: encoder_forward_kernel, layernorm_forward_kernel, residual_forward_kernel)`},
		{"several kernels, none named", Request{Name: "k", SrcPath: "k.cu", Src: wholeProgram}, "has 3 kernels: pick one with --entry NAME"},
		{"only const pointers", Request{Name: "k", SrcPath: "k.cu", Src: "__global__ void k(const float* x, int n) {}"}, "every pointer parameter is const"},
	} {
		_, err := Manifest(tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	_, err := Manifest(Request{Name: "k", SrcPath: "k.cu", Src: wholeProgram})
	var ce *ChooseError
	if !errors.As(err, &ce) || len(ce.Kernels) != 3 || !strings.Contains(err.Error(), "line 14: layernorm_forward_kernel  layernorm_forward_kernel(float* out") {
		t.Errorf("the choice: %v", err)
	}
}

// TestScaffoldSharedArrays: a tgm: item per static shared array, with its
// bytes when the type and extents are known; dynamic ones are a note.
func TestScaffoldSharedArrays(t *testing.T) {
	src := `__global__ void rowsum(const float* x, float* y, int rows) {
    __shared__ float red[1024];
    __shared__ float other[BLOCK];
    __shared__ mystruct s[4];
    extern __shared__ float dyn[];
    y[0] = x[0];
}`
	res, err := Manifest(Request{Name: "my_rowsum", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`- {name: red, bytes: "4096"}`, `# - {name: other, bytes: "TODO"}`, `# - {name: s, bytes: "TODO"}`} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
	checkNotesHaveTODOs(t, res)
	if !strings.Contains(strings.Join(res.Notes, "\n"), "extern shared array dyn") {
		t.Errorf("notes lack the extern array: %v", res.Notes)
	}
	// the note's TODO is in the file, commented so that it loads, and
	// `mltop check` flags the extern array until it is filled in
	if want := `    # dynamic_tgm: "TODO"   # TODO: bytes of extern shared array dyn, set at launch`; !strings.Contains(res.Text, want) {
		t.Errorf("manifest lacks %q:\n%s", want, res.Text)
	}
	load(t, res.Text, "k.cu", src)
	path := usertest.Write(t, map[string]string{"kernel.yaml": res.Text, "k.cu": src})
	rep := lint.Check(path, lint.Options{Static: true})
	var flagged bool
	for _, f := range rep.Manifests[0].Findings {
		flagged = flagged || f.Level == lint.Warning && strings.Contains(f.Msg, "sets no dynamic_tgm")
	}
	if !flagged {
		t.Errorf("check does not flag the unfilled dynamic_tgm: %+v", rep.Manifests[0].Findings)
	}
}

// A shared declaration may write its type ahead of __shared__
// (cuda-samples' reductionMultiBlockCG: `extern double __shared__
// sdata[];`): the extern one gets its dynamic_tgm TODO, a sized one its
// tgm: item; `static __shared__` is not read as a type.
func TestScaffoldSharedTypeFirst(t *testing.T) {
	src := `__global__ void red(const float* x, float* y, unsigned int n) {
    extern double __shared__ sdata[];
    float __shared__ part[32];
    static __shared__ int flag[2];
    sdata[0] = x[0]; part[0] = 0; flag[0] = 0; y[0] = sdata[0];
}`
	res, err := Manifest(Request{Name: "red", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`# dynamic_tgm: "TODO"   # TODO: bytes of extern shared array sdata`, `- {name: part, bytes: "128"}`, `- {name: flag, bytes: "8"}`} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
}

// A shared array of a type of several words (`__shared__ unsigned int
// bins[NBINS]`, a histogram's block-private counters) gets its tgm: item
// as a one-word type does; `check` warns about a shared array without one.
func TestScaffoldSharedMultiWordTypes(t *testing.T) {
	src := `#define NBINS 64
__global__ void hist(unsigned int* bins, const int* ids, int n) {
    __shared__ unsigned int local[NBINS];
    __shared__ unsigned long long wide[4], more[2];
    __shared__ volatile signed char flags[8];
    __shared__ unsigned counts[NBINS];
    local[0] = 0; wide[0] = 0; more[0] = 0; flags[0] = 0; counts[0] = 0;
    if (threadIdx.x < n) bins[ids[threadIdx.x]] += local[0];
}`
	res, err := Manifest(Request{Name: "hist", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`- {name: local, bytes: "256"}   # __shared__ unsigned int local[NBINS]`,
		`- {name: wide, bytes: "32"}`,
		`- {name: more, bytes: "16"}`,
		`- {name: flags, bytes: "8"}`,
		`- {name: counts, bytes: "256"}`,
	} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
}

// TestAccessOf: how a body uses a pointer decides in, out or inout.
func TestAccessOf(t *testing.T) {
	for _, tc := range []struct {
		body                   string
		reads, writes, escapes bool
	}{
		{"y[i] = x[i];", false, true, false},
		{"y[i] += 1;", true, true, false},
		{"y[i]++;", true, true, false},
		{"float v = y[i] * 2;", true, false, false},
		{"if (y[i] == 0) z = 1;", true, false, false},
		{"*y = 1;", false, true, false},
		{"float* row = y + i * C; row[j] = 0; float a = row[j];", true, true, false},
		{"atomicAdd(&y[i], 1.0f);", true, true, false},
		{"store128(y + i, v);", false, false, true},
	} {
		toks := csrc.Tokenize("{" + tc.body + "}")
		a := accessOf(toks[1:len(toks)-1], "y")
		if a.reads != tc.reads || a.writes != tc.writes || a.escapes != tc.escapes {
			t.Errorf("%q: %+v, want reads %v writes %v escapes %v", tc.body, a, tc.reads, tc.writes, tc.escapes)
		}
	}
}

// launchProgram launches its kernels from host code: a block size that is
// a parameter the program loops over, with the grid in a variable; a
// literal launch; a grid mltop cannot express (a C++ constant).
const launchProgram = `__global__ void rows_kernel(float* out, const float* inp, int N, int C) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N * C) out[i] = inp[i]; }
__global__ void fixed_kernel(float* y, const float* x, int N) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) y[i] = x[i]; }
__global__ void plain_kernel(float* z, const float* w, int N) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) z[i] = w[i]; }
struct x128 { static constexpr int size = 4; };
int ceil_div(int a, int b) { return (a + b - 1) / b; }
void launch_rows(float* out, const float* inp, int N, int C, const int block_size) {
    // rows_kernel<<<1, 64>>>(out, inp, N, C);
    const int grid_size = ceil_div(N * 32, (long) block_size);


    rows_kernel<<<grid_size, block_size>>>(out, inp, N, C);
}
void launch_fixed(float* y, const float* x, int N) {
    fixed_kernel<<<(N + 255) / 256, 256>>>(y, x, N);
}
void launch_plain(float* z, const float* w, int N) {
    int nthreads = 128;
    const int blocks = ceil_div(N, nthreads * x128::size);
    plain_kernel<<<blocks, nthreads>>>(z, w, N);
}
int main() { int block_sizes[] = {64, 128, 256}; return 0; }
`

const dim3OneDProgram = `__global__ void vadd(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}
__global__ void vscale(float* c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] *= 2; }
int main() {
    int n = 1 << 20;
    dim3 block(128);
    dim3 blockDim(512, 1, 1);
    vadd<<<n / 128, block>>>(0, 0, n);
    // vscale with 512 threads
    vscale<<<n / 512, blockDim>>>(0, n);
}
`

const dim3Program = `__global__ void tile_kernel(float* out, const float* inp, int C, int OC) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = inp[threadIdx.y * C];
}
void launch(float* out, const float* inp, int C, int OC) {
    dim3 gridDim(OC / 16, C / 16);
    dim3 blockDim(16, 16);
    tile_kernel<<<gridDim, blockDim>>>(out, inp, C, OC);
}
`
