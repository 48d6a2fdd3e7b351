package scaffold

import (
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// A warp-segment scan whose int parameter is the shuffle's width, as a
// whole program: the launch passes 32, and its grid covers `count`.
const segScanProgram = `#include <cstdio>
__global__ void seg_scan(float* v, int seg) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = v[i];
    for (int d = 1; d < seg; d *= 2) {
        float y = __shfl_up_sync(0xffffffff, x, d, seg);
        if ((threadIdx.x % seg) >= d) x += y;
    }
    v[i] = x;
}
int main() {
    int count = 65536;
    int threads = 128;
    float* d;
    cudaMalloc(&d, count * sizeof(float));
    int blocks = count / threads;
    seg_scan<<<blocks, threads>>>(d, 32);
    cudaDeviceSynchronize();
    return 0;
}
`

// The same kernel without a launch, and one whose stride parameter sits
// beside a length: neither stride nor width becomes the buffers' length.
const strideKernels = `__global__ void seg_scan(float* v, int seg) {
    float x = v[threadIdx.x];
    x += __shfl_xor_sync(0xffffffff, x, 1, seg);
    v[threadIdx.x] = x;
}
__global__ void strided_copy(float* y, const float* x, int step, int rows) {
    for (int r = threadIdx.x; r < rows * step; r += step) y[r] = x[r];
}
`

// A shuffle width (or a loop's stride) is no length: the launch's literal
// is its arg, and the buffers' length is the name the launch's grid covers
// (its default the host's value), else a length the kernel takes, else N.
func TestScaffoldShuffleWidthIsNoLength(t *testing.T) {
	res, err := Manifest(Request{Name: "seg", SrcPath: "k.cu", Src: segScanProgram})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		"count: {default: 65536, min: 1}   # TODO: the length the launch's grid covers (count at line 17)",
		"{name: v, dtype: f32, shape: [count],",
		`grid: ["count / threads", 1, 1]   # from the launch at line 17`,
		"args: [v, 32]   # the kernel's parameters, in order; seg is 32 (the width of __shfl_up_sync), as the launch at line 17 passes it",
	}, []string{"shape: [seg]", "seg: {default"})
	checkNotesHaveTODOs(t, res)
	checkCompiles(t, res.Text, "k.cu", segScanProgram)

	res, err = Manifest(Request{Name: "seg", SrcPath: "k.cu", Src: strideKernels, Entries: []string{"seg_scan", "strided_copy"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		"{name: v, dtype: f32, shape: [N],", "args: [v, seg]",
		"{name: y, dtype: f32, shape: [rows],", "args: [y, x, step, rows]",
	}, []string{"shape: [seg]", "shape: [step"})
	checkNotesHaveTODOs(t, res)
	load(t, res.Text, "k.cu", strideKernels)
}

func TestNonSizeUse(t *testing.T) {
	for _, tc := range []struct{ src, name, want string }{
		{"__global__ void k(float* v, int w) { float x = __shfl_up_sync(0xffffffff, v[0], 1, w); }", "w", "the width of __shfl_up_sync"},
		{"__global__ void k(float* v, int o) { float x = __shfl_down_sync(0xffffffff, v[0], o); }", "o", "the lane offset of __shfl_down_sync"},
		{"__global__ void k(float* v, int w) { float x = __shfl_xor(v[0], 1, w); }", "w", "the width of __shfl_xor"},
		{"__global__ void k(float* v, int s, int n) { for (int i = 0; i < n; i += s) v[i] = 0; }", "s", "a loop's stride"},
		{"__global__ void k(float* v, int s, int n) { for (int i = 1; i < n; i <<= s) v[i] = 0; }", "s", "a loop's stride"},
		// a length: a bound, a shuffle's value
		{"__global__ void k(float* v, int s, int n) { for (int i = 0; i < n; i += s) v[i] = 0; }", "n", ""},
		{"__global__ void k(float* v, int n) { float x = __shfl_sync(0xffffffff, n, 0); v[0] = x; }", "n", ""},
	} {
		sigs := csrc.FindEntries(tc.src)
		c := newContext(tc.src, "cuda", sigs)
		body := bodyOf(c.toks, entryAt(c.toks, sigs[0]))
		if got := nonSizeUse(body, tc.name); got != tc.want {
			t.Errorf("%s: nonSizeUse(%s) = %q, want %q", tc.src, tc.name, got, tc.want)
		}
	}
}
