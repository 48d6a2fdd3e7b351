package metal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Generation is what mltop knows about one Apple GPU generation's cores.
// Metal reports per-threadgroup limits but nothing per core, so resident
// groups per core come from this table.
type Generation struct {
	Family string // MTLGPUFamily name, e.g. "Apple7"
	Chips  string // the Mac chips of the family
	// TGMPerCore is the threadgroup (on-chip shared) memory of one core.
	TGMPerCore int
	// MaxThreadsPerCore is the most threads resident on one core (at the
	// lowest register use).
	MaxThreadsPerCore int
	// RegisterFileBytes per core (informational: Metal reports no registers
	// per thread, so the estimate cannot use it).
	RegisterFileBytes int
	// Confidence is "" when the numbers were measured for this generation,
	// "low" when they are carried over to a design that allocates on-chip
	// memory differently.
	Confidence string
	Source     string
}

// Sources:
//
// [mb] philipturner/metal-benchmarks, README "On-Chip Memory" table (commit
// 936d911): per core on Apple 7 and Apple 8 — Max Threads 768-3072
// (occupancy falls from 3072 to 768 as registers per thread grow), Register
// File 384 KB, Shared Memory 64 KB. The upper end of the threads range is
// the limit at low register use, which is what a table can say without
// per-thread register counts.
//
// Apple 9 (M3, A17 Pro) and later use "Dynamic Caching": registers,
// threadgroup memory and tile memory are carved out of one on-chip pool at
// run time (Apple, M3 launch material, October 2023), so no fixed per-core
// split exists. mltop keeps the Apple 7/8 numbers there as a rough guide and
// marks the estimate low-confidence; `device_limits` in a sweep YAML
// overrides the table.
var (
	genApple7 = Generation{Family: "Apple7", Chips: "M1, M1 Pro, M1 Max, M1 Ultra", TGMPerCore: 64 << 10, MaxThreadsPerCore: 3072, RegisterFileBytes: 384 << 10,
		Source: "table: philipturner/metal-benchmarks On-Chip Memory (Apple 7): 64 KB shared memory, up to 3072 threads per core"}
	genApple8 = Generation{Family: "Apple8", Chips: "M2, M2 Pro, M2 Max, M2 Ultra", TGMPerCore: 64 << 10, MaxThreadsPerCore: 3072, RegisterFileBytes: 384 << 10,
		Source: "table: philipturner/metal-benchmarks On-Chip Memory (Apple 8): 64 KB shared memory, up to 3072 threads per core"}
	genApple9 = Generation{Family: "Apple9", Chips: "M3, M4, M5 families", TGMPerCore: 64 << 10, MaxThreadsPerCore: 3072, RegisterFileBytes: 384 << 10, Confidence: "low",
		Source: "table: Apple 7/8 numbers carried over; M3 and later allocate on-chip memory dynamically (Dynamic Caching), so this is a rough estimate"}
)

// GenerationFor maps a chip number (1 for M1, 3 for M3, …) to its
// generation. M2 Pro/Max/Ultra are Apple8 like the M2 (MTLGPUFamilyApple8).
func GenerationFor(chip int) (Generation, bool) {
	switch {
	case chip == 1:
		return genApple7, true
	case chip == 2:
		return genApple8, true
	case chip >= 3:
		return genApple9, true
	}
	return Generation{}, false
}

// Chip identifies an Apple silicon GPU from what Metal reports.
type Chip struct {
	Number  int    // 1 for M1, 4 for M4; 0 when unknown
	Variant string // "", "Pro", "Max", "Ultra"
}

func (c Chip) String() string {
	if c.Number == 0 {
		return "unknown Apple GPU"
	}
	s := "M" + strconv.Itoa(c.Number)
	if c.Variant != "" {
		s += " " + c.Variant
	}
	return s
}

var (
	nameRE = regexp.MustCompile(`\bM(\d+)(?:\s+(Pro|Max|Ultra))?\b`)
	// MTLArchitecture.name is "applegpu_g<gen><variant>": gen 13 is M1
	// (g13g M1, g13s M1 Pro, g13c M1 Max, g13d M1 Ultra), 14 M2, 15 M3,
	// 16 M4, 17 M5. The variant letters follow the M1 pattern; phone
	// variants (p) map to the base chip's generation.
	archRE = regexp.MustCompile(`^applegpu_g(\d+)([a-z]?)`)
)

// ParseChip reads the device name ("Apple M1 Pro") and, when the name does
// not say, the architecture name ("applegpu_g13s").
func ParseChip(name, arch string) Chip {
	if m := nameRE.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Chip{Number: n, Variant: m[2]}
	}
	if m := archRE.FindStringSubmatch(strings.ToLower(arch)); m != nil {
		g, _ := strconv.Atoi(m[1])
		if g < 13 {
			return Chip{}
		}
		v := map[string]string{"s": "Pro", "c": "Max", "d": "Ultra"}[m[2]]
		return Chip{Number: g - 12, Variant: v}
	}
	return Chip{}
}

