package cuda

import (
	"os"
	"path/filepath"
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
