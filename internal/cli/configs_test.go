package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sweep"
)

// gpuMarker starts the first line of a shipped config that is for GPUs.
const gpuMarker = "# For GPUs:"

// cpuBudget is what a shipped config that is not marked for GPUs may take
// on the CPU backend (the estimate's upper end, builds aside).
const cpuBudget = time.Minute

// TestShippedConfigs: every file in configs/ either runs on the CPU
// backend in under a minute with every spec valid, or says in its first
// line that it is for GPUs and what it takes. Estimated, never run.
func TestShippedConfigs(t *testing.T) {
	exec, err := newTestSession(os.Stdout, os.Stderr).openExecutor(t.Context(), "cpu", "off")
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	dev := exec.Device()
	paths, _ := filepath.Glob("configs/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no configs/*.yaml")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			sw, err := sweep.Load(path, profiler.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			invalid, todo := 0, []profiler.Job{}
			for _, j := range sw.Jobs {
				if _, ok := run.Runnable(j, dev, nil); ok {
					todo = append(todo, j)
				} else {
					invalid++
				}
			}
			est := run.Estimate(todo, &dev)
			t.Logf("%s on the CPU: %d specs, %d invalid, %s", path, len(sw.Jobs), invalid, durationRange(est.Lo, est.Hi))
			if strings.HasPrefix(first, gpuMarker) {
				if len(first) < len(gpuMarker)+20 {
					t.Errorf("%s: the first line %q should say what the sweep takes", path, first)
				}
				return
			}
			if invalid > 0 || est.Hi > cpuBudget {
				t.Errorf("%s: on the CPU %d of %d specs are invalid and measuring takes %s: make it run on the CPU in under %s with every spec valid, or start it with %q and what it takes", path, invalid, len(sw.Jobs), durationRange(est.Lo, est.Hi), cpuBudget, gpuMarker+" …")
			}
		})
	}
}