// SLCBytes is the system-level cache of a chip as publicly reported (M1
// 8 MB, Pro 24 MB, Max 48 MB, Ultra 96 MB; the M2–M4 tiers are reported at
// the same sizes). Only the cold-run flush size and DeviceInfo.CacheBytes
// depend on it; 0 when unknown.
func SLCBytes(c Chip) int64 {
	if c.Number == 0 {
		return 0
	}
	switch c.Variant {
	case "Pro":
		return 24 << 20
	case "Max":
		return 48 << 20
	case "Ultra":
		return 96 << 20
	}
	return 8 << 20
}

// DefaultFlushBytes is the cold-run flush buffer when the SLC size is unknown.
const DefaultFlushBytes = 96 << 20

// FlushBytes is the buffer a cold run touches before each rep: twice the
// SLC, so nothing of the previous rep's working set survives.
func FlushBytes(c Chip) int64 {
	if s := SLCBytes(c); s > 0 {
		return 2 * s
	}
	return DefaultFlushBytes
}

// Per-threadgroup limits every Apple GPU shares (Apple7 and later). The
// device's own figures (DeviceInfo) rule a run; these are for what is
// checked without a device (`mltop check`).
const (
	// MaxThreadsPerGroup is maxThreadsPerThreadgroup's width.
	MaxThreadsPerGroup = 1024
	// TGMPerGroup is maxThreadgroupMemoryLength; Metal has no opt-in
	// beyond it.
	TGMPerGroup = 32 << 10
)

// RawDevice is what the binding reads from an MTLDevice.
type RawDevice struct {
	Name             string
	Arch             string // MTLArchitecture.name (macOS 14+), "" before
	MaxTGMPerGroup   int    // maxThreadgroupMemoryLength
	MaxThreadsWidth  int    // maxThreadsPerThreadgroup.width
	WorkingSetBytes  int64  // recommendedMaxWorkingSetSize
	HasTimestampSet  bool   // counterSets contains "timestamp"
	StageBoundary    bool   // supportsCounterSampling:AtStageBoundary
	DispatchBoundary bool   // supportsCounterSampling:AtDispatchBoundary
	Cores            int    // IORegistry gpu-core-count, 0 when unknown
}

// DeviceInfo fills the profiler's device description from the raw device
// and the generation table.
func DeviceInfo(raw RawDevice) profiler.DeviceInfo {
	chip := ParseChip(raw.Name, raw.Arch)
	d := profiler.DeviceInfo{
		Backend:            "metal",
		Name:               raw.Name,
		Vendor:             "Apple",
		Arch:               raw.Arch,
		UnitName:           "core",
		TGMPerGroup:        raw.MaxTGMPerGroup,
		MaxThreadsPerGroup: raw.MaxThreadsWidth,
		SIMDWidth:          32,
		MemoryBytes:        raw.WorkingSetBytes,
		CacheBytes:         SLCBytes(chip),
		Timer:              NewTimerState(raw.HasTimestampSet, raw.StageBoundary).Name(),
		Features:           Features(chip),
	}
	d.Units = raw.Cores
	d.PeakBandwidth = PeakBandwidth(chip, raw.Cores)
	d.PeakFLOPS = PeakFLOPS(chip, raw.Cores)
	if d.Units == 0 {
		d.Notes = append(d.Notes, "GPU core count unknown (IORegistry gpu-core-count unreadable); occupancy is per core")
	}
	if g, ok := GenerationFor(chip.Number); ok {
		d.TGMPerUnit = g.TGMPerCore
		d.MaxThreadsPerUnit = g.MaxThreadsPerCore
		d.RegistersPerUnit = g.RegisterFileBytes / 4
		note := fmt.Sprintf("%s is %s; %s", chip, g.Family, g.Source)
		if g.Confidence != "" {
			note += " (confidence " + g.Confidence + ")"
		}
		d.Notes = append(d.Notes, note)
	} else {
		d.Notes = append(d.Notes, fmt.Sprintf("device %q (arch %q) is not in the occupancy table: set device_limits in the sweep to get an estimate", raw.Name, raw.Arch))
	}
	if t := NewTimerState(raw.HasTimestampSet, raw.StageBoundary); !t.Counters {
		d.Notes = append(d.Notes, t.Reason+"; timing uses command-buffer GPU times")
	}
	return d
}

// Occupancy estimates resident groups per core for a launch from the
// generation table and the compiled pipeline's attributes.
func Occupancy(dev profiler.DeviceInfo, d *profiler.Dispatch, attrs profiler.KernelAttrs) profiler.Occupancy {
	o := run.EstimateOccupancy(dev, d, attrs)
	chip := ParseChip(dev.Name, dev.Arch)
	g, ok := GenerationFor(chip.Number)
	if !ok {
		o.Confidence = "low"
		if o.Reason == "" {
			o.Source = "limits from device_limits or defaults; device not in the table"
		}
		return o
	}
	o.Source = g.Source
	o.Confidence = g.Confidence
	if attrs.MaxThreads > 0 && d.Threads() > attrs.MaxThreads {
		o.Available = false
		o.GroupsPerUnit = 0
		o.Reason = fmt.Sprintf("the pipeline allows %d threads per group (register pressure) but the dispatch asks for %d: it cannot launch", attrs.MaxThreads, d.Threads())
	}
	return o
}
