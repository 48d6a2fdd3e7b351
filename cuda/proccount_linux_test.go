package cuda

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestProcDeviceCount(t *testing.T) {
	dir := t.TempDir()
	for _, bus := range []string{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"} {
		os.Mkdir(filepath.Join(dir, bus), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "README"), nil, 0o644) // not a GPU
	cases := []struct {
		name    string
		dir     string
		visible string
		set     bool
		n       int
		ok      bool
	}{
		{"every GPU", dir, "", false, 4, true},
		{"ordinals", dir, "1,3", true, 2, true},
		{"ordinals with spaces", dir, " 0, 2 ,3", true, 3, true},
		{"an ordinal the host lacks: CUDA decides", dir, "0,4", true, 0, false},
		{"a UUID: CUDA decides", dir, "GPU-4ed814e6", true, 0, false},
		{"a MIG instance: CUDA decides", dir, "MIG-1", true, 0, false},
		{"repeated: CUDA decides", dir, "1,1", true, 0, false},
		{"set but empty: CUDA decides", dir, "", true, 0, false},
		{"no driver folder", filepath.Join(dir, "none"), "", false, 0, false},
		{"no GPU in it", t.TempDir(), "", false, 0, false},
	}
	for _, c := range cases {
		n, ok := procDeviceCount(c.dir, c.visible, c.set)
		if n != c.n || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.name, n, ok, c.n, c.ok)
		}
	}
}

// In a container given some GPUs, their list in NVIDIA_VISIBLE_DEVICES
// is what the process sees (CUDA ordinals 0 to n−1); CUDA_VISIBLE_DEVICES
// then picks among those as on a host.
func TestContainerDeviceCount(t *testing.T) {
	for _, c := range []struct {
		name, given, visible string
		set                  bool
		n                    int
		ok                   bool
	}{
		{"ordinals", "2,3", "", false, 2, true},
		{"UUIDs", "GPU-4ed814e6-aaaa, GPU-91c2-bbbb", "", false, 2, true},
		{"one", "5", "", false, 1, true},
		{"and CUDA_VISIBLE_DEVICES", "2,3,5", "0,2", true, 2, true},
		{"CUDA_VISIBLE_DEVICES beyond the list: CUDA decides", "2,3", "2", true, 0, false},
		{"a MIG instance: CUDA decides", "MIG-1c2d", "", false, 0, false},
		{"an index pair (MIG): CUDA decides", "0:1", "", false, 0, false},
		{"none: CUDA decides", "none", "", false, 0, false},
		{"void: CUDA decides", "void", "", false, 0, false},
		{"repeated: CUDA decides", "1,1", "", false, 0, false},
		{"an empty entry: CUDA decides", "1,", "", false, 0, false},
	} {
		dev := devDir(t, max(c.n, strings.Count(c.given, ",")+1))
		n, ok := containerDeviceCount(c.given, c.visible, c.set, dev)
		if n != c.n || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.name, n, ok, c.n, c.ok)
		}
	}
	// a host (every GPU's device file) where the variable was exported:
	// CUDA decides
	if n, ok := containerDeviceCount("0,1", "", false, devDir(t, 8)); ok {
		t.Errorf("8 GPU device files, a list of 2: %d, want CUDA to decide", n)
	}
	if _, ok := containerDeviceCount("0,1", "", false, filepath.Join(t.TempDir(), "none")); ok {
		t.Error("no /dev: want CUDA to decide")
	}
}

// devDir is a folder with n GPU device files and the others the driver
// makes (nvidiactl, nvidia-uvm, nvidia-caps).
func devDir(t *testing.T, n int) string {
	dir := t.TempDir()
	for _, name := range []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps", "null"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	for i := range n {
		os.WriteFile(filepath.Join(dir, "nvidia"+strconv.Itoa(i)), nil, 0o644)
	}
	return dir
}
