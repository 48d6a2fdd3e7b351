package kernels

import "github.com/mltop/mltop/profiler"

// Compile-time checks that the families satisfy the interface.
var (
	_ profiler.Family = AttnFwd{}
	_ profiler.Family = SoftmaxBwd{}
)

func init() {
	profiler.Register(AttnFwd{})
	profiler.Register(SoftmaxBwd{})
}
