package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// lastBlockSumCU is y[0] += sum(x) as llm.c's layernorm_backward_kernel10
// finishes: one float* scratch whose first word is a block counter and
// whose rest holds the per-block partial sums; the last block to take a
// ticket adds them up. The counter must be 0 at every launch.
const lastBlockSumCU = `#include <cuda_runtime.h>

__global__ void last_block_sum(const float* x, float* y, float* scratch, int N) {
    __shared__ float sums[1024];
    __shared__ bool last;
    unsigned int* count = (unsigned int*)scratch;
    float* partials = scratch + 1;
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        s += x[i];
    }
    sums[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float mine = 0.0f;
        for (int k = 0; k < blockDim.x; k++) {
            mine += sums[k];
        }
        partials[blockIdx.x] = mine;
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) {
            total += ((volatile float*)partials)[b];
        }
        y[0] += total;
    }
}

int main() { return 0; }
`

const lastBlockSumYAML = `name: t_cuda_last_block_sum
sources: {cuda: k.cu}
dtypes: [f32]
knobs:
  WG: {values: [128, 256], default: 128}
dims:
  N: {default: 100000}
  blocks: {default: 40}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [1], inout: true, init: "normal(0, 1)", tol: {atol: 0.05, rtol: 1e-4}}
  - {name: scratch, dtype: f32, shape: ["1 + blocks"], scratch: true}
dispatches:
  - {entry: last_block_sum, grid: [blocks], threads: [WG], args: [x, y, scratch, N]}
check: {kernel: naive/kernel.yaml}
`

const naiveSumCU = `__global__ void naive_sum(const float* x, float* y, int N) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < N; i++) {
            total += x[i];
        }
        y[0] += total;
    }
}
`

const naiveSumCUYAML = `name: t_cuda_naive_sum
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  N: {default: 100000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [1], inout: true, init: "normal(0, 1)"}
dispatches:
  - {entry: naive_sum, grid: [1], threads: [1], args: [x, y, N]}
check: none
`

// The llm.c-style scratch (counter + partials in one float buffer) on a
// CUDA GPU with the real Runner: right with `scratch: true` through
// warm-up, timing and the check after it; the same buffer as a plain
// zero-initialised input is kept across launches, and the check after
// timing catches it. Skips without a CUDA driver.
func TestScratchCounterOnCUDA(t *testing.T) {
	const scratch = `  - {name: scratch, dtype: f32, shape: ["1 + blocks"], scratch: true}`
	cases := []struct {
		name, to  string
		want      profiler.Status
		wantError string
	}{
		{"scratch", scratch, profiler.StatusOK, ""},
		{"kept across launches", `  - {name: scratch, dtype: f32, shape: ["1 + blocks"], init: zeros}`, profiler.StatusMismatch, "wrong after the timed launches"},
	}
	var twins []cudaTwin
	for _, c := range cases {
		y := strings.Replace(lastBlockSumYAML, scratch, c.to, 1)
		y = strings.Replace(y, "t_cuda_last_block_sum", "t_cuda_last_block_sum_"+strings.ReplaceAll(c.name, " ", "_"), 1)
		tw := loadCUDATwin(t, c.name, map[string]string{"kernel.yaml": y, "k.cu": lastBlockSumCU,
			"naive/kernel.yaml": naiveSumCUYAML, "naive/k.cu": naiveSumCU}, profiler.F32, c.want)
		tw.check = func(t *testing.T, res profiler.Result) {
			if res.Stats.N < 20 {
				t.Errorf("%d samples: the test needs many launches", res.Stats.N)
			}
			if !strings.Contains(res.Error, c.wantError) {
				t.Errorf("error %q, want it to say %q", res.Error, c.wantError)
			}
		}
		twins = append(twins, tw)
	}
	runTwinsOnCUDA(t, twins, profiler.StopRule{Noise: 0.05, MinSamples: 20, MinTime: 0.01, MaxTime: 0.2})
}
