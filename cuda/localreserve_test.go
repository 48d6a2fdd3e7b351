package cuda

import (
	"strings"
	"sync"
	"testing"
)

func TestLocalReserve(t *testing.T) {
	const h200, h100, small = 150_000_000_000, 85_000_000_000, 8_000_000_000
	const hopper = 132 * 2048
	for _, c := range []struct {
		setting string
		mem     int64
		threads int
		want    int
		wantErr bool
	}{
		{"", h200, hopper, DefaultLocalReserve, false},
		{"", h100, hopper, 6 << 10, false},     // 2% of 85 GB: 6.3 KiB
		{"16k", h200, hopper, 10 << 10, false}, // 2% of 150 GB over 270k threads: 10.8 KiB
		{"16KiB", h200, hopper, 10 << 10, false},
		{"4096", h200, hopper, 4096, false},
		{"5000", h200, hopper, 4096, false}, // whole KiB
		{"0", h200, hopper, 0, false},
		{"", small, 46 * 1536, 2 << 10, false}, // 160 MB over 70k threads: 2.2 KiB
		{"", 100_000_000, hopper, 0, false},    // under 1 KiB a thread: nothing
		{"", h200, 0, 0, false},
		{"lots", h200, hopper, 0, true},
		{"-1", h200, hopper, 0, true},
		{"2m", h200, hopper, 0, true},
	} {
		got, err := LocalReserve(c.setting, c.mem, c.threads)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("LocalReserve(%q, %d, %d) = %d, %v; want %d (error %v)", c.setting, c.mem, c.threads, got, err, c.want, c.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), LocalReserveEnv) {
			t.Errorf("error %q does not name %s", err, LocalReserveEnv)
		}
	}
}

// A bad setting is said once, naming the value and the default taken; a
// good one says nothing.
func TestWarnSettings(t *testing.T) {
	t.Setenv(LocalReserveEnv, "lots")
	var b strings.Builder
	settingsWarning = sync.Once{}
	WarnSettings(&b)
	WarnSettings(&b)
	if got := b.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, `MLTOP_CUDA_LOCAL_RESERVE="lots"`) || !strings.Contains(got, "8192") {
		t.Errorf("warning %q", got)
	}
	t.Setenv(LocalReserveEnv, "16k")
	b.Reset()
	settingsWarning = sync.Once{}
	if WarnSettings(&b); b.Len() != 0 {
		t.Errorf("a good setting warned: %q", b.String())
	}
}
