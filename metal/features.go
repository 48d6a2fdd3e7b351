package metal

import "github.com/mltop/mltop/profiler"

// Features are the capabilities an Apple GPU gives the families' kernels:
// simdgroup_matrix (Apple7 family, M1 and later: every chip ParseChip
// recognises). Metal's grid limits are far beyond any plan's (2^32-1
// threadgroups per axis), so Metal sets no MaxGrid. DeviceInfo fills both;
// a backend that builds its DeviceInfo otherwise should call this.
func Features(chip Chip) []profiler.Feature {
	if chip.Number >= 1 {
		return []profiler.Feature{profiler.FeatureSimdgroupMatrix}
	}
	return nil
}
