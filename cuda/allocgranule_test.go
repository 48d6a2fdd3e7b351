package cuda

import (
	"strings"
	"sync"
	"testing"
)

func TestAllocGranule(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 2 << 20, false},
		{" 0 ", 0, false},
		{"4m", 4 << 20, false},
		{"64KiB", 64 << 10, false},
		{"65536", 65536, false},
		{"256", 256, false},
		{"128", 0, true},  // below 256
		{"3000", 0, true}, // not a power of two
		{"2g", 0, true},
		{"-2m", 0, true},
		{"lots", 0, true},
		{"m", 0, true},
	} {
		got, err := AllocGranule(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("AllocGranule(%q) = %d, %v; want %d, bad %v", c.in, got, err, c.want, c.bad)
		}
		if err != nil && !strings.Contains(err.Error(), AllocGranuleEnv) {
			t.Errorf("AllocGranule(%q): the error does not name the setting: %v", c.in, err)
		}
	}
}

func TestRoundAlloc(t *testing.T) {
	for _, c := range [][3]int64{{1, 2 << 20, 2 << 20}, {2 << 20, 2 << 20, 2 << 20}, {2<<20 + 1, 2 << 20, 4 << 20}, {8192, 0, 8192}, {300, 256, 512}} {
		if got := roundAlloc(c[0], c[1]); got != c[2] {
			t.Errorf("roundAlloc(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestWarnSettingsGranule(t *testing.T) {
	t.Setenv(AllocGranuleEnv, "3000")
	var b strings.Builder
	settingsWarning = sync.Once{}
	WarnSettings(&b)
	if got := b.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, `MLTOP_CUDA_ALLOC_GRANULE="3000"`) || !strings.Contains(got, "2097152") {
		t.Errorf("warning %q", got)
	}
}
