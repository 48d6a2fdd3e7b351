package run

import (
	"strings"
	"testing"
)

func TestCompileWorkersFor(t *testing.T) {
	for _, c := range []struct {
		cores, hostWorkers int
		override           string
		want               int
		warns              bool
	}{
		{cores: 2, want: 1},
		{cores: 1, want: 1},
		{cores: 16, want: 15},                 // a cold sweep waits on NVRTC: every core but the device thread's
		{cores: 16, hostWorkers: 1, want: 15}, // a worker of a one-GPU sweep
		{cores: 64, want: 16},                 // at most 16 compiles at once
		{cores: 16, hostWorkers: 4, want: 3},  // the cores shared, one left to each worker's device thread
		{cores: 64, hostWorkers: 4, want: 15},
		{cores: 4, hostWorkers: 8, want: 1},
		{cores: 16, override: "3", want: 3},
		{cores: 16, override: "40", want: 40}, // the user's count is not capped at the cores
		{cores: 16, override: "1024", want: 1024},
		{cores: 16, override: "20000", want: 15, warns: true}, // a locked thread each: past Go's 10000 threads the process dies
		{cores: 16, override: "0", want: 15, warns: true},
		{cores: 16, override: "many", want: 15, warns: true},
	} {
		n, warning := compileWorkersFor(c.cores, c.hostWorkers, c.override)
		if n != c.want || (warning != "") != c.warns {
			t.Errorf("compileWorkersFor(%d, %d, %q) = %d, %q; want %d, warning %v", c.cores, c.hostWorkers, c.override, n, warning, c.want, c.warns)
		}
		if c.warns && (!strings.Contains(warning, CompileThreadsEnv) || !strings.Contains(warning, c.override)) {
			t.Errorf("warning %q does not name %s and the value %q", warning, CompileThreadsEnv, c.override)
		}
	}
}
