package profiler

// The resources that can limit how many blocks (threadgroups) are resident
// on one unit at once: the names an Occupancy's Limiter takes.
const (
	LimitThreads   = "threads"   // the unit's thread slots, taken in whole warps
	LimitTGM       = "tgm"       // the unit's threadgroup (shared) memory
	LimitRegisters = "registers" // the unit's register file
	LimitGroups    = "groups"    // the unit's cap on resident blocks
	LimitUnknown   = "unknown"   // the device reports none of these limits
)

// Block is what one block (threadgroup) of a dispatch asks of a unit.
type Block struct {
	Threads     int // per block
	SharedBytes int // static + dynamic threadgroup (shared) memory per block
	// ReservedShared is shared memory the driver sets aside per resident
	// block on top of SharedBytes (CUDA on sm_80 and later: 1 KiB).
	ReservedShared int
	Registers      int // per thread, as compiled; 0 where not known
}

// UnitLimit is one resource's own limit on resident blocks per unit.
type UnitLimit struct {
	Limiter string // LimitThreads, LimitTGM, LimitRegisters or LimitGroups
	Blocks  int    // 0 where one block alone does not fit
}

// cudaRegisterUnit is CUDA's register allocation granule: a warp's
// registers are allocated in units of 256.
const cudaRegisterUnit = 256

// UnitLimits is each resource's own limit on how many blocks b fit on one
// unit of dev, in the order threads, tgm, registers, groups; a resource dev
// does not report (or b does not use) is left out. A block takes whole
// warps (of dev's SIMD width, 32 where unknown) of the unit's thread slots
// and, on CUDA, of its register file.
func UnitLimits(dev DeviceInfo, b Block) []UnitLimit {
	var lims []UnitLimit
	warp := dev.SIMDWidth
	if warp <= 0 {
		warp = 32
	}
	warps := (b.Threads + warp - 1) / warp
	if b.Threads > 0 && dev.MaxThreadsPerUnit > 0 {
		lims = append(lims, UnitLimit{LimitThreads, dev.MaxThreadsPerUnit / (warps * warp)})
	}
	if shared := b.SharedBytes + b.ReservedShared; shared > 0 && dev.TGMPerUnit > 0 {
		lims = append(lims, UnitLimit{LimitTGM, dev.TGMPerUnit / shared})
	}
	if b.Threads > 0 && b.Registers > 0 && dev.RegistersPerUnit > 0 {
		perBlock := b.Registers * b.Threads
		if dev.Backend == "cuda" {
			perWarp := (b.Registers*warp + cudaRegisterUnit - 1) / cudaRegisterUnit * cudaRegisterUnit
			perBlock = perWarp * warps
		}
		lims = append(lims, UnitLimit{LimitRegisters, dev.RegistersPerUnit / perBlock})
	}
	if dev.MaxGroupsPerUnit > 0 {
		lims = append(lims, UnitLimit{LimitGroups, dev.MaxGroupsPerUnit})
	}
	return lims
}

// BlocksPerUnit is how many blocks b fit on one unit (SM, GPU core) of dev
// at once and the resource that binds: the tightest of UnitLimits, the
// first in their order on a tie; 0 blocks when one block alone does not
// fit. Where dev reports no limit that applies, 1 block by LimitUnknown.
func BlocksPerUnit(dev DeviceInfo, b Block) (blocks int, limiter string) {
	lims := UnitLimits(dev, b)
	if len(lims) == 0 {
		return 1, LimitUnknown
	}
	best := lims[0]
	for _, l := range lims[1:] {
		if l.Blocks < best.Blocks {
			best = l
		}
	}
	return best.Blocks, best.Limiter
}

// StandInSMs is the stand-in GPU's SM count.
const StandInSMs = 132

// StandInGPU is the device assumed where none is known (`mltop check`, the
// CPU backend, which runs no GPU kernel): an H100 SXM's SMs and per-SM
// limits.
func StandInGPU() DeviceInfo {
	return DeviceInfo{Backend: "cuda", Name: "stand-in H100 SXM", Arch: "sm_90a", Units: StandInSMs, UnitName: "SM",
		TGMPerUnit: 228 << 10, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32, RegistersPerUnit: 64 << 10, SIMDWidth: 32}
}

// GPUOrStandIn is dev, or StandInGPU where dev reports no units of its own
// or is the CPU backend (standIn then says so).
func GPUOrStandIn(dev DeviceInfo) (gpu DeviceInfo, standIn bool) {
	if dev.Units <= 0 || dev.Backend == "cpu" {
		return StandInGPU(), true
	}
	return dev, false
}
