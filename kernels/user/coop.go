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

// The stand-in device where none is known (`mltop check`, the CPU
// backend, which runs no user kernel): an H100 SXM's SMs and per-SM limits.
const (
	StandInSMs            = 132
	standInThreadsPerUnit = 2048
	standInSharedPerUnit  = 228 << 10
	standInBlocksPerUnit  = 32
	reservedSharedPerBlk  = 1 << 10 // the CUDA driver's per-block reservation (sm_80 and later)
)

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
func standIn(dev profiler.DeviceInfo) bool { return dev.Units <= 0 || dev.Backend == "cpu" }

// BlocksPerUnit is how many blocks of threads threads and sharedBytes of
// threadgroup memory fit on one SM of dev at once, by its thread,
// shared-memory and block limits (a limit dev does not report is the
// stand-in's); 0 when one block does not fit. Registers do not count.
func BlocksPerUnit(dev profiler.DeviceInfo, threads, sharedBytes int) int {
	threadsPerUnit, sharedPerUnit, blocks, reserved := dev.MaxThreadsPerUnit, dev.TGMPerUnit, dev.MaxGroupsPerUnit, 0
	if standIn(dev) {
		threadsPerUnit, sharedPerUnit, blocks = standInThreadsPerUnit, standInSharedPerUnit, standInBlocksPerUnit
	}
	if dev.Backend == "cuda" || standIn(dev) {
		reserved = reservedSharedPerBlk
	}
	n := 1 << 30
	if blocks > 0 {
		n = blocks
	}
	if threads > 0 && threadsPerUnit > 0 {
		warps := (threads + 31) / 32 // a block takes whole warps
		n = min(n, threadsPerUnit/(warps*32))
	}
	if sharedPerUnit > 0 && sharedBytes+reserved > 0 {
		n = min(n, sharedPerUnit/(sharedBytes+reserved))
	}
	if n == 1<<30 { // dev reports no limit at all
		n = 1
	}
	return n
}

// withDevice is e with the device values for a dispatch of pd's threads
// and threadgroup memory (names the manifest declares keep their values).
func withDevice(e map[string]any, dev profiler.DeviceInfo, pd *profiler.Dispatch) map[string]any {
	units := dev.Units
	if standIn(dev) {
		units = StandInSMs
	}
	vals := map[string]any{SMCount: units, MaxCoresident: units * BlocksPerUnit(dev, pd.Threads(), pd.TGMBytes())}
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
	return fmt.Sprintf("dispatch %s: %s and %s are a stand-in here (no GPU: an H100's %d SMs, 2048 threads, 228 KiB shared memory and 32 blocks per SM); on a GPU they are the device's", name, SMCount, MaxCoresident, StandInSMs)
}

// coopMetalError is the refusal of a cooperative dispatch on Metal.
func coopMetalError(name string) error {
	return fmt.Errorf("dispatch %s is `cooperative: true`, and Metal has no grid-wide barrier (no cooperative launch): run its CUDA source on a CUDA device, or split the kernel at the barrier into two dispatches", name)
}
