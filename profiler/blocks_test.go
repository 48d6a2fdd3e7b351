package profiler

import (
	"slices"
	"testing"
)

func TestBlocksPerUnit(t *testing.T) {
	h100 := DeviceInfo{Backend: "cuda", Name: "H100", Units: 132, TGMPerUnit: 228 << 10, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32, RegistersPerUnit: 64 << 10, SIMDWidth: 32}
	m3 := DeviceInfo{Backend: "metal", Name: "M3", Units: 10, TGMPerUnit: 32 << 10, MaxThreadsPerUnit: 1024, RegistersPerUnit: 64 << 10, SIMDWidth: 32}
	standIn := func(dev DeviceInfo) DeviceInfo {
		gpu, _ := GPUOrStandIn(dev)
		return gpu
	}
	const res = 1 << 10 // CUDA's per-block reservation
	for _, c := range []struct {
		name    string
		dev     DeviceInfo
		block   Block
		want    int
		limiter string
	}{
		{"threads", h100, Block{Threads: 256, ReservedShared: res}, 8, LimitThreads},
		{"warps: 200 threads take 7 warps", h100, Block{Threads: 200, ReservedShared: res}, 2048 / 224, LimitThreads},
		{"warps of the device's SIMD width", DeviceInfo{MaxThreadsPerUnit: 2048, SIMDWidth: 64}, Block{Threads: 96}, 16, LimitThreads},
		{"warps of 32 where the width is unknown", DeviceInfo{MaxThreadsPerUnit: 2048}, Block{Threads: 80}, 21, LimitThreads},
		{"shared memory", h100, Block{Threads: 128, SharedBytes: 70 << 10, ReservedShared: res}, 3, LimitTGM},
		{"shared memory with the reservation", h100, Block{Threads: 128, SharedBytes: 116000, ReservedShared: res}, 1, LimitTGM},
		{"zero shared: the reservation still takes room", DeviceInfo{MaxThreadsPerUnit: 2048, TGMPerUnit: 8 << 10}, Block{Threads: 32, ReservedShared: res}, 8, LimitTGM},
		{"zero shared, no reservation: no shared limit", m3, Block{Threads: 256}, 4, LimitThreads},
		{"registers in CUDA's 256-register warp granules", h100, Block{Threads: 128, Registers: 100, ReservedShared: res}, 4, LimitRegisters},
		{"registers exactly elsewhere", m3, Block{Threads: 128, Registers: 100}, 5, LimitRegisters},
		{"max blocks", h100, Block{Threads: 32, Registers: 16, ReservedShared: res}, 32, LimitGroups},
		{"one block does not fit", h100, Block{Threads: 128, SharedBytes: 300 << 10, ReservedShared: res}, 0, LimitTGM},
		{"zero threads: no thread or register limit", h100, Block{SharedBytes: 48 << 10, ReservedShared: res, Registers: 64}, 4, LimitTGM},
		{"zero threads, zero shared", DeviceInfo{MaxThreadsPerUnit: 2048, RegistersPerUnit: 64 << 10}, Block{Registers: 64}, 1, LimitUnknown},
		{"tie: threads before registers", h100, Block{Threads: 1024, Registers: 32, ReservedShared: res}, 2, LimitThreads},
		{"tie: tgm before registers", h100, Block{Threads: 128, Registers: 255, SharedBytes: 100000, ReservedShared: res}, 2, LimitTGM},
		{"no limits reported", DeviceInfo{Backend: "metal", Units: 10}, Block{Threads: 256}, 1, LimitUnknown},
		{"unknown device: the stand-in's limits", standIn(DeviceInfo{Backend: "cuda", Name: "mltop check"}), Block{Threads: 512, ReservedShared: res}, 4, LimitThreads},
		{"cpu: the stand-in's shared memory", standIn(DeviceInfo{Backend: "cpu", Units: 4}), Block{Threads: 128, SharedBytes: 100000, ReservedShared: res}, (228 << 10) / (100000 + res), LimitTGM},
		{"cpu: the stand-in's block cap", standIn(DeviceInfo{Backend: "cpu", Units: 4}), Block{Threads: 32}, 32, LimitGroups},
	} {
		n, limiter := BlocksPerUnit(c.dev, c.block)
		if n != c.want || limiter != c.limiter {
			t.Errorf("%s: BlocksPerUnit(%+v) = %d by %s, want %d by %s", c.name, c.block, n, limiter, c.want, c.limiter)
		}
	}
}

func TestUnitLimitsOrderAndOmissions(t *testing.T) {
	h100 := StandInGPU()
	got := UnitLimits(h100, Block{Threads: 128, SharedBytes: 20000, ReservedShared: 1 << 10, Registers: 255})
	want := []UnitLimit{{LimitThreads, 16}, {LimitTGM, (228 << 10) / 21024}, {LimitRegisters, 2}, {LimitGroups, 32}}
	if !slices.Equal(got, want) {
		t.Errorf("UnitLimits = %+v, want %+v", got, want)
	}
	// a device that reports only a thread limit, a block without registers
	if got := UnitLimits(DeviceInfo{MaxThreadsPerUnit: 1024}, Block{Threads: 64, SharedBytes: 4096}); !slices.Equal(got, []UnitLimit{{LimitThreads, 16}}) {
		t.Errorf("UnitLimits on a thread-limit-only device = %+v", got)
	}
}

func TestGPUOrStandIn(t *testing.T) {
	for _, c := range []struct {
		name    string
		dev     DeviceInfo
		standIn bool
	}{
		{"mltop check: no units", DeviceInfo{Backend: "cuda", Name: "mltop check"}, true},
		{"cpu backend", DeviceInfo{Backend: "cpu", Units: 16}, true},
		{"metal, core count unknown", DeviceInfo{Backend: "metal", MaxThreadsPerUnit: 1024}, true},
		{"a GPU", DeviceInfo{Backend: "cuda", Name: "H200", Units: 132}, false},
		{"a GPU reporting no limits", DeviceInfo{Backend: "metal", Units: 10}, false},
	} {
		gpu, standIn := GPUOrStandIn(c.dev)
		want := c.dev
		if c.standIn {
			want = StandInGPU()
		}
		if standIn != c.standIn || gpu.Name != want.Name || gpu.Units != want.Units {
			t.Errorf("%s: GPUOrStandIn = %s with %d units (stand-in %v), want %s (stand-in %v)", c.name, gpu.Name, gpu.Units, standIn, want.Name, c.standIn)
		}
	}
	if s := StandInGPU(); s.Units != 132 || s.MaxThreadsPerUnit != 2048 || s.TGMPerUnit != 228<<10 || s.MaxGroupsPerUnit != 32 {
		t.Errorf("the stand-in is no longer an H100 SXM: %+v", s)
	}
}
