package cuda

import "github.com/mltop/mltop/profiler"

// occupancyInput is what decides how many blocks fit on one SM.
type occupancyInput struct {
	Threads        int // per block
	Registers      int // per thread, as compiled
	SharedBytes    int // static + dynamic per block
	ReservedShared int // the driver's per-block reservation (1 KiB on sm_80+)
	DriverBlocks   int // cuOccupancyMaxActiveBlocksPerMultiprocessor's answer
}

// limiterFor explains the driver's answer: of each resource's own limit
// (profiler.UnitLimits) it names the tightest, or, where the table
// disagrees with the driver, the first whose own limit equals the driver's
// figure, if any. The count reported is always the driver's.
func limiterFor(dev profiler.DeviceInfo, in occupancyInput) string {
	block := profiler.Block{Threads: in.Threads, SharedBytes: in.SharedBytes, ReservedShared: in.ReservedShared, Registers: in.Registers}
	n, limiter := profiler.BlocksPerUnit(dev, block)
	if n == in.DriverBlocks {
		return limiter
	}
	for _, l := range profiler.UnitLimits(dev, block) {
		if l.Blocks == in.DriverBlocks {
			return l.Limiter
		}
	}
	return limiter
}
