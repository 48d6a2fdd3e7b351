package scaffold

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/usertest"
)

// tgmSources are shared arrays whose extents use the source's macros and
// constants: `mltop new` writes their bytes as `mltop check` suggests
// them, never a TODO check could fill.
var tgmSources = []struct {
	name, file, src string
	want            []string // tgm: lines
}{
	{"metal #ifndef TILE", "k.metal", `#include <metal_stdlib>
using namespace metal;
#ifndef TILE
#define TILE 16
#endif
kernel void transpose(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                      constant uint& n [[buffer(2)]], uint2 gid [[thread_position_in_grid]],
                      uint2 lid [[thread_position_in_threadgroup]]) {
    threadgroup float tile[TILE][TILE + 1];
    tile[lid.y][lid.x] = in[gid.y * n + gid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid.x * n + gid.y] = tile[lid.x][lid.y];
}
`, []string{`- {name: tile, bytes: "1088"}   # threadgroup float tile[TILE][TILE + 1]`}},
	{"cuda knob macro, template parameter, local constexpr", "k.cu", `#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#define PAD 1
template <int ROWS>
__global__ void transpose(const float* in, float* out, int n) {
    constexpr int W = BLOCK_SIZE + PAD;
    __shared__ float tile[BLOCK_SIZE][BLOCK_SIZE + PAD];
    __shared__ float rows[ROWS][W];
    int x = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = in[x];
    __syncthreads();
    out[x] = tile[threadIdx.x][threadIdx.y] + rows[0][0];
}
`, []string{`- {name: tile, bytes: "BLOCK_SIZE * (BLOCK_SIZE + 1) * 4"}`, `- {name: rows, bytes: "ROWS * (BLOCK_SIZE + 1) * 4"}`}},
	{"cuda sizeof in a local constant", "k.cu", `__global__ void fill(const float* in, float* out, int n) {
    const unsigned int LANES = 256 / sizeof(float);
    __shared__ float buf[LANES + 1];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = buf[threadIdx.x];
}
`, []string{`- {name: buf, bytes: "260"}`}},
	{"cuda file-scope const int (GPTQ's BLOCKWIDTH)", "k.cu", `const int BLOCKWIDTH = 256;
template <typename scalar_t>
__global__ void matvec(const scalar_t* vec, scalar_t* out, int n) {
    __shared__ scalar_t blockvec[BLOCKWIDTH];
    blockvec[threadIdx.x] = vec[blockIdx.x * BLOCKWIDTH + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * BLOCKWIDTH + threadIdx.x] = blockvec[BLOCKWIDTH - 1 - threadIdx.x];
}
`, []string{`- {name: blockvec, bytes: "BLOCKWIDTH * sizeof(scalar_t)"}`}},
	{"cuda several arrays in one declaration (RWKV's wkv)", "k.cu", `#define HN 64
__global__ void wkv(const float* r, float* y, int n) {
    __shared__ float rr[HN], kk[HN + 1], ww[2][HN];
    rr[threadIdx.x] = r[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = rr[0] + kk[0] + ww[1][0];
}
`, []string{`- {name: rr, bytes: "256"}   # __shared__ float rr[HN]`, `- {name: kk, bytes: "260"}   # __shared__ float kk[HN + 1]`, `- {name: ww, bytes: "512"}   # __shared__ float ww[2][HN]`}},
}

// tgmItemRE reads a tgm: item's name and bytes, as new writes it and as
// check's warning suggests it.
var tgmItemRE = regexp.MustCompile(`\{name: (\w+), bytes: "?([^"}]*)"?\}`)

func TestScaffoldSharedBytesAsCheckSuggests(t *testing.T) {
	for _, tc := range tgmSources {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/" + tc.file, Src: tc.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			if strings.Contains(res.Text, `bytes: "TODO"`) {
				t.Errorf("a TODO check would fill:\n%s", res.Text)
			}
			wrote := map[string]string{}
			for _, m := range tgmItemRE.FindAllStringSubmatch(res.Text, -1) {
				wrote[m[1]] = m[2]
			}
			// check, given no tgm: items, suggests the same bytes
			noItems := regexp.MustCompile(`(?m)^    tgm:.*\n(^      .*\n)*`).ReplaceAllString(res.Text, "")
			path := usertest.Write(t, map[string]string{"kernel.yaml": noItems, tc.file: tc.src})
			suggested := map[string]string{}
			for _, f := range lint.Check(path, lint.Options{Static: true}).Manifests[0].Findings {
				if strings.Contains(f.Msg, "lists no tgm: items") {
					for _, m := range tgmItemRE.FindAllStringSubmatch(f.Msg, -1) {
						suggested[m[1]] = m[2]
					}
				}
			}
			if len(suggested) != len(wrote) {
				t.Fatalf("new wrote %v, check suggests %v", wrote, suggested)
			}
			for name, s := range suggested {
				if tokensOf(s) != tokensOf(wrote[name]) {
					t.Errorf("%s: new wrote %q, check suggests %q", name, wrote[name], s)
				}
			}
			load(t, res.Text, tc.file, tc.src)
		})
	}
}

