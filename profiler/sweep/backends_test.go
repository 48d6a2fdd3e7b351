package sweep

import (
	"testing"

	"github.com/mltop/mltop/backends"
	"github.com/mltop/mltop/profiler"
)

// A sweep file's backend: takes every name of the backend registry (and
// auto), and refuses another: adding a backend is one registry entry.
func TestBackendKeyFollowsTheRegistry(t *testing.T) {
	for _, name := range backends.Names() {
		src := "backend: " + name + "\nsweeps:\n  - kernel: test_scale\n"
		if _, err := Parse("s.yaml", []byte(src), profiler.DefaultOptions()); err != nil {
			t.Errorf("backend: %s is refused: %v", name, err)
		}
	}
	if _, err := Parse("s.yaml", []byte("backend: vulkan\nsweeps:\n  - kernel: test_scale\n"), profiler.DefaultOptions()); err == nil {
		t.Error("backend: vulkan is accepted")
	}
}
