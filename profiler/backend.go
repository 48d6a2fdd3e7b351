package profiler

import (
	"context"
	"fmt"
)

// DeviceInfo describes the device a backend drives: what families plan
// against and what the budget and occupancy panels hold numbers against.
type DeviceInfo struct {
	Backend            string            `json:"backend"` // "metal", "cuda", "cpu"
	Name               string            `json:"name"`
	Vendor             string            `json:"vendor"`
	Arch               string            `json:"arch,omitempty"` // "sm_90a", "applegpu_g13g", "amd64"
	Units              int               `json:"units"`          // SMs, GPU cores, CPU cores
	UnitName           string            `json:"unit_name"`      // "SM", "core"
	TGMPerGroup        int               `json:"tgm_per_group"`  // bytes a threadgroup may use (default, without opt-in)
	TGMPerGroupOptIn   int               `json:"tgm_per_group_optin,omitempty"`
	TGMPerUnit         int               `json:"tgm_per_unit"`
	MaxThreadsPerGroup int               `json:"max_threads_per_group"`
	MaxThreadsPerUnit  int               `json:"max_threads_per_unit"`
	MaxGroupsPerUnit   int               `json:"max_groups_per_unit,omitempty"`
	RegistersPerUnit   int               `json:"registers_per_unit,omitempty"`
	SIMDWidth          int               `json:"simd_width"`
	MemoryBytes        int64             `json:"memory_bytes"`
	CacheBytes         int64             `json:"cache_bytes"` // last-level cache (L2 / SLC / L3)
	PeakFLOPS          map[DType]float64 `json:"peak_flops,omitempty"`
	PeakBandwidth      float64           `json:"peak_bandwidth,omitempty"` // bytes/s
	MeasuredFLOPS      map[DType]float64 `json:"measured_flops,omitempty"`
	MeasuredBandwidth  float64           `json:"measured_bandwidth,omitempty"`
	Timer              string            `json:"timer"` // default timer: "metal-counters", "cuda-event", "wall-clock"
	// LocalReserve is the local memory per thread (register spills, local
	// arrays) reserved when the backend opened (CUDA); 0: none, or not known.
	LocalReserve int `json:"local_reserve,omitempty"`
	// MaxGrid is the most threadgroups a dispatch may have along x, y, z;
	// 0 means no limit the families need to respect.
	MaxGrid [3]int `json:"max_grid,omitempty"`
	// Features are the device's capabilities that kernels choose paths by
	// (families ask these, never the backend's name).
	Features []Feature `json:"features,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
}

// KernelAttrs are what the compiler reports about a compiled kernel. Zero
// means "not reported by this platform".
type KernelAttrs struct {
	StaticTGM      int `json:"static_tgm"`
	MaxThreads     int `json:"max_threads"` // Metal: maxTotalThreadsPerThreadgroup (drops under register pressure)
	ExecutionWidth int `json:"execution_width,omitempty"`
	Registers      int `json:"registers,omitempty"` // per thread
	SpillBytes     int `json:"spill_bytes,omitempty"`
}

// Kernel is a compiled entry point.
type Kernel interface {
	Attrs() KernelAttrs
}

// Buffer is device memory.
type Buffer interface {
	Size() int64
}

// Launch binds a dispatch to compiled code and buffers.
type Launch struct {
	Dispatch *Dispatch
	Kernel   Kernel   // nil for a zero-fill dispatch
	Args     []Buffer // in Dispatch.Args order
	Zero     Buffer   // the buffer a zero-fill dispatch clears
}

// Timing is what Backend.Time returns: Samples[rep][dispatch] in nanoseconds.
type Timing struct {
	Samples [][]float64
	Timer   string // the timer actually used (Metal may fall back)
	// SMClockMHz is the clock the GPU's cores ran at around these samples,
	// measured on the GPU (cycles over nanoseconds), or 0 where the backend
	// cannot measure it.
	SMClockMHz float64
	// Cache is the cache mode the samples were taken in when it is not
	// the one asked: CacheFlush for a backend whose one flush is not
	// known to leave clean or dirty lines. "" means the mode asked.
	Cache CacheMode
}

// RangeDownloader is a Backend that reads parts of a buffer: dsts[i]
// receives the bytes at offsets[i]. Verification uses it to read only the
// elements it checks (256 rows of an output of millions), instead of the
// whole buffer.
type RangeDownloader interface {
	DownloadRanges(b Buffer, offsets []int64, dsts [][]byte) error
}

// Filler is a Backend that sets every byte of a buffer on the device,
// instead of uploading a host buffer of that value: outputs are poisoned
// and scratch zeroed before every spec.
type Filler interface {
	Fill(b Buffer, value byte) error
}

// Copier is a Backend that copies one buffer into another of the same
// size on the device: the runner keeps a device copy of a shape's inputs
// and restores them before each spec instead of uploading them again.
type Copier interface {
	Copy(dst, src Buffer) error
}

// RunTimer is a Backend that times its untimed runs on the device.
// RunTimed does what Run does (the launches once, in order, and waits)
// and returns how long the device spent on them, in seconds: from the
// device starting the first launch to it finishing the last one (CUDA: an
// event before and one after, on the stream Run uses; Metal: the command
// buffer's GPUStartTime to GPUEndTime; CPU: the wall clock around the Go
// run). It adds no synchronisation to Run's. The runner counts it as the
// spec's Phases.VerifyGPU, the device's share of the verification.
type RunTimer interface {
	RunTimed(launches []Launch) (seconds float64, err error)
}

// CheckRanges validates ranges against a buffer of size bytes.
func CheckRanges(size int64, offsets []int64, dsts [][]byte) error {
	if len(offsets) != len(dsts) {
		return fmt.Errorf("%d offsets for %d destinations", len(offsets), len(dsts))
	}
	for i, off := range offsets {
		if off < 0 || off+int64(len(dsts[i])) > size {
			return fmt.Errorf("range %d..%d is outside the %d-byte buffer", off, off+int64(len(dsts[i])), size)
		}
	}
	return nil
}

// Backend runs plans on one device. Keep it this small.
type Backend interface {
	Info() DeviceInfo
	Compile(p Program) (Kernel, error)
	Alloc(bytes int64) (Buffer, error)
	Free(b Buffer)
	Upload(b Buffer, src []byte) error
	Download(b Buffer, dst []byte) error
	// Run executes the launches once, in order, and waits.
	Run(launches []Launch) error
	// Time runs the launches reps times, preparing the last-level cache
	// before each as mode says (the preparation is not timed). A backend
	// with one way to flush uses it for cold and dirty alike and says so
	// in Timing.Cache.
	Time(launches []Launch, reps int, mode CacheMode) (Timing, error)
	// Occupancy estimates or asks how many groups of this launch fit per unit.
	Occupancy(l Launch) Occupancy
	Close() error
}

// Interruptible is a Backend whose launches can be cut short: once the
// context given to SetContext is done, a launch in flight stops between
// threadgroups and Run/Time return the context's error (context.Canceled).
// The runner sets it for each spec, so ctrl-C ends a long CPU run within a
// threadgroup instead of after the whole launch. A GPU launch cannot be
// stopped midway; GPU backends need not implement it.
type Interruptible interface {
	SetContext(ctx context.Context)
}

// Feature is a device capability a kernel path needs.
type Feature string

const (
	// FeatureMMAF16 and FeatureMMABF16: warp-level tensor-core MMA on f16 /
	// bf16 operands with f32 accumulation (CUDA mma.sync, sm_80 and later),
	// which the CUDA kernels' tensor-core paths use.
	FeatureMMAF16  Feature = "mma_f16"
	FeatureMMABF16 Feature = "mma_bf16"
	// FeatureCPAsync: asynchronous global→shared copies (cp.async, sm_80+).
	FeatureCPAsync Feature = "cp_async"
	// FeatureClusters: thread-block clusters with distributed shared memory (sm_90+).
	FeatureClusters Feature = "clusters"
	// FeatureSimdgroupMatrix: Metal's simdgroup_matrix 8×8 MMA (Apple7 / M1 and later).
	FeatureSimdgroupMatrix Feature = "simdgroup_matrix"
	// FeatureCUDAKernels: the device runs the families' CUDA C++ sources, so
	// paths written only in CUDA (no Metal or Go twin yet) are available.
	FeatureCUDAKernels Feature = "cuda_kernels"
)

// Has reports whether the device has feature f.
func (d DeviceInfo) Has(f Feature) bool {
	for _, x := range d.Features {
		if x == f {
			return true
		}
	}
	return false
}

// DeviceLimitsYAML overrides what the backend reports (Metal's occupancy
// table is an estimate; a user who knows better sets it here).
type DeviceLimitsYAML struct {
	TGMPerGroup       *int `yaml:"tgm_per_group"`
	TGMPerUnit        *int `yaml:"tgm_per_unit"`
	MaxThreadsPerUnit *int `yaml:"max_threads_per_unit"`
	MaxGroupsPerUnit  *int `yaml:"max_groups_per_unit"`
}

// Apply returns dev with the overrides set.
func (l *DeviceLimitsYAML) Apply(dev DeviceInfo) DeviceInfo {
	if l == nil {
		return dev
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&dev.TGMPerGroup, l.TGMPerGroup)
	set(&dev.TGMPerUnit, l.TGMPerUnit)
	set(&dev.MaxThreadsPerUnit, l.MaxThreadsPerUnit)
	set(&dev.MaxGroupsPerUnit, l.MaxGroupsPerUnit)
	dev.Notes = append(dev.Notes, "device limits overridden by the sweep file")
	return dev
}