// tokensOf is an expression without spaces and parentheses: the two write
// the same sum alike, parenthesized their own ways. The dtype's size is 4:
// new writes sizeof(scalar_t), check its value at f32.
func tokensOf(e string) string {
	e = strings.ReplaceAll(e, "sizeof(scalar_t)", "4")
	return strings.NewReplacer(" ", "", "(", "", ")", "").Replace(e)
}

// switchKernelsSource writes two kernels per macro invocation (NAME and
// NAME_strided, on the invoking line), each picking one of three shared
// array sizes in a switch, as candle's reduce_switch does; the pair's
// array has a type mltop cannot size.
const switchKernelsSource = `#include <metal_stdlib>
using namespace metal;
template <typename T> struct pair_t { T v; uint i; };
#define SUM_CASE(N) case N: { threadgroup float part[N]; part[tid] = x[tid]; y[0] = part[0]; break; }
#define ARG_CASE(N) case N: { using P = pair_t<float>; threadgroup P acc[N]; acc[tid].v = x[tid]; y[0] = acc[0].v; break; }
#define PICK(CASE) switch (nt) { CASE(256) CASE(128) CASE(64) }
#define TWO(NAME, CASE) \
kernel void NAME(constant uint &n, device const float *x, device float *y, \
    uint tid [[thread_index_in_threadgroup]], uint nt [[threads_per_threadgroup]]) { PICK(CASE) } \
kernel void NAME##_strided(constant uint &n, device const float *x, device float *y, \
    uint tid [[thread_index_in_threadgroup]], uint nt [[threads_per_threadgroup]]) { PICK(CASE) }
TWO(sum_f32, SUM_CASE)
TWO(argsum_f32, ARG_CASE)
`

// A kernel a macro writes beside another on the same line gets its own
// shared arrays once each (not the other kernel's too), and an array of
// a type mltop cannot size declared in several cases is one TODO line
// listing the other extents.
func TestScaffoldSharedArraysOfMacroKernels(t *testing.T) {
	for _, tc := range []struct {
		entry string
		want  []string
		items int
	}{
		{"sum_f32_strided", []string{`- {name: part, bytes: "1024"}   # threadgroup float part[256]`, `- {name: part, bytes: "256"}   # threadgroup float part[64]`}, 3},
		{"sum_f32", []string{`- {name: part, bytes: "512"}   # threadgroup float part[128]`}, 3},
		{"argsum_f32", []string{`# - {name: acc, bytes: "TODO"}   # TODO: bytes of threadgroup P acc[256] (and 2 more of the same type: [128], [64]): mltop does not know the size of P`}, 1},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			res, err := Manifest(Request{Name: "k", SrcPath: "/w/k.metal", Src: switchKernelsSource, Entries: []string{tc.entry}, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			if n := len(regexp.MustCompile(`(?m)^      #? ?- \{name: `).FindAllString(res.Text, -1)); n != tc.items {
				t.Errorf("%d tgm: lines, want %d:\n%s", n, tc.items, res.Text)
			}
			load(t, res.Text, "k.metal", switchKernelsSource)
		})
	}
}

// A Metal threadgroup parameter (`threadgroup float* buf [[threadgroup(0)]]`,
// as ggml's norms take their partial sums) is sized at dispatch: the
// scaffold writes the commented dynamic_tgm TODO naming it, as for a CUDA
// extern array. Before, nothing said so and the run stopped ("needs
// threadgroup memory").
func TestScaffoldMetalThreadgroupParam(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\n" +
		"kernel void gsum(device const float* x, device float* y, constant int& n, threadgroup float* buf [[threadgroup(0)]],\n" +
		"    uint g [[threadgroup_position_in_grid]], uint t [[thread_position_in_threadgroup]], uint s [[simdgroup_index_in_threadgroup]], uint l [[thread_index_in_simdgroup]]) {\n" +
		"  float v = simd_sum(x[g * n + t]);\n  if (l == 0) buf[s] = v;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  if (t == 0) y[g] = buf[0];\n}\n"
	res, err := Manifest(Request{Name: "my_gsum", SrcPath: "/w/g.metal", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{`    # dynamic_tgm: "TODO"   # TODO: bytes of threadgroup parameter buf [[threadgroup(0)]] (float), set at dispatch`}, []string{"extern shared"})
	checkNotesHaveTODOs(t, res)
	load(t, res.Text, "g.metal", src)
}
