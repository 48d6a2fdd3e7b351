package scaffold

import (
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// TestTicketCounter: an atomic whose result is compared with gridDim (the
// last block) makes a ticket counter; atomics whose result is unused
// (a histogram) or used as an index (stream compaction) do not.
func TestTicketCounter(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"unsigned int t = atomicAdd(count, 1); last = (t == gridDim.x - 1);", true},
		{"unsigned int t = atomicAdd(&count[0], 1u);\nif (t + 1 == gridDim.x * gridDim.y) { *count = 0; }", true},
		{"last = atomicInc(&count, gridDim.x) == gridDim.x - 1;", true},
		{"if (atomicAdd(count + blockIdx.y, 1) == gridDim.x - 1) { count[blockIdx.y] = 0; }", true},
		{"int t; t = atomicAdd(count, 1); if (t == gridDim.x - 1) finish();", true},
		{"atomicAdd(&count[bin], 1);", false},                                   // a histogram: an output
		{"int pos = atomicAdd(count, 1); out[pos] = v;", false},                 // compaction: the count is an output
		{"unsigned int t = atomicAdd(other, 1); last = t == gridDim.x;", false}, // another buffer's ticket
		{"unsigned int t = atomicAdd(counts, 1); last = t == gridDim.x;", false},
	} {
		toks := csrc.Tokenize("{" + tc.body + "}")
		if got := ticketCounter(toks[1:len(toks)-1], "count"); got != tc.want {
			t.Errorf("%q: ticket counter %v, want %v", tc.body, got, tc.want)
		}
	}
}

// ticketProgram is a "last block" reduction in two spellings: a counter
// the kernel takes as a parameter, and a __device__ global the host resets
// with cudaMemcpyToSymbol.
const ticketProgram = `#include <cuda_runtime.h>
__device__ unsigned int retirementCount = 0;

__global__ void reduce_param(const float* in, float* partial, float* out, unsigned int* counter, int N) {
    __shared__ bool amLast;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = i < N ? in[i] : 0.0f;
        __threadfence();
        unsigned int ticket = atomicAdd(counter, 1);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast && threadIdx.x == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; b++) t += partial[b];
        out[0] = t;
        *counter = 0;
    }
}

__global__ void reduce_global(const float* in, float* partial, float* out, int N) {
    __shared__ bool amLast;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = i < N ? in[i] : 0.0f;
        __threadfence();
        amLast = atomicInc(&retirementCount, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (amLast && threadIdx.x == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; b++) t += partial[b];
        out[0] = t;
        retirementCount = 0;
    }
}

__global__ void histogram(const int* in, unsigned int* bins, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&bins[in[i] & 255], 1u);
}

int main() {
    unsigned int zero = 0;
    cudaMemcpyToSymbol(retirementCount, &zero, sizeof(zero));
    return 0;
}
`

// TestScaffoldTicketCounter: a ticket counter parameter becomes a
// one-element scratch buffer (not an output), a ticket-counter global the
// host resets gets zeros (not random values), and a histogram's bins stay
// compared (inout). The manifest loads.
func TestScaffoldTicketCounter(t *testing.T) {
	res, err := Manifest(Request{Name: "tickets", SrcPath: "sum.cu", Src: ticketProgram, Entries: []string{"reduce_param", "reduce_global", "histogram"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		"- {name: counter, dtype: u32, shape: [1], scratch: true}   # TODO: a ticket counter",
		`- {name: retirementCount, symbol: true, dtype: u32, shape: [1], init: "zeros"}`,
		"TODO: a ticket counter the host resets (cudaMemcpyToSymbol at line 46)",
		"- {name: bins, dtype: u32, shape: [N], init: \"randint(0, 16)\", inout: true}", // compared, unlike a ticket counter
	}, []string{"name: counter, dtype: i32, shape: [N]", "randint(0, 1024)\"}   # `__device__ unsigned int retirementCount"})
	checkNotesHaveTODOs(t, res)
	load(t, res.Text, "sum.cu", ticketProgram)
}
