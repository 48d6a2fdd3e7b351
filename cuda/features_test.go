package cuda

import (
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestFeaturesByComputeCapability(t *testing.T) {
	cases := []struct {
		major, minor int
		has, lacks   []profiler.Feature
	}{
		{7, 5, []profiler.Feature{profiler.FeatureCUDAKernels}, []profiler.Feature{profiler.FeatureMMABF16, profiler.FeatureCPAsync, profiler.FeatureClusters}},
		{8, 0, []profiler.Feature{profiler.FeatureMMAF16, profiler.FeatureMMABF16, profiler.FeatureCPAsync}, []profiler.Feature{profiler.FeatureClusters}},
		{8, 9, []profiler.Feature{profiler.FeatureCPAsync}, []profiler.Feature{profiler.FeatureClusters}},
		{9, 0, []profiler.Feature{profiler.FeatureClusters, profiler.FeatureMMABF16}, nil},
		{12, 0, []profiler.Feature{profiler.FeatureClusters, profiler.FeatureCUDAKernels}, []profiler.Feature{profiler.FeatureSimdgroupMatrix}},
	}
	for _, c := range cases {
		d := profiler.DeviceInfo{Features: Features(c.major, c.minor)}
		for _, f := range c.has {
			if !d.Has(f) {
				t.Errorf("sm_%d%d lacks %s", c.major, c.minor, f)
			}
		}
		for _, f := range c.lacks {
			if d.Has(f) {
				t.Errorf("sm_%d%d has %s", c.major, c.minor, f)
			}
		}
	}
}
