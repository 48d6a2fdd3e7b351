package cuda

import "github.com/mltop/mltop/profiler"

// MaxGrid is CUDA's limit on a grid's x, y and z extents (every compute
// capability mltop supports).
var MaxGrid = [3]int{1<<31 - 1, 65535, 65535}

// Features are the capabilities a device of compute capability
// major.minor gives the families' kernels: the CUDA sources themselves
// (FeatureCUDAKernels), mma.sync on f16 and bf16 operands and cp.async
// from sm_80 (the instructions the tensor-core and staged paths use), and
// thread-block clusters from sm_90.
func Features(major, minor int) []profiler.Feature {
	f := []profiler.Feature{profiler.FeatureCUDAKernels}
	cc := 10*major + minor
	if cc >= 80 {
		f = append(f, profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync)
	}
	if cc >= 90 {
		f = append(f, profiler.FeatureClusters)
	}
	return f
}
