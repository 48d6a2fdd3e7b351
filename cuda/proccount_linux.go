package cuda

import (
	"os"
	"strconv"
	"strings"
)

// procGPUs lists one folder per GPU the NVIDIA driver has bound.
const procGPUs = "/proc/driver/nvidia/gpus"

// procDeviceCount counts the GPUs from the driver's folder under /proc
// instead of through cuInit, which initialises every GPU of the host (on
// a 4-GPU host, as long as a worker takes to start, before any worker
// could). It answers only when the answer is plain: no GPU bound to the
// driver there means ask CUDA; CUDA_VISIBLE_DEVICES, when set, must be
// ordinals below that count (UUIDs, MIG instances or anything else are
// left to CUDA's own rules).
func procDeviceCount(dir, visible string, visibleSet bool) (int, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	if !visibleSet {
		return n, true
	}
	if strings.TrimSpace(visible) == "" {
		return 0, false // set but empty: CUDA shows no device; let it say so
	}
	seen := map[int]bool{}
	for _, f := range strings.Split(visible, ",") {
		o, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || o < 0 || o >= n || seen[o] {
			return 0, false
		}
		seen[o] = true
	}
	return len(seen), true
}
