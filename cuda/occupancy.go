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

// limiterFor explains the driver's answer: it computes each resource's own
// limit and names the tightest (preferring one that equals the driver's
// figure when several tie). The count reported is always the driver's.
func limiterFor(dev profiler.DeviceInfo, in occupancyInput) string {
	type lim struct {
		name string
		n    int
	}
	warps := (in.Threads + 31) / 32
	var lims []lim
	if dev.MaxThreadsPerUnit > 0 && warps > 0 {
		lims = append(lims, lim{"threads", dev.MaxThreadsPerUnit / (warps * 32)})
	}
	if in.Registers > 0 && dev.RegistersPerUnit > 0 && warps > 0 {
		// Registers are allocated per warp in units of 256.
		perWarp := (in.Registers*32 + 255) / 256 * 256
		lims = append(lims, lim{"registers", dev.RegistersPerUnit / (perWarp * warps)})
	}
	if in.SharedBytes > 0 && dev.TGMPerUnit > 0 {
		lims = append(lims, lim{"tgm", dev.TGMPerUnit / (in.SharedBytes + in.ReservedShared)})
	}
	if dev.MaxGroupsPerUnit > 0 {
		lims = append(lims, lim{"groups", dev.MaxGroupsPerUnit})
	}
	if len(lims) == 0 {
		return "unknown"
	}
	best := lims[0]
	for _, l := range lims[1:] {
		if l.n < best.n || (l.n == best.n && l.n == in.DriverBlocks && best.n != in.DriverBlocks) {
			best = l
		}
	}
	// Where the table disagrees with the driver, name the resource whose
	// own limit equals the driver's answer, if any.
	if best.n != in.DriverBlocks {
		for _, l := range lims {
			if l.n == in.DriverBlocks {
				return l.name
			}
		}
	}
	return best.name
}
