package cuda

import (
	"path/filepath"
	"testing"
)

// The compiled-kernel cache is $MLTOP_CUDA_CACHE, else mltop's cache
// folder's cuda/: $MLTOP_CACHE_DIR moves it with the rest of the cache.
func TestDefaultCacheDir(t *testing.T) {
	root, own := t.TempDir(), t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", root)
	t.Setenv(CacheEnv, "")
	if d := DefaultCacheDir(); d != filepath.Join(root, "cuda") {
		t.Errorf("MLTOP_CACHE_DIR=%s: the cache is %q, want its cuda/", root, d)
	}
	t.Setenv(CacheEnv, own)
	if d := DefaultCacheDir(); d != own {
		t.Errorf("%s=%s: the cache is %q", CacheEnv, own, d)
	}
}
