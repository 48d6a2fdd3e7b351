package profiler_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// CacheDir is $MLTOP_CACHE_DIR when set, else the user cache folder's
// mltop, with sub joined; without either it says what to set.
func TestCacheDir(t *testing.T) {
	set := t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", set)
	if d, err := profiler.CacheDir("mslemu", "k"); err != nil || d != filepath.Join(set, "mslemu", "k") {
		t.Errorf("with MLTOP_CACHE_DIR: %q, %v", d, err)
	}
	if d, err := profiler.CacheDir(); err != nil || d != set {
		t.Errorf("no sub: %q, %v", d, err)
	}
	home := t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	t.Setenv("HOME", home)
	d, err := profiler.CacheDir("cuda")
	if err != nil || !strings.HasPrefix(d, home) || !strings.HasSuffix(d, filepath.Join("mltop", "cuda")) {
		t.Errorf("default: %q, %v (HOME %s)", d, err, home)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("LocalAppData", "")
	if d, err := profiler.CacheDir("cuda"); err == nil || !strings.Contains(err.Error(), "MLTOP_CACHE_DIR") {
		t.Errorf("no home: %q, %v", d, err)
	}
}
