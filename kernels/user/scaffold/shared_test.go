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
