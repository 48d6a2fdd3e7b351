package run

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// HostMemory says how many bytes of host memory this process can still
// allocate and where the figure comes from ("MemAvailable in /proc/meminfo",
// "cgroup memory.max", "hw.memsize"); 0 means unknown (no host check).
// Tests replace it.
var HostMemory = hostMemory

// MemoryNeed is what running a plan allocates, by part.
type MemoryNeed struct {
	Device  int64 // the plan's buffers on the device
	Inputs  int64 // float32 copies of the generated inputs (kept for the reference)
	Outputs int64 // float32 copies of the outputs read back for checking
	Staging int64 // the largest encoded buffer, uploaded or downloaded at once
	Flush   int64 // the CPU backend's cache-flush buffer (cold runs)
	Unified bool  // device buffers live in host memory (CPU backend)
}

// Host is the host memory the plan needs.
func (m MemoryNeed) Host() int64 {
	n := m.Inputs + m.Outputs + m.Staging + m.Flush
	if m.Unified {
		n += m.Device
	}
	return n
}

func (m MemoryNeed) parts() string {
	var p []string
	add := func(name string, n int64) {
		if n > 0 {
			p = append(p, name+" "+units.Bytes(n))
		}
	}
	if m.Unified {
		add("buffers", m.Device)
	}
	add("input copies", m.Inputs)
	add("output copies", m.Outputs)
	add("staging", m.Staging)
	add("flush buffer", m.Flush)
	return strings.Join(p, ", ")
}

// NeedOf sizes a plan on a device before anything is allocated.
func NeedOf(plan *profiler.Plan, dev profiler.DeviceInfo, mode profiler.CacheMode) MemoryNeed {
	m := MemoryNeed{Device: plan.MemoryBytes(), Unified: dev.Backend == "cpu"}
	for _, b := range plan.Buffers {
		switch b.Init {
		case profiler.InitNormal, profiler.InitUniform, profiler.InitInts, profiler.InitData:
			m.Inputs += 4 * b.Elems
		}
		if b.Role.Checked() {
			m.Outputs += 4 * b.Elems
		}
		m.Staging = max(m.Staging, b.Bytes())
	}
	if dev.Backend == "cpu" && mode != profiler.CacheHot {
		m.Flush = min(2*dev.CacheBytes, 1<<30, max(dev.MemoryBytes/8, 64<<20))
	}
	return m
}

// CheckFit refuses a plan that cannot fit in device or host memory, before
// anything is allocated: a Go program that runs out of memory dies with a
// fatal error no recover can catch, taking a whole sweep with it.
func CheckFit(plan *profiler.Plan, dev profiler.DeviceInfo, s profiler.Spec, mode profiler.CacheMode) error {
	for _, b := range plan.Buffers {
		if b.Elems <= 0 {
			return fmt.Errorf("buffer %s has %d elements: every dim must be positive", b.Name, b.Elems)
		}
	}
	need := NeedOf(plan, dev, mode)
	if !need.Unified && dev.MemoryBytes > 0 && float64(need.Device) > 0.9*float64(dev.MemoryBytes) {
		return fmt.Errorf("needs %s of device memory (%d buffers) but %s has %s (90%% usable): %s", units.Bytes(need.Device), len(plan.Buffers), dev.Name, units.Bytes(dev.MemoryBytes), reduceHint(s))
	}
	avail, source := HostMemory()
	if avail <= 0 {
		return nil
	}
	host := need.Host()
	if float64(host) > 0.9*float64(avail) {
		// Memory the Go heap holds but no longer uses (the last spec's
		// buffers) is available once returned to the system.
		debug.FreeOSMemory()
		avail, source = HostMemory()
	}
	if float64(host) > 0.9*float64(avail) {
		return fmt.Errorf("needs %s of host memory (%s), %s available (%s; 90%% usable): %s", units.Bytes(host), need.parts(), units.Bytes(avail), source, reduceHint(s))
	}
	return nil
}

// CheckMemory is CheckFit for a cold run of an unnamed spec.
func CheckMemory(plan *profiler.Plan, dev profiler.DeviceInfo) error {
	return CheckFit(plan, dev, profiler.Spec{}, profiler.CacheCold)
}

// reduceHint names the spec's largest dims.
func reduceHint(s profiler.Spec) string {
	if len(s.Dims) == 0 {
		return "reduce the dims"
	}
	names := make([]string, 0, len(s.Dims))
	for k := range s.Dims {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if s.Dims[a] != s.Dims[b] {
			return s.Dims[b] - s.Dims[a]
		}
		return strings.Compare(a, b)
	})
	if len(names) > 2 {
		names = names[:2]
	}
	for i, n := range names {
		names[i] = fmt.Sprintf("%s=%d", n, s.Dims[n])
	}
	return "reduce " + strings.Join(names, " or ")
}

// OutOfMemory says whether a process's last words are those of a Go
// program (or the kernel) out of memory, and returns the line that says so.
func OutOfMemory(lastWords string) (string, bool) {
	for line := range strings.SplitSeq(lastWords, "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "out of memory") || strings.Contains(l, "cannot allocate memory") {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}
