package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const forListsRefCU = `__global__ void scale_ref(const float* x, float* y, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
`

const forListsRefYAML = `name: t_for_lists_ref
sources: {cuda: k.cu}
dims:
  N: {default: 1000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: scale_ref, grid: ["cdiv(N, 128)"], threads: [128], args: [x, y, N, 2.0]}
check: none
`

// The multi-tensor-apply shaped kernel (a class template of lists by
// value, an empty functor, a pack with an enum) runs and matches a plain
// reference; the twin whose enum switches the work off and the one
// giving another scale are caught as mismatches. Skips without a CUDA
// driver.
func TestPackAndListsOnCUDA(t *testing.T) {
	cases := []struct {
		name, args string
		want       profiler.Status
	}{
		{"right", forListsArgs, profiler.StatusOK},
		{"switched off", strings.Replace(forListsArgs, ", 1]", ", 0]", 1), profiler.StatusMismatch},
		{"other scale", strings.Replace(forListsArgs, "2.0", "3.0", 1), profiler.StatusMismatch},
	}
	var twins []cudaTwin
	for _, c := range cases {
		y := strings.Replace(strings.Replace(forListsYAML, "ENTRY", forListsEntry, 1), "ARGS", c.args, 1)
		y = strings.Replace(y, "check: none", "check: {kernel: ref/kernel.yaml}", 1)
		y = strings.Replace(y, "t_for_lists", "t_for_lists_"+strings.ReplaceAll(c.name, " ", "_"), 1)
		files := map[string]string{"kernel.yaml": y, "k.cu": forListsCU, "ref/kernel.yaml": forListsRefYAML, "ref/k.cu": forListsRefCU}
		twins = append(twins, loadCUDATwin(t, c.name, files, profiler.F32, c.want))
	}
	runTwinsOnCUDA(t, twins, profiler.StopRule{Noise: 0.05, MinSamples: 5, MinTime: 0.01, MaxTime: 0.2})
}
