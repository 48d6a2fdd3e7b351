package scaffold

import (
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// An in-place block scan of ints beside a histogram of bin ids, as a
// user wrote them: the scan's data are values, the bins indices.
const scanAndBinsCUDA = `__global__ void block_scan(int* vals, int count) {
    __shared__ int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < count ? vals[i] : 0;
    s[threadIdx.x] = v;
    __syncthreads();
    for (int d = 1; d < blockDim.x; d *= 2) {
        int o = threadIdx.x >= d ? s[threadIdx.x - d] : 0;
        __syncthreads();
        s[threadIdx.x] += o;
        __syncthreads();
    }
    if (i < count) vals[i] = s[threadIdx.x];
}

__global__ void count_bins(const int* bins, unsigned* hist, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) atomicAdd(&hist[bins[i]], 1u);
}
`

// An integer array the kernel only sums and writes back is data (small
// values, no "indices" TODO); one that subscripts another array stays
// indices below 1024 with its TODO.
func TestScaffoldIntDataNotIndices(t *testing.T) {
	res, err := Manifest(Request{Name: "ints", SrcPath: "k.cu", Src: scanAndBinsCUDA, Entries: []string{"block_scan", "count_bins"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		`{name: vals, dtype: i32, shape: [count], init: "randint(0, 16)", inout: true}   # integer data (block_scan uses no element as an index): small values`,
		`{name: bins, dtype: i32, shape: [count], init: "randint(0, 1024)"}   # TODO: indices below 1024`,
	}, []string{"randint(0, 1024)\", inout"})
	checkNotesHaveTODOs(t, res)
	load(t, res.Text, "k.cu", scanAndBinsCUDA)
}

func TestUsedAsIndex(t *testing.T) {
	for _, tc := range []struct {
		src, name string
		want      bool
	}{
		{"__global__ void k(int* d, int n) { int v = d[threadIdx.x]; v += 1; d[threadIdx.x] = v; }", "d", false},
		{"__global__ void k(const int* w, float* y, const float* x) { int i = threadIdx.x; y[i] = x[i] * w[i]; }", "w", false},
		{"__global__ void k(const int* w, float* y) { int i = threadIdx.x; y[i] = (float)__ldg(&w[i]); }", "w", false},
		{"__global__ void k(const int* b, unsigned* h) { atomicAdd(&h[b[threadIdx.x]], 1u); }", "b", true},
		// through locals: the CSR row pointers bound j, which subscripts val
		{"__global__ void k(const int* rp, const float* val, float* y) { int r = blockIdx.x; int s = rp[r], e = rp[r + 1]; float a = 0; for (int j = s; j < e; ++j) a += val[j]; y[r] = a; }", "rp", true},
		// pointer arithmetic on another parameter: an embedding row
		{"__global__ void k(const int* tok, const float* wte, float* out, int C) { int ix = tok[blockIdx.x]; const float* row = wte + ix * C; out[threadIdx.x] = row[threadIdx.x]; }", "tok", true},
		// passed to a helper: not followed, kept an index
		{"__global__ void k(const int* g, float* y) { gather(y, g); }", "g", true},
		// y += x is no pointer arithmetic
		{"__global__ void k(const int* c, int* acc) { int v = c[threadIdx.x]; acc[0] += v; }", "c", false},
	} {
		sigs := csrc.FindEntries(tc.src)
		if len(sigs) != 1 {
			t.Fatalf("%s: %d entries", tc.src, len(sigs))
		}
		c := newContext(tc.src, "cuda", sigs)
		at := entryAt(c.toks, sigs[0])
		open := at
		for c.toks[open].Text != "{" {
			open++
		}
		body := c.toks[open+1 : csrc.Matching(c.toks, open)]
		if got := usedAsIndex(body, tc.name, sigs[0]); got != tc.want {
			t.Errorf("%s: usedAsIndex(%s) = %v, want %v", tc.src, tc.name, got, tc.want)
		}
	}
}
