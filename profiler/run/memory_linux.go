package run

import (
	"os"
	"strconv"
	"strings"
)

// hostMemory is MemAvailable from /proc/meminfo, or the room left under
// the cgroup's memory.max when that is smaller.
func hostMemory() (int64, string) {
	avail, source := int64(0), ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		avail = memAvailable(string(data))
		source = "MemAvailable in /proc/meminfo"
	}
	if room, ok := cgroupRoom(readTrim("/sys/fs/cgroup/memory.max"), readTrim("/sys/fs/cgroup/memory.current")); ok && (avail == 0 || room < avail) {
		avail, source = room, "cgroup memory.max less memory.current"
	}
	return avail, source
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// memAvailable reads "MemAvailable:  1234 kB" from /proc/meminfo text.
func memAvailable(meminfo string) int64 {
	for line := range strings.SplitSeq(meminfo, "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n <<= 10
		}
		return n
	}
	return 0
}

// cgroupRoom is memory.max less memory.current ("max" means no limit).
func cgroupRoom(max, current string) (int64, bool) {
	if max == "" || max == "max" {
		return 0, false
	}
	limit, err := strconv.ParseInt(max, 10, 64)
	if err != nil {
		return 0, false
	}
	used, _ := strconv.ParseInt(current, 10, 64)
	return max64(limit-used, 0), true
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
