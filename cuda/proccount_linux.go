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
	return visibleCount(n, visible, visibleSet)
}

// containerDeviceCount counts the GPUs a container was given in its
// NVIDIA_VISIBLE_DEVICES list (ordinals or GPU UUIDs, as the container
// runtime takes them: the container sees exactly those, as CUDA ordinals
// 0 to n−1), then as procDeviceCount does with CUDA_VISIBLE_DEVICES. MIG
// instances, "none", "void" or anything else are left to CUDA, and so is
// a list that does not match the GPU device files in devDir (the runtime
// mounts one per GPU given: a host where someone exported the variable
// has all of them).
func containerDeviceCount(given, visible string, visibleSet bool, devDir string) (int, bool) {
	seen := map[string]bool{}
	for _, f := range strings.Split(given, ",") {
		f = strings.TrimSpace(f)
		_, err := strconv.Atoi(f)
		if seen[f] || err != nil && !strings.HasPrefix(f, "GPU-") {
			return 0, false
		}
		seen[f] = true
	}
	if gpuDeviceFiles(devDir) != len(seen) {
		return 0, false
	}
	return visibleCount(len(seen), visible, visibleSet)
}

// gpuDeviceFiles counts the files nvidia0, nvidia1, … in dir.
func gpuDeviceFiles(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), "nvidia"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			n++
		}
	}
	return n
}

// visibleCount is how many of n GPUs CUDA_VISIBLE_DEVICES leaves, when it
// is a plain list of ordinals below n (ok false: let CUDA decide).
func visibleCount(n int, visible string, visibleSet bool) (int, bool) {
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
