package user

import (
	"fmt"
	"maps"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// Device values: names a dispatch's grid and scalar args may use so that
// a grid can be written to fit the device, as a persistent or grid-sync
// kernel's launcher computes it (numBlocksPerSm × multiProcessorCount).
const (
	// SMCount is the device's SMs (CUDA) or GPU cores (Metal).
	SMCount = "sm_count"
	// MaxCoresident is the most blocks of this dispatch (its threads and
	// threadgroup memory) that are resident on the whole device at once:
	// sm_count × blocks per SM, counting threads, shared memory and the
	// block limit. Registers are known only once compiled; where they bind
	// tighter, a cooperative launch is refused with the driver's figure.
	MaxCoresident = "max_coresident"
)

// DeviceNames are the device values, in the order the docs list them.
var DeviceNames = []string{SMCount, MaxCoresident}

// StandInSMs is the stand-in device's SMs (profiler.StandInGPU): the
// device values where none is known (`mltop check`, the CPU backend, which
// runs no user kernel).
const StandInSMs = profiler.StandInSMs

// reservedSharedPerBlk is the CUDA driver's per-block shared memory
// reservation (sm_80 and later), which a plan made without a driver assumes.
const reservedSharedPerBlk = 1 << 10

// deviceVars is vars with the device values added, unless the manifest
// declares a name of its own (a dim called sm_count stays the dim).
func deviceVars(vars expr.Vars) expr.Vars {
	out := maps.Clone(vars)
	for _, n := range DeviceNames {
		if _, taken := out[n]; !taken {
			out[n] = expr.Int
		}
	}
	return out
}

// standIn says whether dev reports no units of its own, so the device
// values are the stand-in's.
func standIn(dev profiler.DeviceInfo) bool {
	_, standIn := profiler.GPUOrStandIn(dev)
	return standIn
}

// BlocksPerUnit is how many blocks of threads threads and sharedBytes of
// threadgroup memory fit on one SM of dev at once (profiler.BlocksPerUnit),
// on the stand-in where dev reports no units, with the CUDA driver's
// per-block reservation on CUDA; 0 when one block does not fit, 1 where dev
// reports no limit. Registers do not count: they are known only once
// compiled.
func BlocksPerUnit(dev profiler.DeviceInfo, threads, sharedBytes int) int {
	dev, _ = profiler.GPUOrStandIn(dev)
	b := profiler.Block{Threads: threads, SharedBytes: sharedBytes}
	if dev.Backend == "cuda" {
		b.ReservedShared = reservedSharedPerBlk
	}
	n, _ := profiler.BlocksPerUnit(dev, b)
	return n
}

// Coresident is max_coresident for pd on dev: the most blocks of pd that
// are resident on the whole device (the stand-in where dev reports no
// units) at once.
func Coresident(dev profiler.DeviceInfo, pd *profiler.Dispatch) int {
	gpu, _ := profiler.GPUOrStandIn(dev)
	return gpu.Units * BlocksPerUnit(dev, pd.Threads(), pd.TGMBytes())
}

// withDevice is e with the device values for a dispatch of pd's threads
// and threadgroup memory (names the manifest declares keep their values).
func withDevice(e map[string]any, dev profiler.DeviceInfo, pd *profiler.Dispatch) map[string]any {
	gpu, _ := profiler.GPUOrStandIn(dev)
	vals := map[string]any{SMCount: gpu.Units, MaxCoresident: Coresident(dev, pd)}
	out := maps.Clone(e)
	for n, v := range vals {
		if _, declared := out[n]; !declared {
			out[n] = v
		}
	}
	return out
}

// usesDevice says whether a dispatch's grid or scalar args read a device value.
func (d udisp) usesDevice(f *Family) bool {
	var ps []*expr.Program
	ps = append(ps, d.grid[:]...)
	for _, a := range d.args {
		if a.p != nil {
			ps = append(ps, a.p)
		}
	}
	for _, p := range ps {
		for _, n := range p.Names() {
			if _, declared := f.vars[n]; !declared && (n == SMCount || n == MaxCoresident) {
				return true
			}
		}
	}
	return false
}

// StandInNote says that dispatch name's device values are the stand-in's
// (mltop check, the CPU backend): a plan note, and a check note.
func StandInNote(name string) string {
	g := profiler.StandInGPU()
	return fmt.Sprintf("dispatch %s: %s and %s are a stand-in here (no GPU: an H100's %d SMs, %d threads, %d KiB shared memory and %d blocks per SM); on a GPU they are the device's",
		name, SMCount, MaxCoresident, g.Units, g.MaxThreadsPerUnit, g.TGMPerUnit>>10, g.MaxGroupsPerUnit)
}

// coopMetalError is the refusal of a cooperative dispatch on Metal.
func coopMetalError(name string) error {
	return fmt.Errorf("dispatch %s is `cooperative: true`, and Metal has no grid-wide barrier (no cooperative launch): run its CUDA source on a CUDA device, or split the kernel at the barrier into two dispatches", name)
}
